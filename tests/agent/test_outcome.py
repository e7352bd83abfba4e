"""Terminal results map deterministically to outcomes and to GitHub check-run conclusions."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bot.agent.machine import TERMINAL_STATES, RunState
from bot.agent.outcome import (
    CONCLUSION_BY_OUTCOME,
    OUTCOME_BY_STATE,
    CheckConclusion,
    RunOutcome,
    check_run_report,
    outcome_of,
)
from bot.agent.result import AppliedChange, TaskResult
from bot.core.proof import CheckRecord

OPENAPI = Path(__file__).parents[3] / "shared" / "github" / "rest-subset.openapi.json"
CHANGE = AppliedChange(base="a" * 40, head="b" * 40, files=("f",))
PASS = CheckRecord(name="t", command=("true",), exit_code=0, output_sha256="c" * 64)
FAIL = CheckRecord(name="t", command=("false",), exit_code=1, output_sha256="c" * 64)


def test_every_terminal_state_has_one_outcome_and_every_outcome_a_conclusion() -> None:
    assert set(OUTCOME_BY_STATE) == set(TERMINAL_STATES)
    assert set(CONCLUSION_BY_OUTCOME) == set(RunOutcome)


def test_conclusions_are_githubs_vocabulary() -> None:
    if not OPENAPI.exists():
        pytest.skip("the shared REST description is not checked out")
    schema = json.loads(OPENAPI.read_text())["components"]["schemas"]["check-run"]
    assert set(schema["properties"]["conclusion"]["enum"]) == {c.value for c in CheckConclusion}


@pytest.mark.parametrize(
    ("result", "outcome", "conclusion", "says"),
    [
        (
            TaskResult(run_id="r", state=RunState.COMPLETED, change=CHANGE, checks=(PASS,)),
            RunOutcome.SUCCESS,
            CheckConclusion.SUCCESS,
            "verified: the change was applied and all 1 check passed.",
        ),
        (
            TaskResult(run_id="r", state=RunState.FAILED, reason="attempts exhausted (3 of 3)"),
            RunOutcome.FAILURE,
            CheckConclusion.FAILURE,
            "failed: attempts exhausted \\(3 of 3\\).",
        ),
        (
            TaskResult(run_id="r", state=RunState.NEEDS_HUMAN, reason="high-impact change"),
            RunOutcome.ACTION_REQUIRED,
            CheckConclusion.ACTION_REQUIRED,
            "needs a person: high\\-impact change.",
        ),
        (
            TaskResult(run_id="r", state=RunState.REFUSED, reason="no write access"),
            RunOutcome.REFUSED,
            CheckConclusion.NEUTRAL,
            "GitHub has no conclusion for refusal, so this shows as neutral.",
        ),
        (
            TaskResult(run_id="r", state=RunState.COMPLETED, change=CHANGE, checks=(PASS, FAIL)),
            RunOutcome.UNVERIFIED,
            CheckConclusion.NEUTRAL,
            "completed but not verified: check 't' failed \\(exit 1\\). GitHub has no conclusion",
        ),
        (
            TaskResult(run_id="r", state=RunState.COMPLETED, change=CHANGE),
            RunOutcome.UNVERIFIED,
            CheckConclusion.NEUTRAL,
            "no checks were executed",
        ),
    ],
)
def test_mapping(
    result: TaskResult, outcome: RunOutcome, conclusion: CheckConclusion, says: str
) -> None:
    assert outcome_of(result) is outcome
    report = check_run_report(result)
    assert report.conclusion is conclusion
    assert says in report.summary


def test_success_conclusion_only_when_verified() -> None:
    for state in TERMINAL_STATES:
        for change in (None, CHANGE):
            for checks in ((), (PASS,), (PASS, FAIL)):
                result = TaskResult(run_id="r", state=state, change=change, checks=checks)
                is_success = check_run_report(result).conclusion is CheckConclusion.SUCCESS
                assert is_success is result.verified
