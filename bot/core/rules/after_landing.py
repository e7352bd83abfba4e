"""Landing and after: the watch, a regression and its rollback, a closed quest reopened, and
the related quests that wait for a parent to land.

Research starts again at revision + 1, under the same id, both after a confirmed rollback and
when a regression with the quest's fingerprint reopens a closed quest — from the default
branch's head as it is then (the revert, or the head the reopening names) and on a fresh branch
(``Quest.branch``): the old one was merged.

A failure during the watch is first a suspect (``bookkeeping``, ``signal_attached``); the
regression is the re-run that fails too, and ``regression_detected`` holds it against the
suspects it confirms.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from bot.core.effects import EffectType as E
from bot.core.errors import Refusal
from bot.core.events.landing import (
    ChildEvidence,
    Landed,
    ParentLanded,
    RegressionDetected,
    Reopened,
    RollbackConfirmed,
    WatchClean,
)
from bot.core.events.signals import max_severity
from bot.core.policy import Policy
from bot.core.quest import Outcome, ParkReason, Quest
from bot.core.rules.asks import Asks, Result, minutes, refuse, start
from bot.core.rules.sealing import next_attempt
from bot.core.states import State

S = State


def landed(q: Quest, e: Landed, p: Policy) -> Result:
    nq = q.evolve({"state": S.WATCHING, "merge_sha": e.merge_sha, "suspects": ()})
    asks: Asks = [
        (E.START_WATCH, {"window_minutes": p.watch_window_minutes,
                         "until": (e.at + minutes(p.watch_window_minutes)).isoformat()}),
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
    if e.run is not None and not (e.sha and e.fingerprint
                                  and q.confirms(e.sha, e.fingerprint, e.run)):
        refuse(q, e, f"{e.fingerprint} failing in {e.run} confirms no suspected failure: a "
               "failure during the watch is a regression once a re-run of it fails too, so "
               "attach it as a suspect first", Refusal.BAD_EVENT)
    nq = q.evolve({"state": S.ROLLED_BACK, "last_signal": e.source, "suspects": ()})
    return nq, [(E.ROLLBACK, {"merge_sha": q.merge_sha, "source": e.source})]


def _research_again(q: Quest, ended_by: str, reason: str, at: datetime,
                    **changes: Any) -> Result:
    revision = q.revision + 1
    nq = q.evolve({**next_attempt(q, ended_by, reason, at),
        "state": S.RESEARCHING, "revision": revision, "attempts": 0, "proof": None,
        "c_approval": None, "head": None, "head_pusher": None, "hypothesis": None,
        "reproduction": None, "reproduction_command": (), "plan": None, "outcome": None,
        "suspects": (), "branch_revision": revision, "merge_sha": None, **changes,
    })
    return nq, [start("research")]


def rollback_confirmed(q: Quest, e: RollbackConfirmed, _p: Policy) -> Result:
    return _research_again(q, "the landed change was rolled back", q.last_signal, e.at,
                           base=e.revert_sha)


def reopened(q: Quest, e: Reopened, _p: Policy) -> Result:
    if not q.holds(e.fingerprint):
        refuse(q, e, f"fingerprint {e.fingerprint} is not this quest's ({q.fingerprint})",
               Refusal.BAD_EVENT)
    severity = max_severity(q.severity_floor, e.severity)
    return _research_again(q, "a regression reopened the closed quest", e.source, e.at,
                           severity=severity, signals=q.signals + 1, last_signal=e.source,
                           base=e.base or q.base)


# related quests


def parent_landed(q: Quest, e: ParentLanded, _p: Policy) -> Result:
    if q.park_reason is not ParkReason.WAITING_FOR_PARENT or e.parent != q.parent:
        return q, []  # a parent this quest no longer waits for: nothing to resume
    nq = q.evolve({"state": S.RESEARCHING, "park_reason": None, "resume_state": None,
                   "park_note": None})
    return nq, [start("research")]


def child_evidence(q: Quest, e: ChildEvidence, _p: Policy) -> Result:
    if e.child in q.children:
        return q, []
    nq = q.evolve({"children": (*q.children, e.child)})
    if q.state is S.WATCHING:  # already landed: the child need not wait
        return nq, [(E.RESUME_DEPENDENTS, {"child": e.child, "parent": q.id})]
    return nq, []
