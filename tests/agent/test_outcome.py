"""Terminal results map deterministically to provider-neutral outcomes (their GitHub check-run
conclusions are tested with the renderer, in ``tests/words/test_check_run.py``)."""

from __future__ import annotations

import pytest

from bot.agent.machine import TERMINAL_STATES, RunState
from bot.agent.outcome import OUTCOME_BY_STATE, RunOutcome, outcome_of
from bot.agent.result import AppliedChange, TaskResult
from bot.core.proof import CheckRecord

CHANGE = AppliedChange(base="a" * 40, head="b" * 40, files=("f",))
PASS = CheckRecord(name="t", command=("true",), exit_code=0, output_sha256="c" * 64)
FAIL = CheckRecord(name="t", command=("false",), exit_code=1, output_sha256="c" * 64)


def test_every_terminal_state_has_one_outcome() -> None:
    assert set(OUTCOME_BY_STATE) == set(TERMINAL_STATES)


@pytest.mark.parametrize(
    ("result", "outcome"),
    [
        (TaskResult(run_id="r", state=RunState.COMPLETED, change=CHANGE, checks=(PASS,)),
         RunOutcome.SUCCESS),
        (TaskResult(run_id="r", state=RunState.FAILED, reason="attempts exhausted (3 of 3)"),
         RunOutcome.FAILURE),
        (TaskResult(run_id="r", state=RunState.NEEDS_HUMAN, reason="high-impact change"),
         RunOutcome.ACTION_REQUIRED),
        (TaskResult(run_id="r", state=RunState.REFUSED, reason="no write access"),
         RunOutcome.REFUSED),
        (TaskResult(run_id="r", state=RunState.COMPLETED, change=CHANGE, checks=(PASS, FAIL)),
         RunOutcome.UNVERIFIED),
        (TaskResult(run_id="r", state=RunState.COMPLETED, change=CHANGE), RunOutcome.UNVERIFIED),
        (TaskResult(run_id="r", state=RunState.COMPLETED, checks=(PASS,)), RunOutcome.UNVERIFIED),
    ],
)
def test_outcome_of(result: TaskResult, outcome: RunOutcome) -> None:
    assert outcome_of(result) is outcome


def test_success_only_when_verified() -> None:
    for state in TERMINAL_STATES:
        for change in (None, CHANGE):
            for checks in ((), (PASS,), (PASS, FAIL)):
                result = TaskResult(run_id="r", state=state, change=change, checks=checks)
                assert (outcome_of(result) is RunOutcome.SUCCESS) is result.verified
