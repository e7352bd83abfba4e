"""The policy a quest is stepped under: checkpoint modes, shadow mode and limits.

A policy is data, supplied with every step, so replaying a journal with the same policy gives
the same decisions. Repository settings (``.github/questbot.yml``) are turned into one.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from bot.core.names import Name


class Checkpoint(Name):
    A = "A"  # hypothesis written
    B = "B"  # reproduced and planned
    C = "C"  # proof complete


class CheckpointMode(BaseModel):
    """``blocking`` waits for a person; advisory advances only on an automatic decision."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    blocking: bool = True


class Policy(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    checkpoints: dict[Checkpoint, CheckpointMode] = Field(
        default_factory=lambda: {c: CheckpointMode() for c in Checkpoint}
    )
    shadow: bool = False
    """Automatic decisions are recorded and never advance the quest."""
    max_attempts: int = Field(default=3, ge=1, le=100)
    """Proof attempts before a quest parks."""
    mute_hours: int = Field(default=24, ge=1)
    """How long an ignored fingerprint stays muted."""
    max_live_quests: int = Field(default=7, ge=1)
    watch_window_minutes: int = Field(default=60, ge=1)
    budget_cents: int | None = Field(default=None, ge=1)
    """Model spend, in US cents, a quest may reach before an agent stage starts only with a
    person's approval (``rules.budget``); each approval pays for as much again. ``None``: no
    budget — what a policy recorded before budgets existed means, so an old journal replays
    as it was decided. The repository's settings always give one (``budget.usd``)."""
    budget_tokens: int | None = Field(default=None, ge=1)
    """The same in model tokens, for models with no price (a local model costs nothing)."""

    def blocking(self, checkpoint: Checkpoint) -> bool:
        mode = self.checkpoints.get(checkpoint)
        return True if mode is None else mode.blocking
