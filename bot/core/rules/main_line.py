"""The main line: a signal becomes a quest, is triaged, researched, reproduced, patched and
proved — with the branches the seed names on the way (cannot reproduce, proof failed).

Triage that routes a quest to the agent moves it to ``triaged`` and nothing more; research
starts from there on ``research_started``, the follow-up ``research_follows`` derives from that
``triaged`` (``lifecycle.step`` hands it back for the journal to apply at once)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from bot.core.effects import EffectType as E
from bot.core.errors import Refusal
from bot.core.events.agent_work import (
    AgentHalted,
    HypothesisWritten,
    PatchPushed,
    PlanWritten,
    ProofCompleted,
    ProofFailed,
    Reproduced,
    ReproductionFailed,
)
from bot.core.events.base import _Event
from bot.core.events.decisions import Snapshot
from bot.core.events.signals import ResearchStarted, Route, SignalSensed, Triaged
from bot.core.policy import Checkpoint, Policy
from bot.core.quest import Outcome, ParkReason, Quest
from bot.core.rules.asks import (
    Refused,
    Result,
    checkpoint_request,
    park,
    proof_request,
    refuse,
    start,
)
from bot.core.rules.sealing import plan_artifacts, sealed
from bot.core.states import State

S = State
_STARTS = (Route.AUTO_FIX, Route.RESEARCH_ONLY)
_PERSON_STARTS = ("a quest routed to a person is started by a person with /quest fix or "
                  "/quest research")
_FIX_ONLY = ("only a finished research-only quest can be turned into a fix (/quest fix); "
             "use /resume for other parked quests")


# creation and triage


def signal_sensed(_q: Quest | None, e: SignalSensed, _p: Policy) -> Result:
    q = Quest(
        id=e.quest_id, repo=e.repo, state=S.SENSED, fingerprint=e.fingerprint, kind=e.kind,
        title=e.title, severity=e.severity, last_signal=e.source, base=e.base,
        source_run=e.run,
    )
    return q, [(E.RUN_TRIAGE, {"fingerprint": e.fingerprint, "kind": e.kind.value,
                               "severity": e.severity.value})]


def may_triage(q: Quest, actor: str | None) -> Refused | None:
    """Triage's own move in ``sensed``; in ``triaged`` a person's start; in ``parked`` only
    finished research, turned into a fix."""
    if q.state is S.TRIAGED and actor is None:
        return _PERSON_STARTS, Refusal.UNDEFINED
    if q.state is S.PARKED and q.park_reason is not ParkReason.RESEARCH_COMPLETE:
        return _FIX_ONLY, Refusal.UNDEFINED
    return None


def triaged(q: Quest, e: Triaged, p: Policy) -> Result:
    why = may_triage(q, e.actor)
    if why is not None:
        refuse(q, e, *why)
    if q.state is S.TRIAGED:
        if e.route not in _STARTS:
            refuse(q, e, _PERSON_STARTS)
        return _research(q, e, route=e.route, awaiting_person=False)
    if q.state is S.PARKED:
        if e.route is not Route.AUTO_FIX:
            refuse(q, e, _FIX_ONLY)
        nq = q.evolve({"state": S.REPRODUCING, "route": e.route, "park_reason": None,
                       "resume_state": None, "park_note": None})
        return nq, [start("reproduce")]
    q = q.evolve({"route": e.route, "risk": e.risk, "held": None})
    if e.route in _STARTS:  # research starts on the follow-up, ``research_follows``
        return q.evolve({"state": S.TRIAGED, "awaiting_person": False}), []
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
    nq = park(q, ParkReason.WAITING_FOR_PARENT, S.RESEARCHING, parent=e.parent)
    return nq, [(E.DELIVER_CHILD_EVIDENCE, {"parent": e.parent, "child": q.id})]


def research_follows(q: Quest, e: _Event) -> ResearchStarted | None:
    """What follows a ``triaged`` at once: research starts on a quest routed to the agent.
    Its id is the triage's own with ``/research`` (ids are never minted here), at its time."""
    if q.state is S.TRIAGED and not q.awaiting_person:
        return ResearchStarted(id=f"{e.id}/research", quest_id=q.id, at=e.at)
    return None


def may_start_research(q: Quest, _actor: str | None) -> Refused | None:
    """A quest waiting for a person is started by that person, not by questbot."""
    if q.awaiting_person:
        return _PERSON_STARTS, Refusal.UNDEFINED
    return None


def research_started(q: Quest, e: ResearchStarted, _p: Policy) -> Result:
    why = may_start_research(q, e.actor)
    if why is not None:
        refuse(q, e, *why)
    return _research(q, e)


def _research(q: Quest, e: _Event, **changes: Any) -> Result:
    nq = q.evolve({"state": S.RESEARCHING, **changes})
    rerun = nq.rerun
    if rerun is not None and rerun.result is not None and nq.revision == 1:
        # the failure survived triage's re-run: research reads both runs' logs
        return nq, [start("research", runs=[r for r in (rerun.first, rerun.second) if r])]
    return nq, [start("research")]


# research, reproduction and a plan


def hypothesis_written(q: Quest, e: HypothesisWritten, p: Policy) -> Result:
    seals = sealed(q, Checkpoint.A, e.id, {"hypothesis": {
        "summary": e.summary, "evidence_digest": e.evidence_digest}})
    nq = q.evolve({"state": S.HYPOTHESISED, "hypothesis": e.summary, "seals": seals})
    return nq, [checkpoint_request(nq, Checkpoint.A, p)]


def reproduced(q: Quest, e: Reproduced, _p: Policy) -> Result:
    return q.evolve({"reproduction": e.check, "reproduction_command": e.command}), []


def reproduction_failed(q: Quest, e: ReproductionFailed, _p: Policy) -> Result:
    """Parked with the run's reason as the note people read beside "could not be
    reproduced": the test passed on the base, or the run was refused, and which it was."""
    nq = park(q, ParkReason.CANNOT_REPRODUCE, S.REPRODUCING, park_note=e.reason)
    return nq, [(E.NOTIFY_INBOX, {"reason": f"cannot reproduce: {e.reason}"})]


HALTED: dict[str, tuple[ParkReason, str]] = {
    "failed": (ParkReason.AGENT_FAILED, "the agent failed"),
    "refused": (ParkReason.AGENT_REFUSED, "the agent refused"),
    "needs_human": (ParkReason.NEEDS_HUMAN, "the agent needs a person"),
    "unconfigured": (ParkReason.NO_AGENT, "no agent is set up"),
    "endpoint": (ParkReason.MODEL_FAILED, "the model endpoint failed"),
}
"""Each halted outcome's park reason, and its words for the inbox."""


def agent_halted(q: Quest, e: AgentHalted, _p: Policy) -> Result:
    reason, words = HALTED[e.outcome]
    nq = park(q, reason, q.state, park_note=e.reason)
    return nq, [(E.NOTIFY_INBOX, {"reason": f"{words} ({e.stage}): {e.reason}"})]


def may_plan(q: Quest, _actor: str | None) -> Refused | None:
    if q.reproduction is None:
        return ("no reproduction is recorded; a plan needs a failing check first",
                Refusal.BAD_EVENT)
    return None


def plan_written(q: Quest, e: PlanWritten, p: Policy) -> Result:
    why = may_plan(q, e.actor)
    if why is not None:
        refuse(q, e, *why)
    seals = sealed(q, Checkpoint.B, e.id, plan_artifacts(q, e.summary, e.risk.value))
    nq = q.evolve({"state": S.PLANNED, "plan": e.summary, "risk": e.risk, "seals": seals})
    return nq, [checkpoint_request(nq, Checkpoint.B, p)]


# the patch and its proof


def patch_pushed(q: Quest, e: PatchPushed, _p: Policy) -> Result:
    """A new attempt, unless the push is the rebase the base moving asked for: that proves
    the same change on the new base (``Quest.rebasing``)."""
    attempts = q.attempts if q.rebasing else q.attempts + 1
    nq = q.evolve({"state": S.PROVING, "head": e.head, "head_pusher": e.pusher,
                   "attempts": attempts, "rebasing": False, "proof": None, "c_approval": None})
    return nq, [(E.RUN_PROOF, proof_request(nq))]


def may_fail_proof(q: Quest, _actor: str | None) -> Refused | None:
    """Proof results reach a claimed review only while the claim is held over its proof."""
    if q.state is S.HANDED_OFF and q.claimed_from is not S.PROVING:
        return "no proof is running for this claimed review", Refusal.BAD_EVENT
    return None


def may_complete_proof(q: Quest, actor: str | None) -> Refused | None:
    why = may_fail_proof(q, actor)
    if why is None and q.head is None:
        return "no patch head is recorded for this quest", Refusal.UNBOUND_PROOF
    return why


def proof_completed(q: Quest, e: ProofCompleted, p: Policy) -> Result:
    why = may_complete_proof(q, e.actor)
    if why is not None:
        refuse(q, e, *why)
    b = e.bundle
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
    seals = sealed(q, Checkpoint.C, e.id, {"patch": {"head": q.head, "base": q.base},
                                            "proof": digest})
    changes: dict[str, Any] = {"proof": proof, "c_approval": None, "seals": seals}
    if q.state is S.HANDED_OFF:
        changes["claimed_from"] = S.READY  # the review stays held, now at C
    else:
        changes["state"] = S.READY
    nq = q.evolve(changes)
    return nq, [checkpoint_request(nq, Checkpoint.C, p)]


def proof_failed(q: Quest, e: ProofFailed, p: Policy) -> Result:
    why = may_fail_proof(q, e.actor)
    if why is not None:
        refuse(q, e, *why)
    if e.head != q.head:
        refuse(q, e, f"the failure is for head {e.head}, the quest is at {q.head}",
               Refusal.STALE)
    unbound = {"owner": None, "claimed_from": None, "proof": None}
    if q.attempts < p.max_attempts:
        nq = q.evolve({**unbound, "state": S.PATCHING})
        return nq, [start("patch", repair=e.reason, attempt=q.attempts + 1)]
    nq = park(q, ParkReason.ATTEMPTS_EXHAUSTED, S.PATCHING, **unbound)
    return nq, [(E.NOTIFY_INBOX, {"reason": f"proof failed {q.attempts} times: {e.reason}"})]
