"""The agent-run machine, table-driven: every (state, event) pair, defined or not."""

from __future__ import annotations

import itertools

import pytest
from pydantic import ValidationError

from bot.agent.errors import IllegalMove, RunFinished
from bot.agent.machine import (
    ACTIVE_STATES,
    MAX_CONTEXT_CHARS,
    REQUIRES_OUTPUT,
    REQUIRES_REASON,
    TERMINAL_STATES,
    TRANSITIONS,
    AgentRun,
    EventType,
    RunEvent,
    RunState,
    allowed_events,
    fold,
    mermaid,
    step,
)
from bot.core.proof import Risk

S, E = RunState, EventType


def event(kind: EventType, n: int = 0, **fields: object) -> RunEvent:
    """A valid event of ``kind``: with a reason or output when the type needs one."""
    data: dict[str, object] = {"id": f"ev-{kind.value}-{n}", "type": kind}
    if kind in REQUIRES_REASON:
        data["reason"] = f"because {kind.value}"
    if kind in REQUIRES_OUTPUT:
        data["output"] = "FAILED tests/test_app.py::test_add"
    data.update(fields)
    return RunEvent.model_validate(data)


HAPPY = [
    E.DISCOVERED,
    E.UNDERSTOOD,
    E.CLAIM_SUPPORTED,
    E.PLAN_AUTHORIZED,
    E.CHANGE_APPLIED,
    E.CHECKS_PASSED,
    E.REVIEW_PASSED,
]


@pytest.mark.parametrize(
    ("state", "kind"), list(itertools.product(RunState, EventType)), ids=lambda v: v.value
)
def test_every_pair(state: RunState, kind: EventType) -> None:
    run = AgentRun(run_id="r1", state=state, attempts=1)
    before = run.model_copy(deep=True)
    target = TRANSITIONS.get((state, kind))
    if target is None:
        expected = RunFinished if state in TERMINAL_STATES else IllegalMove
        with pytest.raises(expected) as caught:
            step(run, event(kind))
        assert caught.value.state == state.value
        assert caught.value.event == kind.value
        assert state.value in str(caught.value)
        assert kind.value in str(caught.value)
        assert caught.value.reason
        assert run == before
    else:
        after = step(run, event(kind))
        assert after.state is target
        assert after.history[-1].source is state
        assert after.history[-1].target is target
        assert run == before  # the old run is untouched: runs are values


def test_terminal_states_have_no_entries_and_every_active_state_can_fail() -> None:
    for state in TERMINAL_STATES:
        assert allowed_events(state) == ()
    for state in ACTIVE_STATES:
        assert TRANSITIONS[(state, E.FAILED)] is S.FAILED
        assert TRANSITIONS[(state, E.ESCALATED)] is S.NEEDS_HUMAN


def _reachable(start: RunState, without: RunState) -> set[RunState]:
    seen, todo = {start}, [start]
    while todo:
        here = todo.pop()
        for (source, _), target in TRANSITIONS.items():
            if source is here and target is not without and target not in seen:
                seen.add(target)
                todo.append(target)
    return seen


def test_execute_cannot_reach_completed_without_verify() -> None:
    assert S.COMPLETED in _reachable(S.EXECUTE, without=S.FAILED)
    assert S.COMPLETED not in _reachable(S.EXECUTE, without=S.VERIFY)


def test_plan_cannot_skip_to_review() -> None:
    assert S.REVIEW not in _reachable(S.PLAN, without=S.VERIFY)
    assert S.REVIEW not in _reachable(S.PLAN, without=S.EXECUTE)
    run = AgentRun(run_id="r1", state=S.PLAN, attempts=1)
    with pytest.raises(IllegalMove, match="'plan' cannot skip ahead to 'review'"):
        step(run, event(E.REVIEW_PASSED))


def test_execute_cannot_claim_completion() -> None:
    run = AgentRun(run_id="r1", state=S.EXECUTE, attempts=1)
    with pytest.raises(IllegalMove, match="'execute' cannot skip ahead to 'review'") as caught:
        step(run, event(E.REVIEW_PASSED))
    assert "accepts: change_applied, escalated, failed" in str(caught.value)


def test_late_event_names_the_stage_it_belongs_to() -> None:
    run = AgentRun(run_id="r1", state=S.REVIEW, attempts=1)
    with pytest.raises(IllegalMove, match="'checks_passed' belongs to 'verify'"):
        step(run, event(E.CHECKS_PASSED))


def test_terminal_state_refuses_with_run_finished() -> None:
    done = fold(AgentRun(run_id="r1"), [event(kind) for kind in HAPPY])
    with pytest.raises(RunFinished, match="already ended as 'completed'"):
        step(done, event(E.FAILED))


def test_happy_path() -> None:
    done = fold(AgentRun(run_id="r1"), [event(kind) for kind in HAPPY])
    assert done.state is S.COMPLETED
    assert done.attempts == 1
    assert done.reason is None
    assert [move.target for move in done.history] == [
        S.UNDERSTAND, S.VALIDATE, S.PLAN, S.EXECUTE, S.VERIFY, S.REVIEW, S.COMPLETED,
    ]  # fmt: skip
    assert all(move.rule is None for move in done.history)


def _to_verify(run: AgentRun) -> AgentRun:
    return fold(run, [event(k) for k in HAPPY[:5]])


def test_repair_reenters_plan_with_the_failing_output() -> None:
    run = _to_verify(AgentRun(run_id="r1", max_attempts=3))
    repairing = step(run, event(E.CHECKS_FAILED, output="assert 3 == 4"))
    assert repairing.state is S.REPAIR
    assert repairing.repair_context == "assert 3 == 4"
    planning = step(repairing, event(E.REPLAN))
    assert planning.state is S.PLAN
    assert planning.attempts == 2
    assert planning.repair_context == "assert 3 == 4"
    verified = fold(planning, [event(k, 1) for k in HAPPY[3:6]])
    assert verified.state is S.REVIEW
    assert verified.repair_context is None


def test_repair_context_keeps_the_tail() -> None:
    run = _to_verify(AgentRun(run_id="r1"))
    output = "x" * MAX_CONTEXT_CHARS + "SUMMARY: 1 failed"
    repairing = step(run, event(E.CHECKS_FAILED, output=output))
    assert repairing.repair_context is not None
    assert repairing.repair_context.endswith("SUMMARY: 1 failed")
    assert len(repairing.repair_context) == MAX_CONTEXT_CHARS


def test_attempts_exhausted_fails() -> None:
    run = _to_verify(AgentRun(run_id="r1", max_attempts=2))
    run = fold(run, [event(E.CHECKS_FAILED), event(E.REPLAN)])
    run = fold(run, [event(E.PLAN_AUTHORIZED, 2), event(E.CHANGE_APPLIED, 2)])
    assert run.attempts == 2
    failed = step(run, event(E.CHECKS_FAILED, 2))
    assert failed.state is S.FAILED
    assert failed.history[-1].rule == "attempts_exhausted"
    assert failed.reason is not None
    assert failed.reason.startswith("attempts exhausted (2 of 2)")


def test_review_rejection_also_repairs_and_is_bounded() -> None:
    run = fold(AgentRun(run_id="r1", max_attempts=1), [event(k) for k in HAPPY[:6]])
    failed = step(run, event(E.REVIEW_REJECTED, reason="touched files outside the scope"))
    assert failed.state is S.FAILED
    assert failed.reason == "attempts exhausted (1 of 1); last: touched files outside the scope"


@pytest.mark.parametrize("stage", [E.UNDERSTOOD, E.CLAIM_SUPPORTED, E.PLAN_AUTHORIZED])
def test_high_risk_never_executes(stage: EventType) -> None:
    run = AgentRun(run_id="r1")
    for kind in HAPPY[:4]:
        run = step(run, event(kind, risk=Risk.HIGH if kind is stage else None))
    assert run.state is S.NEEDS_HUMAN
    assert run.risk is Risk.HIGH
    assert run.history[-1].rule == "high_impact"
    assert run.reason == "high-impact change: a person must decide before executing"


def test_high_risk_found_in_review_stops_before_completed() -> None:
    run = fold(AgentRun(run_id="r1"), [event(k) for k in HAPPY[:6]])
    stopped = step(run, event(E.REVIEW_PASSED, risk=Risk.HIGH))
    assert stopped.state is S.NEEDS_HUMAN
    assert stopped.reason == "high-impact change: a person must decide before completing"


def test_risk_only_rises() -> None:
    run = step(AgentRun(run_id="r1"), event(E.DISCOVERED, risk=Risk.MEDIUM))
    run = step(run, event(E.UNDERSTOOD, risk=Risk.LOW))
    assert run.risk is Risk.MEDIUM


def test_refusal_is_its_own_outcome() -> None:
    run = fold(AgentRun(run_id="r1"), [event(k) for k in HAPPY[:3]])
    refused = step(run, event(E.PLAN_REFUSED, reason="author lacks write access"))
    assert refused.state is S.REFUSED
    assert refused.reason == "author lacks write access"


@pytest.mark.parametrize("kind", sorted(REQUIRES_REASON))
def test_events_that_end_or_send_back_need_a_reason(kind: EventType) -> None:
    with pytest.raises(ValidationError, match="needs a non-empty reason"):
        RunEvent(id="e", type=kind, reason="   ", output="x")


def test_failed_checks_need_their_output() -> None:
    with pytest.raises(ValidationError, match="failing output"):
        RunEvent(id="e", type=E.CHECKS_FAILED)


def test_run_round_trips_through_json() -> None:
    run = fold(AgentRun(run_id="r1"), [event(k) for k in HAPPY[:5]])
    run = step(run, event(E.CHECKS_FAILED))
    assert AgentRun.model_validate_json(run.model_dump_json()) == run


def test_mermaid_is_generated_from_the_table() -> None:
    text = mermaid()
    for (source, kind), target in TRANSITIONS.items():
        if kind not in (E.FAILED, E.ESCALATED):
            assert f"{source.value} --> {target.value}: {kind.value}" in text
