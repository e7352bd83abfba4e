"""The proof bundle: what the proof runner submits and the core binds a quest to.

The core checks that a bundle names this quest, its revision, risk, base and head, and that
the digest it came with is the canonical SHA-256 of exactly this bundle (see
``bot.core.canonical``). That binds a submitted bundle; it does not attest that its commands
ran — the proof runner and its records do that.
"""

from __future__ import annotations

import hashlib
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from bot.core.names import Name


class Risk(Name):
    LOW = "low"
    MEDIUM = "medium"
    HIGH = "high"


# The fields of the three models below are declared in sorted order on purpose: pydantic then
# writes a bundle's compact JSON in canonical key order (see ``ProofBundle.canonical_json``).


class CheckRecord(BaseModel):
    """One command the proof ran, with the digest of what it printed."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    command: tuple[str, ...]
    exit_code: int
    name: str
    output_sha256: str = Field(pattern=r"^[0-9a-f]{64}$")

    @property
    def passed(self) -> bool:
        return self.exit_code == 0


class Reproduction(BaseModel):
    """The reproduction check: it must fail on the base and pass on the head."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    base_exit_code: int
    command: tuple[str, ...]
    head_exit_code: int
    name: str

    @property
    def confirmed(self) -> bool:
        return self.base_exit_code != 0 and self.head_exit_code == 0


class ProofBundle(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    base: str
    checks: tuple[CheckRecord, ...] = ()
    head: str
    quest_id: str
    reproduction: Reproduction | None = None
    revision: int = Field(ge=1)
    risk: Risk

    def as_json(self) -> dict[str, Any]:
        return self.model_dump(mode="json")

    def digest(self) -> str:
        """The canonical digest the proof runner sends alongside the bundle."""
        return hashlib.sha256(self.canonical_json()).hexdigest()

    def canonical_json(self) -> bytes:
        """``canonical_json(self.as_json())``, written by pydantic's own serializer.

        The core recomputes this for every ``proof_completed``, and the generic route (a
        pydantic dump, then a sorted ``json.dumps``) cost an eighth of a replay's time. Because
        every field of the bundle and its parts is declared in sorted order, pydantic's compact
        JSON already has canonical key order, separators and UTF-8 text, escaping exactly as
        ``json`` does. ``tests/core/test_canonical.py`` holds this equal to the generic form for
        arbitrary text and integers, and fails when a field is declared out of order.
        """
        return _to_json(self)

    @property
    def all_passed(self) -> bool:
        """Every check passed and, when there is a reproduction, it was confirmed."""
        for check in self.checks:  # a loop, not ``all(...)``: every proof_completed asks
            if not check.passed:
                return False
        return self.reproduction is None or self.reproduction.confirmed


_to_json = ProofBundle.__pydantic_serializer__.to_json
