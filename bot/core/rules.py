"""One handler per event type. Each picks the next quest among the moves ``table.TABLE`` lists
and names the effects to ask for; ``lifecycle.step`` turns those into keyed effects and refuses
any move outside the table.

Rules that do not fit one table cell, gathered here so they are read together:

* A claimed review (``handed_off``) refuses workflow actions and decisions from anyone but the
  owner (``lifecycle.step`` checks this before any handler). The owner's decision ends the claim
  and applies as if the quest were at the checkpoint it was claimed from. Proof keeps flowing
  during a claim: success keeps the review held at C; failure clears the owner first.
* A C approval is a snapshot (revision, head, base, proof digest). It counts only while the
  quest still shows that snapshot, so new proof, a base change or a human revision end it
  without any flag to forget; a new signal during proof clears it explicitly.
* Automatic decisions never advance a blocking checkpoint, nor any checkpoint in shadow mode:
  they are recorded. People's decisions act as usual.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any, TypeVar

from bot.core.effects import EffectType as E
from bot.core.errors import InvalidTransition, Refusal
from bot.core.events import (
    BaseMoved,
    CheckpointDecided,
    ChildEvidence,
    Claimed,
    CommentPosted,
    EffectFailed,
    HumanRevision,
    HypothesisWritten,
    Killed,
    Landed,
    ParentLanded,
    PatchPushed,
    Paused,
    PlanWritten,
    ProofCompleted,
    ProofFailed,
    RegressionDetected,
    Released,
    Reopened,
    Reproduced,
    ReproductionFailed,
    Resumed,
    RollbackConfirmed,
    Route,
    SignalAttached,
    SignalSensed,
    Snapshot,
    SpendDecided,
    SpendRequested,
    Triaged,
    UsageRecorded,
    Verdict,
    WatchClean,
    _Event,
    max_severity,
)
from bot.core.policy import Checkpoint, Policy
from bot.core.quest import Outcome, ParkReason, Quest
from bot.core.states import AGENT_STATES, CHECKPOINT_AT, PROOF_BOUND_STATES, State

S = State
Asks = list[tuple[E, dict[str, Any]]]
Result = tuple[Quest, Asks]
Ev = TypeVar("Ev", bound=_Event)
Handler = Callable[[Quest, Any, Policy], Result]

_STAGE_OF = {S.RESEARCHING: "research", S.REPRODUCING: "reproduce", S.PATCHING: "patch"}
_REVISE_TO = {Checkpoint.A: (S.RESEARCHING, "research"),
              Checkpoint.B: (S.REPRODUCING, "plan"),
              Checkpoint.C: (S.PATCHING, "patch")}
"""Where ``revise`` at each checkpoint sends the quest, and the agent stage it asks for."""
_WORK_PARKS = frozenset({ParkReason.PAUSED, ParkReason.ATTEMPTS_EXHAUSTED,
                         ParkReason.CANNOT_REPRODUCE})


_MINUTES: dict[int, timedelta] = {}


def _minutes(n: int) -> timedelta:
    """``timedelta(minutes=n)``, made once per ``n``: its keyword constructor costs more than
    the rest of a watch deadline, and every ``landed`` computes one."""
    span = _MINUTES.get(n)
    if span is None:
        span = _MINUTES[n] = timedelta(minutes=n)
    return span


def refuse(q: Quest | None, e: _Event, reason: str, code: Refusal = Refusal.UNDEFINED) -> None:
    state = q.state.value if q is not None else "none"
    raise InvalidTransition(state, e.type, reason, code)  # type: ignore[attr-defined]


def _park(q: Quest, reason: ParkReason, resume: State, **changes: Any) -> Quest:
    return q.evolve({"state": S.PARKED, "park_reason": reason, "resume_state": resume, **changes}
    )


def _checkpoint_request(q: Quest, checkpoint: Checkpoint, p: Policy) -> tuple[E, dict[str, Any]]:
    """The snapshot the reviewers are asked to decide on is written flat, beside the
    checkpoint: payloads hold plain values only (``EffectLog`` says why)."""
    proof = q.proof
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
        },
    )


def _start(stage: str, **extra: Any) -> tuple[E, dict[str, Any]]:
    return (E.START_AGENT, {"stage": stage, **extra})


def _land(q: Quest) -> tuple[E, dict[str, Any]]:
    """``land`` carries the approved snapshot, flat: the merge is pinned to its head."""
    approval = q.c_approval
    assert approval is not None  # guarded by every caller
    return (E.LAND, {"head": approval.head, "base": approval.base,
                     "revision": approval.revision, "proof_digest": approval.proof_digest})


def _enter(q: Quest, p: Policy) -> Asks:
    """The work a state asks for when a quest (re-)enters it after a pause or a release."""
    state = q.state
    if state in _STAGE_OF:
        return [_start(_STAGE_OF[state], resumed=True)]
    if state in CHECKPOINT_AT:
        return [_checkpoint_request(q, CHECKPOINT_AT[state], p)]
    if state is S.PROVING:
        return [(E.RUN_PROOF, _proof_request(q))]
    if state is S.LANDING:
        return [_land(q)]
    if state is S.WATCHING:
        return [(E.START_WATCH, {"window_minutes": p.watch_window_minutes, "resumed": True})]
    if state is S.ROLLED_BACK:
        return [(E.ROLLBACK, {"merge_sha": q.merge_sha})]
    if state is S.SENSED:
        return [(E.RUN_TRIAGE, {"fingerprint": q.fingerprint})]
    if state is S.TRIAGED:
        return [(E.NOTIFY_INBOX, {"reason": "waiting for a person to start it"})]
    return []


def _proof_request(q: Quest) -> dict[str, Any]:
    return {"head": q.head, "base": q.base, "revision": q.revision, "risk": str(q.risk),
            "attempt": q.attempts, "reproduction": q.reproduction,
            "reproduction_command": list(q.reproduction_command)}


# creation and triage


def signal_sensed(_q: Quest | None, e: SignalSensed, _p: Policy) -> Result:
    q = Quest(
        id=e.quest_id, repo=e.repo, state=S.SENSED, fingerprint=e.fingerprint, kind=e.kind,
        title=e.title, severity=e.severity, last_signal=e.source, base=e.base,
    )
    return q, [(E.RUN_TRIAGE, {"fingerprint": e.fingerprint, "kind": e.kind.value,
                               "severity": e.severity.value})]


def triaged(q: Quest, e: Triaged, p: Policy) -> Result:
    starts = (Route.AUTO_FIX, Route.RESEARCH_ONLY)
    if q.state is S.TRIAGED:
        if e.actor is None or e.route not in starts:
            refuse(q, e, "a quest routed to a person is started by a person with "
                   "/quest fix or /quest research")
        return _research(q, e, route=e.route, awaiting_person=False)
    if q.state is S.PARKED:
        if q.park_reason is not ParkReason.RESEARCH_COMPLETE or e.route is not Route.AUTO_FIX:
            refuse(q, e, "only a finished research-only quest can be turned into a fix "
                   "(/quest fix); use /resume for other parked quests")
        nq = q.evolve({"state": S.REPRODUCING, "route": e.route, "park_reason": None,
                                  "resume_state": None})
        return nq, [_start("reproduce")]
    q = q.evolve({"route": e.route, "risk": e.risk})
    if e.route in starts:
        return _research(q, e, route=e.route)
    if e.route is Route.HUMAN:
        return q.evolve({"state": S.TRIAGED, "awaiting_person": True}), [
            (E.NOTIFY_INBOX, {"reason": "routed to a person: start it with /quest fix or "
                              "/quest research, or /kill it"})]
    if e.route is Route.IGNORE:
        until = e.at + timedelta(hours=p.mute_hours)
        return q.evolve({"state": S.ABANDONED, "outcome": Outcome.IGNORED}), [
            (E.MUTE_FINGERPRINT, {"fingerprint": q.fingerprint, "hours": p.mute_hours,
                                  "until": until.isoformat()})]
    if e.route is Route.DUPLICATE:
        nq = q.evolve({"state": S.ABANDONED, "outcome": Outcome.DUPLICATE,
                                  "duplicate_of": e.duplicate_of})
        return nq, [(E.MERGE_SIGNAL, {"into": e.duplicate_of, "fingerprint": q.fingerprint,
                                      "source": q.last_signal, "severity": q.severity.value})]
    # conflict: a parked child that waits for its parent to land
    nq = _park(q, ParkReason.WAITING_FOR_PARENT, S.RESEARCHING, parent=e.parent)
    return nq, [(E.DELIVER_CHILD_EVIDENCE, {"parent": e.parent, "child": q.id})]


def _research(q: Quest, e: _Event, **changes: Any) -> Result:
    nq = q.evolve({"state": S.RESEARCHING, **changes})
    return nq, [_start("research")]


def signal_attached(q: Quest, e: SignalAttached, _p: Policy) -> Result:
    changes: dict[str, Any] = {"signals": q.signals + 1, "last_signal": e.source,
                               "severity": max_severity(q.severity, e.severity)}
    if q.state is S.PROVING or (q.state is S.HANDED_OFF and q.claimed_from is S.PROVING):
        changes["c_approval"] = None  # a new signal during proof ends an earlier C approval
    return q.evolve(changes), []


# the main line


def hypothesis_written(q: Quest, e: HypothesisWritten, p: Policy) -> Result:
    nq = q.evolve({"state": S.HYPOTHESISED, "hypothesis": e.summary})
    return nq, [_checkpoint_request(nq, Checkpoint.A, p)]


def reproduced(q: Quest, e: Reproduced, _p: Policy) -> Result:
    return q.evolve({"reproduction": e.check, "reproduction_command": e.command}), []


def reproduction_failed(q: Quest, e: ReproductionFailed, _p: Policy) -> Result:
    nq = _park(q, ParkReason.CANNOT_REPRODUCE, S.REPRODUCING)
    return nq, [(E.NOTIFY_INBOX, {"reason": f"cannot reproduce: {e.reason}"})]


def plan_written(q: Quest, e: PlanWritten, p: Policy) -> Result:
    if q.reproduction is None:
        refuse(q, e, "no reproduction is recorded; a plan needs a failing check first",
               Refusal.BAD_EVENT)
    nq = q.evolve({"state": S.PLANNED, "plan": e.summary, "risk": e.risk})
    return nq, [_checkpoint_request(nq, Checkpoint.B, p)]


def patch_pushed(q: Quest, e: PatchPushed, _p: Policy) -> Result:
    nq = q.evolve({"state": S.PROVING, "head": e.head, "head_pusher": e.pusher,
                              "attempts": q.attempts + 1, "proof": None, "c_approval": None})
    return nq, [(E.RUN_PROOF, _proof_request(nq))]


def proof_completed(q: Quest, e: ProofCompleted, p: Policy) -> Result:
    if q.state is S.HANDED_OFF and q.claimed_from is not S.PROVING:
        refuse(q, e, "no proof is running for this claimed review", Refusal.BAD_EVENT)
    b = e.bundle
    if q.head is None:
        refuse(q, e, "no patch head is recorded for this quest", Refusal.UNBOUND_PROOF)
    if (b.quest_id != q.id or b.revision != q.revision or b.risk != q.risk or b.base != q.base
            or b.head != q.head):
        expected = {"quest_id": q.id, "revision": q.revision, "risk": q.risk, "base": q.base,
                    "head": q.head}
        wrong = [f"{k} is {getattr(b, k)!r}, quest has {v!r}" for k, v in expected.items()
                 if getattr(b, k) != v]
        refuse(q, e, "the bundle does not match the quest: " + "; ".join(wrong),
               Refusal.UNBOUND_PROOF)
    digest = b.digest()
    if e.digest != digest:
        refuse(q, e, f"the digest {e.digest!r} is not the canonical SHA-256 of this bundle "
               f"({digest})", Refusal.UNBOUND_PROOF)
    if not b.all_passed:
        refuse(q, e, "the bundle records a failing check or an unconfirmed reproduction; "
               "send proof_failed instead", Refusal.UNBOUND_PROOF)
    proof = Snapshot.of(q.revision, q.head, q.base, digest)
    changes: dict[str, Any] = {"proof": proof, "c_approval": None}
    if q.state is S.HANDED_OFF:
        changes["claimed_from"] = S.READY  # the review stays held, now at C
    else:
        changes["state"] = S.READY
    nq = q.evolve(changes)
    return nq, [_checkpoint_request(nq, Checkpoint.C, p)]


def proof_failed(q: Quest, e: ProofFailed, p: Policy) -> Result:
    if q.state is S.HANDED_OFF and q.claimed_from is not S.PROVING:
        refuse(q, e, "no proof is running for this claimed review", Refusal.BAD_EVENT)
    if e.head != q.head:
        refuse(q, e, f"the failure is for head {e.head}, the quest is at {q.head}",
               Refusal.STALE)
    unbound = {"owner": None, "claimed_from": None, "proof": None}
    if q.attempts < p.max_attempts:
        nq = q.evolve({**unbound, "state": S.PATCHING})
        return nq, [_start("patch", repair=e.reason, attempt=q.attempts + 1)]
    nq = _park(q, ParkReason.ATTEMPTS_EXHAUSTED, S.PATCHING, **unbound)
    return nq, [(E.NOTIFY_INBOX, {"reason": f"proof failed {q.attempts} times: {e.reason}"})]


# checkpoints and claims


def checkpoint_decided(q: Quest, e: CheckpointDecided, p: Policy) -> Result:
    state = q.state
    at = q.claimed_from if state is S.HANDED_OFF and q.claimed_from is not None else state
    checkpoint = e.checkpoint
    open_checkpoint = CHECKPOINT_AT.get(at)
    if open_checkpoint is not checkpoint:
        where = f"checkpoint {open_checkpoint.value}" if open_checkpoint else f"state {at.value}"
        refuse(q, e, f"checkpoint {checkpoint.value} is not open; the quest is at {where}",
               Refusal.NOT_AT_CHECKPOINT)
    if e.snapshot is not None and not q.shows(e.snapshot):
        refuse(q, e, "the quest changed since this decision was made (revision, head, base or "
               "proof); look again and decide on what it shows now", Refusal.STALE)
    decisions = q.decisions + 1
    if e.automatic and (p.shadow or p.blocking(checkpoint)):
        return q.evolve({"decisions": decisions,
                         "recorded_only_decisions": q.recorded_only_decisions + 1}), []
    verdict = e.verdict
    if (checkpoint is Checkpoint.C and verdict is Verdict.APPROVE
            and e.actor is not None and e.actor == q.head_pusher):
        refuse(q, e, f"@{e.actor} pushed the head under review and cannot approve it; "
               "ask another maintainer", Refusal.PRODUCER)
    # a decision ends any claim and applies at the checkpoint's own state (``at``)
    if verdict is Verdict.REJECT:
        return q.evolve({"decisions": decisions, "owner": None, "claimed_from": None,
                         "state": S.ABANDONED, "outcome": Outcome.REJECTED}), []
    if verdict is Verdict.REVISE:
        target, stage = _REVISE_TO[checkpoint]
        return q.evolve({"decisions": decisions, "owner": None, "claimed_from": None,
                         "state": target}), [_start(stage, revise=e.reason)]
    if checkpoint is Checkpoint.A:
        if q.route is Route.RESEARCH_ONLY:
            nq = _park(q, ParkReason.RESEARCH_COMPLETE, S.HYPOTHESISED, decisions=decisions,
                       owner=None, claimed_from=None)
            return nq, [(E.NOTIFY_INBOX, {"reason": "research complete: the hypothesis was "
                                          "approved; /quest fix to go on and patch"})]
        return q.evolve({"decisions": decisions, "owner": None, "claimed_from": None,
                         "state": S.REPRODUCING}), [(E.START_AGENT, {"stage": "reproduce"})]
    if checkpoint is Checkpoint.B:
        return q.evolve({"decisions": decisions, "owner": None, "claimed_from": None,
                         "state": S.PATCHING}), [(E.START_AGENT, {"stage": "patch"})]
    if not q.proof_bound:
        refuse(q.evolve({"state": at}), e, "the proof no longer matches this revision, head "
               "and base; wait for the new proof", Refusal.UNBOUND_PROOF)
    nq = q.evolve({"decisions": decisions, "owner": None, "claimed_from": None,
                   "state": S.LANDING, "c_approval": q.snapshot})
    return nq, [_land(nq)]


def claimed(q: Quest, e: Claimed, _p: Policy) -> Result:
    if e.actor is None:
        refuse(q, e, "only a person can claim a review", Refusal.BAD_EVENT)
    nq = q.evolve({"state": S.HANDED_OFF, "owner": e.actor, "claimed_from": q.state})
    return nq, [(E.REPLY_COMMENT, {"to": e.actor, "message": f"@{e.actor} now holds this "
                                   "review; others' decisions wait until /release"})]


def released(q: Quest, e: Released, p: Policy) -> Result:
    assert q.claimed_from is not None
    nq = q.evolve({"state": q.claimed_from, "owner": None, "claimed_from": None})
    asks: Asks = [(E.REPLY_COMMENT, {"to": e.actor, "message": "the review is released"})]
    if nq.state in CHECKPOINT_AT:  # ask the reviewers again; a running proof just goes on
        asks.append(_checkpoint_request(nq, CHECKPOINT_AT[nq.state], p))
    return nq, asks


# people stopping and starting work


def paused(q: Quest, e: Paused, _p: Policy) -> Result:
    nq = _park(q, ParkReason.PAUSED, q.state)
    return nq, [(E.STOP_AGENT, {"reason": "paused"})] if q.state in AGENT_STATES else []


def resumed(q: Quest, e: Resumed, p: Policy) -> Result:
    reason = q.park_reason
    if reason is ParkReason.RESEARCH_COMPLETE:
        refuse(q, e, "this research-only quest is complete; /quest fix turns it into a fix")
    target = q.resume_state or S.RESEARCHING
    changes: dict[str, Any] = {"state": target, "park_reason": None, "resume_state": None}
    if reason is ParkReason.ATTEMPTS_EXHAUSTED:
        changes["attempts"] = 0  # a person gives it a fresh set of attempts
    nq = q.evolve(changes)
    if target is S.LANDING and not nq.c_approval_counts:
        nq = nq.evolve({"state": S.READY, "c_approval": None})
    return nq, _enter(nq, p)


def killed(q: Quest, e: Killed, _p: Policy) -> Result:
    nq = q.evolve({"state": S.ABANDONED, "outcome": Outcome.KILLED, "owner": None})
    return nq, [(E.STOP_AGENT, {"reason": "killed"})] if q.state in AGENT_STATES else []


# the forge moving under the quest


def human_revision(q: Quest, e: HumanRevision, _p: Policy) -> Result:
    if e.head == q.head:
        return q, []
    q = q.evolve({"head": e.head, "head_pusher": e.pusher, "revision": q.revision + 1,
                             "proof": None, "c_approval": None})
    state = q.checkpoint_state
    if state is S.PARKED:
        if q.park_reason in _WORK_PARKS:  # /resume will prove the person's head
            return q.evolve({"resume_state": S.PROVING, "owner": None,
                                        "claimed_from": None}), []
        return q, []
    if state not in PROOF_BOUND_STATES and state is not S.PATCHING:
        return q, []
    asks: Asks = [(E.STOP_AGENT, {"reason": "a person pushed"})] if state is S.PATCHING else []
    if q.state is S.HANDED_OFF:
        nq = q.evolve({"claimed_from": S.PROVING})
    else:
        nq = q.evolve({"state": S.PROVING})
    return nq, [*asks, (E.RUN_PROOF, _proof_request(nq))]


def base_moved(q: Quest, e: BaseMoved, _p: Policy) -> Result:
    if e.base == q.base:
        return q, []
    q = q.evolve({"base": e.base, "c_approval": None})
    if q.state is S.PARKED:
        held = q.claimed_from if q.resume_state is S.HANDED_OFF else q.resume_state
        if held in PROOF_BOUND_STATES:  # the proof is for the old base: patch again on resume
            return q.evolve({"resume_state": S.PATCHING, "proof": None,
                                        "owner": None, "claimed_from": None}), []
        return q, []
    if q.checkpoint_state not in PROOF_BOUND_STATES:
        return q, []
    nq = q.evolve({"state": S.PATCHING, "proof": None, "owner": None,
                              "claimed_from": None})
    return nq, [(E.REBASE, {"base": e.base, "head": q.head})]


# landing and after


def landed(q: Quest, e: Landed, p: Policy) -> Result:
    nq = q.evolve({"state": S.WATCHING, "merge_sha": e.merge_sha})
    asks: Asks = [
        (E.START_WATCH, {"window_minutes": p.watch_window_minutes,
                         "until": (e.at + _minutes(p.watch_window_minutes)).isoformat()}),
        (E.REGISTER_REGRESSION_PROBE, {"fingerprint": q.fingerprint, "check": q.reproduction}),
        (E.RUN_PROBES, {"merge_sha": e.merge_sha, "check": q.reproduction}),
    ]
    for child in q.children:
        asks.append((E.RESUME_DEPENDENTS, {"child": child, "parent": q.id}))
    return nq, asks


def watch_clean(q: Quest, e: WatchClean, _p: Policy) -> Result:
    return q.evolve({"state": S.CLOSED, "outcome": Outcome.CLOSED,
                                "severity_floor": max_severity(q.severity_floor, q.severity)}), []


def regression_detected(q: Quest, e: RegressionDetected, _p: Policy) -> Result:
    nq = q.evolve({"state": S.ROLLED_BACK, "last_signal": e.source})
    return nq, [(E.ROLLBACK, {"merge_sha": q.merge_sha, "source": e.source})]


def _research_again(q: Quest, **changes: Any) -> Result:
    nq = q.evolve({
        "state": S.RESEARCHING, "revision": q.revision + 1, "attempts": 0, "proof": None,
        "c_approval": None, "head": None, "head_pusher": None, "hypothesis": None,
        "reproduction": None, "reproduction_command": (), "plan": None, "outcome": None,
        **changes,
    })
    return nq, [_start("research")]


def rollback_confirmed(q: Quest, e: RollbackConfirmed, _p: Policy) -> Result:
    return _research_again(q)


def reopened(q: Quest, e: Reopened, _p: Policy) -> Result:
    if e.fingerprint != q.fingerprint:
        refuse(q, e, f"fingerprint {e.fingerprint} is not this quest's ({q.fingerprint})",
               Refusal.BAD_EVENT)
    severity = max_severity(q.severity_floor, e.severity)
    return _research_again(q, severity=severity, signals=q.signals + 1, last_signal=e.source,
                           merge_sha=None)


# related quests


def parent_landed(q: Quest, e: ParentLanded, _p: Policy) -> Result:
    if q.park_reason is not ParkReason.WAITING_FOR_PARENT or e.parent != q.parent:
        return q, []  # a parent this quest no longer waits for: nothing to resume
    return _research(q, e, park_reason=None, resume_state=None)


def child_evidence(q: Quest, e: ChildEvidence, _p: Policy) -> Result:
    if e.child in q.children:
        return q, []
    nq = q.evolve({"children": (*q.children, e.child)})
    if q.state is S.WATCHING:  # already landed: the child need not wait
        return nq, [(E.RESUME_DEPENDENTS, {"child": e.child, "parent": q.id})]
    return nq, []


# money and bookkeeping


def spend_requested(q: Quest, e: SpendRequested, _p: Policy) -> Result:
    nq = q.evolve({"spend_pending": (*q.spend_pending, e.id)})
    return nq, [(E.REQUEST_SPEND, {"request_id": e.id, "amount_cents": e.amount_cents,
                                   "purpose": e.purpose})]


def spend_decided(q: Quest, e: SpendDecided, _p: Policy) -> Result:
    if e.request_id not in q.spend_pending:
        refuse(q, e, f"no spend request {e.request_id} is pending", Refusal.BAD_EVENT)
    pending = tuple(r for r in q.spend_pending if r != e.request_id)
    if not e.approved:
        return q.evolve({"spend_pending": pending}), []
    nq = q.evolve({"spend_pending": pending, "spend_approved": q.spend_approved + 1})
    return nq, [(E.START_RESPONDENT_RUN, {"request_id": e.request_id})]


def usage_recorded(q: Quest, e: UsageRecorded, _p: Policy) -> Result:
    return q.evolve({"usage_tokens": q.usage_tokens + e.tokens,
                                "usage_cost_cents": q.usage_cost_cents + e.cost_cents}), []


def comment_posted(q: Quest, e: CommentPosted, _p: Policy) -> Result:
    return q.evolve({"comments": q.comments + 1}), []


def effect_failed(q: Quest, e: EffectFailed, _p: Policy) -> Result:
    return q.evolve({"failed_effects": q.failed_effects + 1,
                     "last_failure": f"{e.effect_type}: {e.error}"}), []


HANDLERS: dict[str, Handler] = {
    "signal_sensed": signal_sensed,
    "triaged": triaged,
    "signal_attached": signal_attached,
    "hypothesis_written": hypothesis_written,
    "reproduced": reproduced,
    "reproduction_failed": reproduction_failed,
    "plan_written": plan_written,
    "patch_pushed": patch_pushed,
    "proof_completed": proof_completed,
    "proof_failed": proof_failed,
    "checkpoint_decided": checkpoint_decided,
    "claimed": claimed,
    "released": released,
    "paused": paused,
    "resumed": resumed,
    "killed": killed,
    "human_revision": human_revision,
    "base_moved": base_moved,
    "landed": landed,
    "watch_clean": watch_clean,
    "regression_detected": regression_detected,
    "rollback_confirmed": rollback_confirmed,
    "reopened": reopened,
    "parent_landed": parent_landed,
    "child_evidence": child_evidence,
    "spend_requested": spend_requested,
    "spend_decided": spend_decided,
    "usage_recorded": usage_recorded,
    "comment_posted": comment_posted,
    "effect_failed": effect_failed,
}
