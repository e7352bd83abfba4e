"""From a terminal result to a provider-neutral outcome, and from that to a GitHub check run.

Each terminal state maps to one outcome (``OUTCOME_BY_STATE``). There is one deliberate
exception, decided from the derived ``verified`` flag and nothing else: a ``completed`` run
that is not verified (no change, no checks, a failing check) is ``unverified``, never
``success``. That keeps "a failed verification is never presented as success" true at the
forge as well as in the report.

A provider adapter translates outcomes into its own vocabulary. For GitHub check runs that is
``CONCLUSION_BY_OUTCOME``. GitHub has no conclusion for two of our outcomes, so both show as
``neutral`` and the summary says so in words:

* ``refused`` — the plan was not authorised. ``failure`` would blame the change, ``skipped``
  would hide that a decision was made; ``neutral`` plus a sentence is the honest rendering.
* ``unverified`` — the run finished but proved nothing. ``success`` would lie, ``failure``
  would claim a check failed when perhaps none ran.

``cancelled``, ``timed_out`` and ``skipped`` are listed for completeness of the vocabulary;
no agent outcome maps to them (a timeout ends the run ``failed`` with its reason).
"""

from __future__ import annotations

from enum import StrEnum
from types import MappingProxyType

from pydantic import BaseModel, ConfigDict, Field

from bot.agent.machine import RunState
from bot.agent.markdown import plain
from bot.agent.result import TaskResult


class RunOutcome(StrEnum):
    SUCCESS = "success"
    FAILURE = "failure"
    ACTION_REQUIRED = "action_required"
    REFUSED = "refused"
    UNVERIFIED = "unverified"


class CheckConclusion(StrEnum):
    """GitHub's check-run conclusions, as the REST API spells them."""

    SUCCESS = "success"
    FAILURE = "failure"
    NEUTRAL = "neutral"
    CANCELLED = "cancelled"
    TIMED_OUT = "timed_out"
    ACTION_REQUIRED = "action_required"
    SKIPPED = "skipped"


OUTCOME_BY_STATE = MappingProxyType(
    {
        RunState.COMPLETED: RunOutcome.SUCCESS,
        RunState.FAILED: RunOutcome.FAILURE,
        RunState.NEEDS_HUMAN: RunOutcome.ACTION_REQUIRED,
        RunState.REFUSED: RunOutcome.REFUSED,
    }
)

CONCLUSION_BY_OUTCOME = MappingProxyType(
    {
        RunOutcome.SUCCESS: CheckConclusion.SUCCESS,
        RunOutcome.FAILURE: CheckConclusion.FAILURE,
        RunOutcome.ACTION_REQUIRED: CheckConclusion.ACTION_REQUIRED,
        RunOutcome.REFUSED: CheckConclusion.NEUTRAL,
        RunOutcome.UNVERIFIED: CheckConclusion.NEUTRAL,
    }
)

_TITLES = {
    RunOutcome.SUCCESS: "Verified",
    RunOutcome.FAILURE: "Failed",
    RunOutcome.ACTION_REQUIRED: "Needs a person",
    RunOutcome.REFUSED: "Refused",
    RunOutcome.UNVERIFIED: "Completed, not verified",
}


def outcome_of(result: TaskResult) -> RunOutcome:
    """The provider-neutral outcome of ``result`` (a terminal result by construction)."""
    outcome = OUTCOME_BY_STATE[result.state]
    if outcome is RunOutcome.SUCCESS and not result.verified:
        return RunOutcome.UNVERIFIED
    return outcome


class CheckRunReport(BaseModel):
    """What the GitHub adapter sends as a check run's ``conclusion`` and ``output``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    conclusion: CheckConclusion
    title: str = Field(max_length=200)
    summary: str


def _summary(outcome: RunOutcome, result: TaskResult) -> str:
    why = plain(result.reason or "no reason was given")
    gaps = plain("; ".join(result.verification_gaps()))
    if outcome is RunOutcome.SUCCESS:
        count = len(result.checks)
        plural = "s" if count != 1 else ""
        return f"verified: the change was applied and all {count} check{plural} passed."
    if outcome is RunOutcome.FAILURE:
        return f"failed: {why}."
    if outcome is RunOutcome.ACTION_REQUIRED:
        return f"needs a person: {why}. Nothing was written past this point."
    if outcome is RunOutcome.REFUSED:
        return (
            f"refused: the plan was not authorised ({why}). GitHub has no conclusion for "
            "refusal, so this shows as neutral."
        )
    return (
        f"completed but not verified: {gaps}. GitHub has no conclusion for a run that "
        "finished without proving its change, so this shows as neutral."
    )


def check_run_report(result: TaskResult) -> CheckRunReport:
    """The GitHub check-run conclusion, title and one-sentence summary for ``result``."""
    outcome = outcome_of(result)
    return CheckRunReport(
        conclusion=CONCLUSION_BY_OUTCOME[outcome],
        title=f"questbot: {_TITLES[outcome]}",
        summary=_summary(outcome, result),
    )
