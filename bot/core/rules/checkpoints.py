"""Checkpoints A, B and C, and claims on their reviews.

A decision applies at the checkpoint that is open: the quest's own state, or through a claim
the state it was claimed from. An owner's decision ends the claim. What binds a C approval,
what automatic decisions may do, and who may approve are stated in ``bot.core.table``'s theory
of operation and enforced here.
"""

from __future__ import annotations

from bot.core.effects import EffectType as E
from bot.core.errors import Refusal
from bot.core.events.decisions import CheckpointDecided, Claimed, Released, Verdict
from bot.core.events.signals import Route
from bot.core.policy import Checkpoint, Policy
from bot.core.quest import Outcome, ParkReason, Quest
from bot.core.rules.asks import (
    Asks,
    Refused,
    Result,
    checkpoint_request,
    land,
    park,
    refuse,
    start,
)
from bot.core.rules.sealing import next_attempt, reviewed
from bot.core.states import CHECKPOINT_AT, State

S = State
_NEW_ATTEMPT = {Checkpoint.A: "checkpoint A sent the hypothesis back to research",
                Checkpoint.B: "checkpoint B sent the plan back to be written again"}
"""The revisions that start a new attempt, and how the attempt's record says it ended; a
revision at C keeps the attempt (``bot.core.attempts``)."""
_REVISE_TO = {Checkpoint.A: (S.RESEARCHING, "research"),
              Checkpoint.B: (S.REPRODUCING, "plan"),
              Checkpoint.C: (S.PATCHING, "patch")}
"""Where ``revise`` at each checkpoint sends the quest, and the agent stage it asks for."""


def open_checkpoint(q: Quest) -> Checkpoint | None:
    """The checkpoint a decision on ``q`` applies to, if one is open."""
    return CHECKPOINT_AT.get(q.checkpoint_state)


def may_decide(q: Quest, _actor: str | None) -> Refused | None:
    """A decision needs an open checkpoint; a claim held over a running proof has none."""
    if open_checkpoint(q) is None:
        return (f"no checkpoint is open; the quest is at state {q.checkpoint_state.value}",
                Refusal.NOT_AT_CHECKPOINT)
    return None


def checkpoint_decided(q: Quest, e: CheckpointDecided, p: Policy) -> Result:
    state = q.state
    at = q.claimed_from if state is S.HANDED_OFF and q.claimed_from is not None else state
    checkpoint = e.checkpoint
    open_cp = CHECKPOINT_AT.get(at)
    if open_cp is not checkpoint:
        where = f"checkpoint {open_cp.value}" if open_cp else f"state {at.value}"
        refuse(q, e, f"checkpoint {checkpoint.value} is not open; the quest is at {where}",
               Refusal.NOT_AT_CHECKPOINT)
    if e.snapshot is not None and not q.shows(e.snapshot):
        refuse(q, e, "the quest changed since this decision was made (revision, head, base or "
               "proof); look again and decide on what it shows now", Refusal.STALE)
    if e.seal is not None:
        seal = q.seal(checkpoint)
        if seal is None or seal.digest != e.seal:
            refuse(q, e, f"the evidence of checkpoint {checkpoint.value} was submitted again "
                   "since this decision was made; look again and decide on what it shows now",
                   Refusal.STALE)
    decisions = q.decisions + 1
    if e.automatic and (p.shadow or p.blocking(checkpoint)):
        return q.evolve({"decisions": decisions,
                         "recorded_only_decisions": q.recorded_only_decisions + 1,
                         "attempt_reviews": reviewed(q, e, recorded_only=True)}), []
    verdict = e.verdict
    if (checkpoint is Checkpoint.C and verdict is Verdict.APPROVE
            and e.actor is not None and e.actor == q.head_pusher):
        refuse(q, e, f"@{e.actor} pushed the head under review and cannot approve it; "
               "ask another maintainer", Refusal.PRODUCER)
    # a decision ends any claim, is kept on the attempt, and applies at the checkpoint's own
    # state (``at``)
    reviews = reviewed(q, e, recorded_only=False)
    done = {"decisions": decisions, "owner": None, "claimed_from": None,
            "attempt_reviews": reviews}
    if verdict is Verdict.REJECT:
        return q.evolve({**done, "state": S.ABANDONED, "outcome": Outcome.REJECTED}), []
    if verdict is Verdict.REVISE:
        target, stage = _REVISE_TO[checkpoint]
        ended = _NEW_ATTEMPT.get(checkpoint)
        if ended:
            done.update(next_attempt(q, ended, e.reason, e.at, reviews=reviews))
        return q.evolve({**done, "state": target}), [start(stage, revise=e.reason)]
    if checkpoint is Checkpoint.A:
        if q.route is Route.RESEARCH_ONLY:
            nq = park(q, ParkReason.RESEARCH_COMPLETE, S.HYPOTHESISED, **done)
            return nq, [(E.NOTIFY_INBOX, {"reason": "research complete: the hypothesis was "
                                          "approved; /quest fix to go on and patch"})]
        return q.evolve({**done, "state": S.REPRODUCING}), [
            (E.START_AGENT, {"stage": "reproduce"})]
    if checkpoint is Checkpoint.B:
        return q.evolve({**done, "state": S.PATCHING}), [(E.START_AGENT, {"stage": "patch"})]
    if not q.proof_bound:
        refuse(q.evolve({"state": at}), e, "the proof no longer matches this revision, head "
               "and base; wait for the new proof", Refusal.UNBOUND_PROOF)
    nq = q.evolve({**done, "state": S.LANDING, "c_approval": q.snapshot})
    return nq, [land(nq)]


def may_claim(_q: Quest, actor: str | None) -> Refused | None:
    if actor is None:
        return "only a person can claim a review", Refusal.BAD_EVENT
    return None


def claimed(q: Quest, e: Claimed, _p: Policy) -> Result:
    why = may_claim(q, e.actor)
    if why is not None:
        refuse(q, e, *why)
    nq = q.evolve({"state": S.HANDED_OFF, "owner": e.actor, "claimed_from": q.state})
    return nq, [(E.REPLY_COMMENT, {"to": e.actor, "message": f"@{e.actor} now holds this "
                                   "review; others' decisions wait until /release"})]


def released(q: Quest, e: Released, p: Policy) -> Result:
    assert q.claimed_from is not None
    nq = q.evolve({"state": q.claimed_from, "owner": None, "claimed_from": None})
    asks: Asks = [(E.REPLY_COMMENT, {"to": e.actor, "message": "the review is released"})]
    if nq.state in CHECKPOINT_AT:  # ask the reviewers again; a running proof just goes on
        asks.append(checkpoint_request(nq, CHECKPOINT_AT[nq.state], p))
    return nq, asks
