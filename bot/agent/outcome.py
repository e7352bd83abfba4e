"""From a terminal result to a provider-neutral outcome.

Each terminal state maps to one outcome (``OUTCOME_BY_STATE``). There is one deliberate
exception, decided from the derived ``verified`` flag and nothing else: a ``completed`` run
that is not verified (no change, no checks, a failing check) is ``unverified``, never
``success``. That keeps "a failed verification is never presented as success" true at the
forge as well as in the report.

Seed 002: outcomes are mapped to the forge's vocabulary in the forge's adapter, never here.
For GitHub that is the adapter's ``render`` module (``CONCLUSION_BY_OUTCOME``: check-run
conclusions, with a sentence for each outcome GitHub has no conclusion for).
"""

from __future__ import annotations

from enum import StrEnum
from types import MappingProxyType

from bot.agent.machine import RunState
from bot.agent.result import TaskResult


class RunOutcome(StrEnum):
    SUCCESS = "success"
    FAILURE = "failure"
    ACTION_REQUIRED = "action_required"
    REFUSED = "refused"
    UNVERIFIED = "unverified"


OUTCOME_BY_STATE = MappingProxyType(
    {
        RunState.COMPLETED: RunOutcome.SUCCESS,
        RunState.FAILED: RunOutcome.FAILURE,
        RunState.NEEDS_HUMAN: RunOutcome.ACTION_REQUIRED,
        RunState.REFUSED: RunOutcome.REFUSED,
    }
)


def outcome_of(result: TaskResult) -> RunOutcome:
    """The provider-neutral outcome of ``result`` (a terminal result by construction)."""
    outcome = OUTCOME_BY_STATE[result.state]
    if outcome is RunOutcome.SUCCESS and not result.verified:
        return RunOutcome.UNVERIFIED
    return outcome
