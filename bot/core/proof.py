"""The proof bundle: what the proof runner submits and the core binds a quest to.

The core checks that a bundle names this quest, its revision, risk, base and head, and that
the digest it came with is the canonical SHA-256 of exactly this bundle (see
``bot.core.canonical``). That binds a submitted bundle; it does not attest that its commands
ran — the proof runner and its records do that.
"""

from __future__ import annotations

import hashlib
from json.encoder import encode_basestring as _str
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from bot.core.names import Name

_int = int.__repr__


def _strings(values: tuple[str, ...]) -> str:
    return "[" + ",".join(map(_str, values)) + "]"


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
        return hashlib.sha256(self.canonical_json()).hexdigest()

    def canonical_json(self) -> bytes:
        """``canonical_json(self.as_json())``, written out field by field in sorted key order.

        The core recomputes this for every ``proof_completed``; the generic route (a pydantic
        dump, then a sorted ``json.dumps``) costs three times as much and was an eighth of a
        replay's time. Strings go
        through ``json``'s own encoder function for ``ensure_ascii=False``, integers through
        ``int.__repr__`` as ``json`` writes them (validation leaves exact ``int`` and ``str``).
        ``tests/core/test_canonical.py`` holds this equal to the generic form, and fails when a
        field is added here or in ``CheckRecord`` or ``Reproduction`` without being written.
        """
        checks = ",".join(
            f'{{"command":{_strings(c.command)},"exit_code":{_int(c.exit_code)},'
            f'"name":{_str(c.name)},"output_sha256":{_str(c.output_sha256)}}}'
            for c in self.checks
        )
        r = self.reproduction
        reproduction = "null" if r is None else (
            f'{{"base_exit_code":{_int(r.base_exit_code)},"command":{_strings(r.command)},'
            f'"head_exit_code":{_int(r.head_exit_code)},"name":{_str(r.name)}}}'
        )
        return (
            f'{{"base":{_str(self.base)},"checks":[{checks}],"head":{_str(self.head)},'
            f'"quest_id":{_str(self.quest_id)},"reproduction":{reproduction},'
            f'"revision":{_int(self.revision)},"risk":{_str(self.risk)}}}'
        ).encode()

    @property
    def all_passed(self) -> bool:
        """Every check passed and, when there is a reproduction, it was confirmed."""
        checks_ok = all(check.passed for check in self.checks)
        return checks_ok and (self.reproduction is None or self.reproduction.confirmed)
