"""questbot: quests from failing checks, driven by people at three checkpoints."""
