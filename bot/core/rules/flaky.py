"""Flaky before fixing: a failing check routed to the agent is re-run on the same commit first.

Triage (its adapter) picks the route as always; when that route would pay an agent and the
repository re-runs failures (``triage.rerun_failed``), it reports ``rerun_requested`` instead of
``triaged``. The quest stays ``sensed``, keeps the run that failed (``Quest.rerun``) and asks
for the re-run (``rerun_check``). The re-run's report, ``rerun_reported``, decides:

* passed — the failure was flaky: the quest ends ``abandoned`` with the outcome ``flaky`` and
  both runs as its evidence, and a person hears of it (``notify_inbox``); no agent ran;
* failed, or GitHub would not re-run it (``unavailable``, with the reason) — the quest is
  ``triaged`` on the route triage chose, and research follows at once, given both runs.
"""

from __future__ import annotations

from bot.core.effects import EffectType as E
from bot.core.errors import Refusal
from bot.core.events.signals import RerunReported, RerunRequested, RerunResult, ResearchStarted
from bot.core.policy import Policy
from bot.core.quest import Outcome, Quest, Rerun
from bot.core.rules.asks import Refused, Result, refuse
from bot.core.rules.main_line import research_follows as _research_follows
from bot.core.states import State

S = State


def may_rerun(q: Quest, _actor: str | None) -> Refused | None:
    if q.rerun is not None:
        return "the failed check was re-run already for this quest", Refusal.BAD_EVENT
    return None


def may_report_rerun(q: Quest, _actor: str | None) -> Refused | None:
    if q.rerun is None or q.rerun.result is not None:
        return "no re-run of the failed check is awaited", Refusal.BAD_EVENT
    return None


def rerun_requested(q: Quest, e: RerunRequested, _p: Policy) -> Result:
    why = may_rerun(q, e.actor)
    if why is not None:
        refuse(q, e, *why)
    rerun = Rerun(sha=e.sha, fingerprint=q.fingerprint, first=e.run, route=e.route)
    return q.evolve({"rerun": rerun, "held": None}), [
        (E.RERUN_CHECK, {"run": e.run, "sha": e.sha, "fingerprint": q.fingerprint})]


def rerun_reported(q: Quest, e: RerunReported, _p: Policy) -> Result:
    why = may_report_rerun(q, e.actor)
    if why is not None:
        refuse(q, e, *why)
    before = q.rerun
    assert before is not None  # may_report_rerun
    rerun = before.model_copy(update={"second": e.run, "result": e.result.value,
                                      "reason": e.reason})
    if e.result is RerunResult.PASSED:
        nq = q.evolve({"state": S.ABANDONED, "outcome": Outcome.FLAKY, "rerun": rerun,
                       "route": before.route, "passes": q.passes + 1, "flaky": q.flaky + 1})
        return nq, [(E.NOTIFY_INBOX, {"reason": flaky_reason(nq)})]
    return q.evolve({"state": S.TRIAGED, "route": before.route, "awaiting_person": False,
                     "rerun": rerun}), []


def research_follows(q: Quest, e: RerunReported) -> ResearchStarted | None:
    """A re-run that failed too (or could not run) starts research as triage would have."""
    return _research_follows(q, e)


def flaky_reason(q: Quest) -> str:
    """What people read about a flaky quest: which check, which commit, which runs."""
    rerun = q.rerun
    assert rerun is not None
    return (f"flaky: {rerun.fingerprint} failed on {rerun.sha[:12]} ({rerun.first}) and "
            f"passed when re-run on the same commit ({rerun.second or 'the re-run'}); no agent "
            f"was run. /quest fix on the failure's issue or a new failure starts one if it "
            f"is not flaky")
