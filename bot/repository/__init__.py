"""The repository's own life: archived, removed from the App, the App suspended or uninstalled,
renamed, the quest's branch deleted — and what each does to the live quests there."""
