"""The proof bundle: what the proof runner submits and the core binds a quest to.

The core checks that a bundle names this quest, its revision, risk, base and head, and that
the digest it came with is the canonical SHA-256 of exactly this bundle (see
``bot.core.canonical``). That binds a submitted bundle; it does not attest that its commands
ran — the proof runner and its records do that.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from bot.core.canonical import canonical_digest
from bot.core.names import Name


class Risk(Name):
    LOW = "low"
    MEDIUM = "medium"
    HIGH = "high"


class CheckRecord(BaseModel):
    """One command the proof ran, with the digest of what it printed."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    command: tuple[str, ...]
    exit_code: int
    output_sha256: str = Field(pattern=r"^[0-9a-f]{64}$")

    @property
    def passed(self) -> bool:
        return self.exit_code == 0


class Reproduction(BaseModel):
    """The reproduction check: it must fail on the base and pass on the head."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    command: tuple[str, ...]
    base_exit_code: int
    head_exit_code: int

    @property
    def confirmed(self) -> bool:
        return self.base_exit_code != 0 and self.head_exit_code == 0


class ProofBundle(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    quest_id: str
    revision: int = Field(ge=1)
    risk: Risk
    base: str
    head: str
    checks: tuple[CheckRecord, ...] = ()
    reproduction: Reproduction | None = None

    def as_json(self) -> dict[str, Any]:
        return self.model_dump(mode="json")

    def digest(self) -> str:
        """The canonical digest the proof runner sends alongside the bundle."""
        return canonical_digest(self.as_json())

    @property
    def all_passed(self) -> bool:
        """Every check passed and, when there is a reproduction, it was confirmed."""
        checks_ok = all(check.passed for check in self.checks)
        return checks_ok and (self.reproduction is None or self.reproduction.confirmed)
