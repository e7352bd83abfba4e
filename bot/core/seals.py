"""Sealed evidence (seed 003, "Gates"): the digests of a gate's artifact set, fixed by the move
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

from collections.abc import Mapping

from pydantic import BaseModel, ConfigDict

from bot.core.canonical import canonical_digest
from bot.core.policy import Checkpoint

ARTIFACTS: dict[Checkpoint, tuple[str, ...]] = {
    Checkpoint.A: ("hypothesis",),
    Checkpoint.B: ("reproduction", "plan"),
    Checkpoint.C: ("patch", "proof"),
}
"""The artifact set each gate seals (the evidence ``gates.REQUIRED`` asks for)."""

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
    """Seal ``artifacts`` (name → JSON value; a ``str`` digest is kept as it is) for ``gate``."""
    assert tuple(sorted(artifacts)) == tuple(sorted(ARTIFACTS[gate])), (gate, artifacts)
    digests = {name: value if _is_digest(value) else canonical_digest(value)
               for name, value in sorted(artifacts.items())}
    digest = canonical_digest({"gate": gate.value, "revision": revision, "attempt": attempt,
                               "submission": submission, "artifacts": digests})
    return Seal(gate=gate, revision=revision, attempt=attempt, submission=submission,
                artifacts=digests, digest=digest)


def _is_digest(value: object) -> bool:
    return (isinstance(value, str) and len(value) == 64
            and all(c in "0123456789abcdef" for c in value))


def with_seal(seals: tuple[Seal, ...], seal: Seal) -> tuple[Seal, ...]:
    """``seals`` with ``seal`` replacing its gate's, in gate order."""
    kept = [s for s in seals if s.gate is not seal.gate]
    return tuple(sorted([*kept, seal], key=lambda s: s.gate.value))


def seal_of(seals: tuple[Seal, ...], gate: Checkpoint) -> Seal | None:
    for s in seals:
        if s.gate is gate:
            return s
    return None
