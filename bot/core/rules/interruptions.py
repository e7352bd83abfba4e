"""What interrupts the main line: people pausing, resuming and killing a quest, and the forge
moving under it — a person pushing to the quest's branch, the base branch moving on.

A person's push and a base change make proof and approvals stale (``PROOF_BOUND_STATES``);
a parked quest is told so for when it resumes, rather than moved. A person's push while the
agent researches or reproduces restarts that stage on their head (the running one stops
itself once the revision changes); a base change sends proved work back to be rebased, which
costs no proof attempt (``Quest.rebasing``).
"""

from __future__ import annotations

from typing import Any

from bot.core.effects import EffectType as E
from bot.core.errors import Refusal
from bot.core.events.decisions import HumanRevision, Killed, Paused, Resumed
from bot.core.events.landing import BaseMoved
from bot.core.policy import Policy
from bot.core.quest import Outcome, ParkReason, Quest
from bot.core.rules.asks import (
    Asks,
    Refused,
    Result,
    enter,
    park,
    proof_request,
    rebase,
    refuse,
    stage_of,
    start,
)
from bot.core.states import AGENT_STATES, PROOF_BOUND_STATES, State

S = State
_WORK_PARKS = frozenset({ParkReason.PAUSED, ParkReason.ATTEMPTS_EXHAUSTED,
                         ParkReason.CANNOT_REPRODUCE})
"""Parks that resume into work a person's push can replace with proving their head."""
_RESTARTS = frozenset({S.RESEARCHING, S.REPRODUCING})
"""Agent stages a person's push restarts on their head, rather than proving it."""


# people stopping and starting work


def paused(q: Quest, e: Paused, _p: Policy) -> Result:
    asks: Asks = [(E.STOP_AGENT, {"reason": "paused"})] if q.state in AGENT_STATES else []
    if e.repository:  # the repository changed under it: nobody paused it, everyone is told
        asks.append((E.NOTIFY_INBOX, {"reason": ""}))  # its entry shows the note already
        return park(q, ParkReason.REPOSITORY_CHANGED, q.state, park_note=e.repository), asks
    return park(q, ParkReason.PAUSED, q.state), asks


def may_resume(q: Quest, _actor: str | None) -> Refused | None:
    """Finished research does not resume; ``/quest fix`` turns it into a fix."""
    if q.park_reason is ParkReason.RESEARCH_COMPLETE:
        return ("this research-only quest is complete; /quest fix turns it into a fix",
                Refusal.UNDEFINED)
    if q.park_reason is ParkReason.BUDGET_REACHED and q.spend_ask is not None:
        return ("its budget is spent and a spend request waits: /approve spend pays for "
                "more, /deny spend stops here", Refusal.UNDEFINED)
    return None


def resumed(q: Quest, e: Resumed, p: Policy) -> Result:
    why = may_resume(q, e.actor)
    if why is not None:
        refuse(q, e, *why)
    reason = q.park_reason
    target = q.resume_state or S.RESEARCHING
    changes: dict[str, Any] = {"state": target, "park_reason": None, "resume_state": None,
                               "park_note": None}
    if reason is ParkReason.ATTEMPTS_EXHAUSTED:
        changes["attempts"] = 0  # a person gives it a fresh set of attempts
    nq = q.evolve(changes)
    if target is S.LANDING and not nq.c_approval_counts:
        nq = nq.evolve({"state": S.READY, "c_approval": None})
    return nq, enter(nq, p)


def killed(q: Quest, e: Killed, _p: Policy) -> Result:
    asks: Asks = [(E.STOP_AGENT, {"reason": "killed"})] if q.state in AGENT_STATES else []
    return q.evolve({"state": S.ABANDONED, "outcome": Outcome.KILLED, "owner": None}), asks


# the forge moving under the quest


def human_revision(q: Quest, e: HumanRevision, _p: Policy) -> Result:
    if e.head == q.head or q.merge_sha is not None:
        return q, []  # landed: a push to the merged branch is not its work (paused in the watch)
    q = q.evolve({"head": e.head, "head_pusher": e.pusher, "revision": q.revision + 1,
                  "proof": None, "c_approval": None, "rebasing": False})
    state = q.checkpoint_state
    if state is S.PARKED:
        if q.park_reason in _WORK_PARKS:  # /resume will prove the person's head
            return q.evolve({"resume_state": S.PROVING, "owner": None,
                             "claimed_from": None}), []
        return q, []
    if state in _RESTARTS:  # the stage starts again, on the person's head
        return q, [(E.STOP_AGENT, {"reason": "a person pushed"}),
                   start(stage_of(q), pushed=e.head)]
    if state not in PROOF_BOUND_STATES and state is not S.PATCHING:
        return q, []
    asks: Asks = [(E.STOP_AGENT, {"reason": "a person pushed"})] if state is S.PATCHING else []
    if q.state is S.HANDED_OFF:
        nq = q.evolve({"claimed_from": S.PROVING})
    else:
        nq = q.evolve({"state": S.PROVING})
    return nq, [*asks, (E.RUN_PROOF, proof_request(nq))]


def base_moved(q: Quest, e: BaseMoved, _p: Policy) -> Result:
    if e.base == q.base or q.merge_sha is not None:
        return q, []  # landed: the base moves on from the merge; what landed is what reverts
    q = q.evolve({"base": e.base, "c_approval": None})
    if q.state is S.PARKED:
        held = q.claimed_from if q.resume_state is S.HANDED_OFF else q.resume_state
        if held in PROOF_BOUND_STATES:  # the proof is for the old base: rebase on resume
            return q.evolve({"resume_state": S.PATCHING, "proof": None, "rebasing": True,
                             "owner": None, "claimed_from": None}), []
        return q, []
    if q.checkpoint_state not in PROOF_BOUND_STATES:
        return q, []
    nq = q.evolve({"state": S.PATCHING, "proof": None, "owner": None, "claimed_from": None,
                   "rebasing": True})
    return nq, [rebase(nq)]
