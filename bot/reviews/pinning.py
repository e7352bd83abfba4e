"""Pure: what a review pins from a quest, and whether a pinned review is still current.

The artifacts are read from the quest record (``gates.REQUIRED`` names them per gate) and
digested here, beside the gate's seal (``bot.core.seals``): the digests the move that
submitted them fixed, which the decision a review routes carries to the core. The currency check is
the same rule the core applies to every decision (``Quest.shows``), plus the artifact digests
and the gate itself, so a review that passes it is one the core accepts on the same grounds as
a person's ``/approve``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping

from bot.core.gates import GATE_STATE, REQUIRED
from bot.core.policy import Checkpoint
from bot.core.quest import Quest
from bot.reviews.models import PinnedEvidence, PinnedSnapshot, ReviewRecord

CONTEXT_LIMIT = 4000
"""Characters of any one context field a reviewer gets: bounded, so a quest's title or
hypothesis cannot flood the reviewer's prompt."""


def artifact_text(quest: Quest, name: str) -> str:
    """One artifact as the quest holds it ('' when absent)."""
    if name == "hypothesis":
        return quest.hypothesis or ""
    if name == "reproduction":
        if not quest.reproduction:
            return ""
        command = " ".join(quest.reproduction_command)
        return f"{quest.reproduction}\n{command}".rstrip()
    if name == "plan":
        return quest.plan or ""
    if name == "patch":
        return quest.head or ""
    if name == "proof":
        proof = quest.proof
        return proof.proof_digest or "" if proof is not None and quest.proof_bound else ""
    raise ValueError(f"no artifact is called {name!r}")


def digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def pinned_snapshot(quest: Quest, checkpoint: Checkpoint) -> PinnedSnapshot:
    sealed = quest.seal(checkpoint)
    return PinnedSnapshot(core=quest.snapshot,
                          artifacts=tuple((name, digest(artifact_text(quest, name)))
                                          for name in REQUIRED[checkpoint]),
                          seal=sealed.digest if sealed is not None else None)


def pin(quest: Quest, checkpoint: Checkpoint,
        extra: Mapping[str, str] | None = None) -> PinnedEvidence:
    """The gate's artifacts and the bounded context a reviewer of ``checkpoint`` works from;
    ``extra`` is context read elsewhere (at C, what the proof printed: ``proof_context``)."""
    artifacts = {name: artifact_text(quest, name) for name in REQUIRED[checkpoint]}
    context = {"title": quest.title, "failure": f"{quest.kind.value} {quest.fingerprint}",
               "hypothesis": quest.hypothesis or ""}
    if checkpoint is Checkpoint.C:
        context["approved plan"] = quest.plan or ""
        context["reproduction"] = artifact_text(quest, "reproduction")
    context.update(extra or {})
    bounded = {k: v[:CONTEXT_LIMIT] for k, v in context.items() if v and k not in artifacts}
    return PinnedEvidence(snapshot=pinned_snapshot(quest, checkpoint), artifacts=artifacts,
                          context=bounded)


def open_gate(quest: Quest) -> Checkpoint | None:
    """The gate open now: the quest's checkpoint state, or through a claim the one it came
    from."""
    state = quest.checkpoint_state
    return next((c for c, s in GATE_STATE.items() if s is state), None)


def currency(record: ReviewRecord, quest: Quest | None) -> str | None:
    """Why ``record`` no longer counts against ``quest`` as it is now, or ``None``."""
    if quest is None:
        return "the quest no longer exists"
    if open_gate(quest) is not record.checkpoint:
        return (f"checkpoint {record.checkpoint.value} is no longer open; the quest is at "
                f"{quest.state.value.replace('_', ' ')}")
    if not quest.shows(record.pinned.snapshot.core):
        return ("the quest changed since this review was requested (revision, head, base or "
                "proof); request a new review")
    if pinned_snapshot(quest, record.checkpoint) != record.pinned.snapshot:
        return "the evidence under review changed since it was pinned; request a new review"
    return None
