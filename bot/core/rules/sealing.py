"""What the handlers write for seals and attempts (``bot.core.seals``, ``bot.core.attempts``):
the seal a submission makes, the review a decision leaves, and the record of an attempt that
ends."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from bot.core.attempts import AttemptRecord, DecisionRecord, kept, logged
from bot.core.events.decisions import CheckpointDecided
from bot.core.policy import Checkpoint
from bot.core.quest import Quest
from bot.core.seals import Seal, make_seal, with_seal
from bot.core.unvalidated import make


def sealed(q: Quest, gate: Checkpoint, submission: str,
           artifacts: dict[str, object]) -> tuple[Seal, ...]:
    """The quest's seals with ``gate`` sealed over ``artifacts`` by ``submission``."""
    return with_seal(q.seals, make_seal(gate, q.revision, q.attempt_number, submission,
                                        artifacts))


def plan_artifacts(q: Quest, plan: str, risk: str) -> dict[str, object]:
    """The plan's artifacts, in name order (``make_seal``); the command as the tuple it is,
    which canonical JSON writes as the list it was received as."""
    return {"plan": {"summary": plan, "risk": risk},
            "reproduction": {"check": q.reproduction, "command": q.reproduction_command}}


def reviewed(q: Quest, e: CheckpointDecided, *,
             recorded_only: bool) -> tuple[DecisionRecord, ...]:
    """The attempt's reviews with this decision added, pinned to the gate's seal."""
    seal = q.seal(e.checkpoint)
    record = make(DecisionRecord, {
        "gate": e.checkpoint, "verdict": e.verdict, "actor": e.actor, "automatic": e.automatic,
        "recorded_only": recorded_only, "reason": e.reason,
        "seal": seal.digest if seal is not None else None, "event": e.id, "at": e.at})
    return kept(q.attempt_reviews, record)


def next_attempt(q: Quest, ended_by: str, reason: str, at: datetime, *,
                 reviews: tuple[DecisionRecord, ...] | None = None) -> dict[str, Any]:
    """The changes that close the attempt under way, on record, and start the next one;
    ``reviews``: the attempt's reviews with the decision that ends it."""
    proof = q.proof
    record = make(AttemptRecord, {
        "number": q.attempt_number, "revision": q.revision, "hypothesis": q.hypothesis,
        "reproduction": q.reproduction, "plan": q.plan, "head": q.head,
        "proof_digest": proof.proof_digest if proof is not None else None,
        "proof_attempts": q.attempts, "seals": q.seals,
        "reviews": q.attempt_reviews if reviews is None else reviews,
        "ended_by": ended_by, "reason": reason, "ended_at": at})
    return {"attempt_number": q.attempt_number + 1, "attempt_reviews": (),
            "attempt_log": logged(q.attempt_log, record)}
