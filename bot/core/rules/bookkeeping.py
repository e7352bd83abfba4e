"""Bookkeeping: what a quest records without moving — signals attached, money asked for and
spent, usage and comments. (A spend request the budget made parks the quest, and its answer
moves it: ``rules.budget``; an effect questbot gave up on is ``rules.gave_up``'s.)

A signal attached is one of four things, and each is recorded where it belongs:

* another failure of the quest's (a duplicate merged by triage, a matrix job or the suite or
  workflow run of the same failure): counted, its fingerprint kept (``Quest.attached``);
* a green result of one of its checks (``passed``): evidence, never a failure — flaky when
  the same check failed on that commit for this quest (a suspect of the watch, or the commit
  the quest started from), else a sign the failure is fixed;
* during the watch, a failure on the landed commit or a later one (``suspect``): kept as a
  ``Suspect`` and a re-run of it asked for (``run_probes``, ``rerun``). A re-run that fails
  too is the confirmed ``regression_detected``; one that passes clears the suspect (flaky).
"""

from __future__ import annotations

from typing import Any

from bot.core.effects import EffectType as E
from bot.core.errors import Refusal
from bot.core.events.bookkeeping import (
    CommentPosted,
    SpendDecided,
    SpendRequested,
    UsageRecorded,
)
from bot.core.events.signals import SignalAttached, max_severity
from bot.core.policy import Policy
from bot.core.quest import MAX_SUSPECTS, Quest, StageUsage, Suspect
from bot.core.rules import budget
from bot.core.rules.asks import Asks, Result, refuse
from bot.core.states import State

S = State


def signal_attached(q: Quest, e: SignalAttached, _p: Policy) -> Result:
    if e.passed:
        return _passed(q, e), []
    changes: dict[str, Any] = {"signals": q.signals + 1, "last_signal": e.source,
                               "severity": max_severity(q.severity, e.severity)}
    if not q.holds(e.fingerprint):
        changes["attached"] = (*q.attached, e.fingerprint)
    if q.state is S.PROVING or (q.state is S.HANDED_OFF and q.claimed_from is S.PROVING):
        changes["c_approval"] = None  # a new signal during proof ends an earlier C approval
    asks: Asks = []
    if e.suspect and q.state is S.WATCHING and e.sha and e.run and not _seen(q, e.sha,
                                                                          e.fingerprint, e.run):
        suspect = Suspect(sha=e.sha, fingerprint=e.fingerprint, run=e.run)
        changes["suspects"] = (*q.suspects, suspect)[-MAX_SUSPECTS:]
        asks.append((E.RUN_PROBES, {"rerun": e.run, "sha": e.sha,
                                    "fingerprint": e.fingerprint}))
    return q.evolve(changes), asks


def _seen(q: Quest, sha: str, fingerprint: str, run: str) -> bool:
    return any(s.sha == sha and s.fingerprint == fingerprint and s.run == run
               for s in q.suspects)


def _passed(q: Quest, e: SignalAttached) -> Quest:
    cleared = tuple(s for s in q.suspects
                    if not (s.sha == e.sha and s.fingerprint == e.fingerprint))
    before_landing = q.state not in (S.WATCHING, S.ROLLED_BACK) and q.merge_sha is None
    flaky = len(cleared) < len(q.suspects) or (
        before_landing and e.sha is not None and e.sha == q.base and q.holds(e.fingerprint))
    return q.evolve({"passes": q.passes + 1, "flaky": q.flaky + int(flaky),
                     "suspects": cleared})


def spend_requested(q: Quest, e: SpendRequested, _p: Policy) -> Result:
    nq = q.evolve({"spend_pending": (*q.spend_pending, e.id)})
    return nq, [(E.REQUEST_SPEND, {"request_id": e.id, "amount_cents": e.amount_cents,
                                   "purpose": e.purpose})]


def spend_decided(q: Quest, e: SpendDecided, _p: Policy) -> Result:
    if e.request_id not in q.spend_pending:
        refuse(q, e, "no spend is waiting for a decision", Refusal.BAD_EVENT)
    pending = tuple(r for r in q.spend_pending if r != e.request_id)
    ask = q.spend_ask
    if ask is not None and ask.request_id == e.request_id:  # the budget held a stage back
        return budget.decided(q, e, pending)
    if not e.approved:
        return q.evolve({"spend_pending": pending}), []
    nq = q.evolve({"spend_pending": pending, "spend_approved": q.spend_approved + 1})
    return nq, [(E.START_RESPONDENT_RUN, {"request_id": e.request_id})]


def usage_recorded(q: Quest, e: UsageRecorded, _p: Policy) -> Result:
    free = e.tokens if e.free else 0
    changes: dict[str, Any] = {"usage_tokens": q.usage_tokens + e.tokens,
                               "usage_cost_cents": q.usage_cost_cents + e.cost_cents,
                               "usage_free_tokens": q.usage_free_tokens + free}
    if e.stage is not None:
        stages = list(q.usage_by_stage)
        index = next((i for i, s in enumerate(stages) if s.stage == e.stage), None)
        if index is None:
            stages.append(StageUsage(stage=e.stage, tokens=e.tokens, cost_cents=e.cost_cents,
                                     free_tokens=free))
        else:
            was = stages[index]
            stages[index] = StageUsage(stage=e.stage, tokens=was.tokens + e.tokens,
                                       cost_cents=was.cost_cents + e.cost_cents,
                                       free_tokens=was.free_tokens + free)
        changes["usage_by_stage"] = tuple(stages)
    return q.evolve(changes), []


def comment_posted(q: Quest, e: CommentPosted, _p: Policy) -> Result:
    return q.evolve({"comments": q.comments + 1}), []
