"""Sealed evidence (the gates): the digests of a gate's artifact set, fixed by the move
that submits it — the hypothesis entering checkpoint A, the plan entering B, the bound proof
entering C — and written with that move's quest in the journal's one atomic apply.

Why on the quest: the journal writes a quest's snapshot and its entries in one Lua script, so a
seal that is a field of the quest cannot be out of step with the state it was sealed with, and
every reader (``status_and_next``, the status comment, a reviewer's pinned evidence) gets it
from the snapshot it already reads. Nothing else writes a seal: a new ``reproduced``, a pushed
head or a person's commit changes the quest's fields, never a seal, until the artifact is
submitted to its gate again — which makes a new seal (a new digest, even for the same text:
the submission's event id is part of it), so decisions pinned to the old one are refused as
stale (``rules.checkpoints``).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping

import orjson
from pydantic import BaseModel, ConfigDict

from bot.core.canonical import canonical_digest
from bot.core.policy import Checkpoint
from bot.core.unvalidated import make

ARTIFACTS: dict[Checkpoint, tuple[str, ...]] = {
    Checkpoint.A: ("hypothesis",),
    Checkpoint.B: ("plan", "reproduction"),
    Checkpoint.C: ("patch", "proof"),
}
"""The artifact set each gate seals (the evidence ``gates.REQUIRED`` asks for), in name
order."""

SUBMISSIONS: dict[str, Checkpoint] = {
    "hypothesis_written": Checkpoint.A,
    "plan_written": Checkpoint.B,
    "proof_completed": Checkpoint.C,
}
"""The event types that submit a gate's artifacts, and so the only ones that seal."""


class Seal(BaseModel):
    """One gate's sealed artifact set."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    gate: Checkpoint
    revision: int
    attempt: int
    """``Quest.attempt_number`` when it was sealed."""
    submission: str
    """The id of the event that submitted the artifacts."""
    artifacts: dict[str, str]
    """Artifact name → the SHA-256 of its canonical JSON (a proof: the bundle's own digest)."""
    digest: str
    """The seal's identity: the SHA-256 of all of the above. Decisions pin it."""


def make_seal(gate: Checkpoint, revision: int, attempt: int, submission: str,
              artifacts: Mapping[str, object]) -> Seal:
    """Seal ``artifacts`` for ``gate``, given in name order: each a JSON value (digested as
    canonical JSON), or a ``str`` that is a digest already (a proof's). The seal's own digest
    is the SHA-256 of ``<gate>\n<revision>\n<attempt>\n<submission>`` and a
    ``\n<name>=<digest>`` per artifact — a line format, not JSON: every step through a gate
    makes one, and the fold's budget is a few microseconds an event (hence the digests inline
    rather than by ``artifact_digest``, and the record made unvalidated)."""
    digests: dict[str, str] = {}
    text = f"{gate._value_}\n{revision}\n{attempt}\n{submission}"
    for name, value in artifacts.items():
        if value.__class__ is str:
            digest = value
        else:
            try:
                digest = _sha256(_dumps(value, option=_SORTED)).hexdigest()
            except (TypeError, orjson.JSONEncodeError):
                digest = canonical_digest(value)
        digests[name] = digest
        text = f"{text}\n{name}={digest}"
    return make(Seal, {"gate": gate, "revision": revision, "attempt": attempt,
                       "submission": submission, "artifacts": digests,
                       "digest": _sha256(text.encode()).hexdigest()})


def artifact_digest(value: object) -> str:
    """``canonical_digest(value)``, by ``orjson``: the same bytes for the values seals digest
    (mappings of text, ``None``, whole numbers and lists of text — ``tests/core/test_seals.py``
    holds them equal), at a fifth of the cost; ``make_seal`` does the same inline."""
    try:
        return _sha256(_dumps(value, option=_SORTED)).hexdigest()
    except (TypeError, orjson.JSONEncodeError):
        return canonical_digest(value)  # what orjson would write differently, or not at all


_SORTED = orjson.OPT_SORT_KEYS
_dumps = orjson.dumps
_sha256 = hashlib.sha256


def with_seal(seals: tuple[Seal, ...], seal: Seal) -> tuple[Seal, ...]:
    """``seals`` with ``seal`` replacing its gate's, in gate order (at most three: a loop
    over them beats a sort)."""
    gate = seal.gate
    order = gate._value_
    for i, s in enumerate(seals):
        if s.gate is gate:
            return (*seals[:i], seal, *seals[i + 1:])
        if s.gate._value_ > order:
            return (*seals[:i], seal, *seals[i:])
    return (*seals, seal)


def seal_of(seals: tuple[Seal, ...], gate: Checkpoint) -> Seal | None:
    for s in seals:
        if s.gate is gate:
            return s
    return None
