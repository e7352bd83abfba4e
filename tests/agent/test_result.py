"""``TaskResult.verified`` is derived in one place and cannot be asserted."""

from __future__ import annotations

import itertools

import pytest
from pydantic import ValidationError

from bot.agent.errors import RunNotFinished
from bot.agent.machine import TERMINAL_STATES, AgentRun, RunState
from bot.agent.result import AppliedChange, TaskResult
from bot.core.proof import CheckRecord

DIGEST = "a" * 64
CHANGE = AppliedChange(base="b" * 40, head="c" * 40, files=("src/app.py",))


def check(name: str, exit_code: int) -> CheckRecord:
    return CheckRecord(name=name, command=("pytest",), exit_code=exit_code, output_sha256=DIGEST)


CHECK_SETS: dict[str, tuple[CheckRecord, ...]] = {
    "none": (),
    "all_pass": (check("lint", 0), check("test", 0)),
    "one_fails": (check("lint", 0), check("test", 1)),
    # a mutation pass found that checking only the last check survived every fixture above
    # (the failing check was always last): the failing one first, and in the middle
    "first_fails": (check("lint", 2), check("test", 0), check("types", 0)),
    "middle_fails": (check("lint", 0), check("test", 1), check("types", 0)),
}


@pytest.mark.parametrize(
    ("state", "change", "checks"),
    list(itertools.product(sorted(TERMINAL_STATES), [None, CHANGE], CHECK_SETS)),
)
def test_verified_matrix(state: RunState, change: AppliedChange | None, checks: str) -> None:
    result = TaskResult(run_id="r", state=state, change=change, checks=CHECK_SETS[checks])
    expected = state is RunState.COMPLETED and change is not None and checks == "all_pass"
    assert result.verified is expected
    assert (result.verification_gaps() == ()) is expected


def test_gaps_say_why() -> None:
    result = TaskResult(run_id="r", state=RunState.FAILED, checks=CHECK_SETS["one_fails"])
    assert result.verification_gaps() == (
        "the run failed and did not complete",
        "no change was applied",
        "check 'test' failed (exit 1)",
    )


@pytest.mark.parametrize(("checks", "failing"), [("first_fails", "check 'lint' failed (exit 2)"),
                                                 ("middle_fails", "check 'test' failed (exit 1)")])
def test_a_failing_check_before_the_last_is_a_gap(checks: str, failing: str) -> None:
    result = TaskResult(run_id="r", state=RunState.COMPLETED, change=CHANGE,
                        checks=CHECK_SETS[checks])
    assert result.verification_gaps() == (failing,) and not result.verified


def test_verified_cannot_be_asserted() -> None:
    with pytest.raises(ValidationError, match="verified is derived, not set"):
        TaskResult(run_id="r", state=RunState.COMPLETED, change=CHANGE, verified=True)  # type: ignore[call-arg]
    with pytest.raises(ValidationError, match="verified is derived"):
        TaskResult.model_validate(
            {"run_id": "r", "state": "failed", "verified": 1}
        )  # truthy is not True


def test_verified_cannot_be_forced_after_construction() -> None:
    result = TaskResult(run_id="r", state=RunState.FAILED)
    with pytest.raises(ValidationError):
        result.verified = True  # type: ignore[misc]
    assert result.model_copy(update={"verified": True}).verified is False


def test_round_trip_keeps_the_derivation() -> None:
    result = TaskResult(
        run_id="r", state=RunState.COMPLETED, change=CHANGE, checks=CHECK_SETS["all_pass"]
    )
    dumped = result.model_dump(mode="json")
    assert dumped["verified"] is True
    assert TaskResult.model_validate(dumped) == result
    assert TaskResult.model_validate_json(result.model_dump_json()) == result


def test_a_tampered_dump_is_refused() -> None:
    result = TaskResult(
        run_id="r", state=RunState.COMPLETED, change=CHANGE, checks=CHECK_SETS["one_fails"]
    )
    dumped = result.model_dump(mode="json")
    dumped["verified"] = True
    with pytest.raises(ValidationError, match="check 'test' failed"):
        TaskResult.model_validate(dumped)


def test_only_terminal_runs_have_results() -> None:
    with pytest.raises(RunNotFinished, match="still in state 'verify'"):
        TaskResult.from_run(AgentRun(run_id="r", state=RunState.VERIFY))
    with pytest.raises(RunNotFinished):
        TaskResult(run_id="r", state=RunState.REVIEW)


def test_from_run_copies_the_run() -> None:
    run = AgentRun(run_id="r", state=RunState.FAILED, attempts=2, reason="boom")
    result = TaskResult.from_run(run, checks=CHECK_SETS["all_pass"])
    assert (result.run_id, result.state, result.attempts, result.reason) == (
        "r",
        run.state,
        2,
        "boom",
    )
    assert result.verified is False


def test_an_unmoved_head_is_not_a_change() -> None:
    with pytest.raises(ValidationError, match="no change was applied"):
        AppliedChange(base="a", head="a", files=("x",))
    with pytest.raises(ValidationError):
        AppliedChange(base="a", head="b", files=())


def test_every_way_a_run_ends_has_words_without_an_identifier() -> None:
    """The gaps are shown to people: "stopped for a person's decision", never "needs_human"
    or "needs human"."""
    from bot.agent.result import RUN_ENDED

    assert set(RUN_ENDED) == set(TERMINAL_STATES)
    for state in TERMINAL_STATES - {RunState.COMPLETED}:
        (gap, *_) = TaskResult(run_id="r", state=state).verification_gaps()
        assert "_" not in gap and "needs" not in gap and "not completed" not in gap, gap
