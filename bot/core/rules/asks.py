"""What handlers share: the shapes of their answers, the refusal, and the effects they ask for.

Payloads hold plain values only, written flat (``EffectLog`` says why): a snapshot sits beside
its checkpoint rather than inside it.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

from bot.core.effects import EffectType as E
from bot.core.errors import InvalidTransition, Refusal
from bot.core.events import Event
from bot.core.events.base import _Event
from bot.core.policy import Checkpoint, Policy
from bot.core.quest import ParkReason, Quest
from bot.core.states import CHECKPOINT_AT, State

S = State
Ask = tuple[E, dict[str, Any]]
Asks = list[Ask]
Result = tuple[Quest, Asks]
Handler = Callable[[Quest, Any, Policy], Result]
Refused = tuple[str, Refusal]
"""A reason and its code, for ``refuse`` and for ``lifecycle.accepts``."""
Precondition = Callable[[Quest, str | None], Refused | None]
"""What the quest's record (and the actor) must allow before a cell applies, payload aside."""
FollowUp = Callable[[Quest, Any], Event | None]
"""Given the quest an event left and the event, the move of questbot's own that follows it at
once, or ``None``."""

STAGE_OF = {S.RESEARCHING: "research", S.REPRODUCING: "reproduce", S.PATCHING: "patch"}
"""The agent stage each agent state runs."""


def stage_of(q: Quest) -> str:
    """The agent stage a quest in an agent state runs: in ``reproducing`` with a reproduction
    recorded, the reproduction stands and the agent writes a new plan (revise at B)."""
    if q.state is S.REPRODUCING and q.reproduction is not None:
        return "plan"
    return STAGE_OF[q.state]


def rebase(q: Quest) -> Ask:
    return (E.REBASE, {"base": q.base, "head": q.head})

_MINUTES: dict[int, timedelta] = {}


def minutes(n: int) -> timedelta:
    """``timedelta(minutes=n)``, made once per ``n``: its keyword constructor costs more than
    the rest of a watch deadline, and every ``landed`` computes one."""
    span = _MINUTES.get(n)
    if span is None:
        span = _MINUTES[n] = timedelta(minutes=n)
    return span


def refuse(q: Quest | None, e: _Event, reason: str, code: Refusal = Refusal.UNDEFINED) -> None:
    state = q.state.value if q is not None else "none"
    raise InvalidTransition(state, e.type, reason, code)  # type: ignore[attr-defined]


def park(q: Quest, reason: ParkReason, resume: State, **changes: Any) -> Quest:
    return q.evolve({"state": S.PARKED, "park_reason": reason, "resume_state": resume,
                     "park_note": None, **changes})


def checkpoint_request(q: Quest, checkpoint: Checkpoint, p: Policy) -> Ask:
    """The snapshot the reviewers are asked to decide on, beside the checkpoint."""
    proof = q.proof
    seal = q.seal(checkpoint)
    return (
        E.REQUEST_CHECKPOINT,
        {
            "checkpoint": checkpoint._value_,  # its value, without the enum property's cost
            "blocking": p.blocking(checkpoint),
            "shadow": p.shadow,
            "revision": q.revision,
            "head": q.head,
            "base": q.base,
            "proof_digest": proof.proof_digest if proof is not None else None,
            "seal": seal.digest if seal is not None else None,
        },
    )


def start(stage: str, **extra: Any) -> Ask:
    return (E.START_AGENT, {"stage": stage, **extra})


def land(q: Quest) -> Ask:
    """``land`` carries the approved snapshot, flat: the merge is pinned to its head."""
    approval = q.approved
    assert approval is not None  # guarded by every caller: the approval stands
    return (E.LAND, {"head": approval.head, "base": approval.base,
                     "revision": approval.revision, "proof_digest": approval.proof_digest})


def proof_request(q: Quest) -> dict[str, Any]:
    return {"head": q.head, "base": q.base, "revision": q.revision, "risk": str(q.risk),
            "attempt": q.attempts, "reproduction": q.reproduction,
            "reproduction_command": list(q.reproduction_command)}


def enter(q: Quest, p: Policy) -> Asks:
    """The work a state asks for when a quest (re-)enters it after a pause or a release."""
    state = q.state
    if state is S.PATCHING and q.rebasing:
        return [rebase(q)]
    if state in STAGE_OF:
        return [start(stage_of(q), resumed=True)]
    if state in CHECKPOINT_AT:
        return [checkpoint_request(q, CHECKPOINT_AT[state], p)]
    if state is S.PROVING:
        return [(E.RUN_PROOF, proof_request(q))]
    if state is S.LANDING:
        return [land(q)]
    if state is S.WATCHING:
        return [(E.START_WATCH, {"window_minutes": p.watch_window_minutes, "resumed": True})]
    if state is S.ROLLED_BACK:
        return [(E.ROLLBACK, {"merge_sha": q.merge_sha})]
    if state is S.SENSED:
        return [(E.RUN_TRIAGE, {"fingerprint": q.fingerprint})]
    if state is S.TRIAGED:
        return [(E.NOTIFY_INBOX, {"reason": "waiting for a person to start it"})]
    return []
