"""Property tests: random event sequences never break the machine's promises."""

from __future__ import annotations

from hypothesis import event, given, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from bot.agent.errors import IllegalMove, RunFinished
from bot.agent.machine import (
    REQUIRES_OUTPUT,
    REQUIRES_REASON,
    TERMINAL_STATES,
    AgentRun,
    EventType,
    RunEvent,
    RunState,
    allowed_events,
    step,
)
from bot.core.proof import Risk

S, E = RunState, EventType


def make_event(kind: EventType, n: int, risk: Risk | None) -> RunEvent:
    return RunEvent(
        id=f"e{n}",
        type=kind,
        reason="why" if kind in REQUIRES_REASON else None,
        output="boom" if kind in REQUIRES_OUTPUT else None,
        risk=risk,
    )


def check_history(run: AgentRun) -> None:
    """Invariants over the whole recorded trajectory of ``run``."""
    assert run.attempts <= run.max_attempts
    plans = sum(1 for move in run.history if move.target is S.PLAN)
    assert plans == run.attempts
    checks_passed_since_change = False
    for move in run.history:
        if move.target is S.EXECUTE:
            checks_passed_since_change = False
        if move.event is E.CHECKS_PASSED:
            checks_passed_since_change = True
        if move.target is S.COMPLETED:
            assert move.source is S.REVIEW
            assert checks_passed_since_change, "completed without verification passing"
    if run.state is S.COMPLETED:
        assert run.risk is not Risk.HIGH


@settings(max_examples=300)
@given(
    max_attempts=st.integers(min_value=1, max_value=4),
    data=st.data(),
)
def test_random_sequences(max_attempts: int, data: st.DataObject) -> None:
    run = AgentRun(run_id="r", max_attempts=max_attempts)
    for n in range(40):
        allowed = allowed_events(run.state)
        if allowed and data.draw(st.integers(0, 9), label="dice") < 8:
            # lean on the pipeline's forward move so runs get deep (and sometimes complete)
            kind = data.draw(st.sampled_from(allowed[:1] * 12 + allowed))
        else:
            kind = data.draw(st.sampled_from(list(EventType)))
        risk = data.draw(st.sampled_from([None] * 30 + list(Risk)))
        before = run
        try:
            run = step(run, make_event(kind, n, risk))
        except IllegalMove as exc:
            error: IllegalMove = exc
        else:
            assert before.state not in TERMINAL_STATES, "a terminal state moved"
            if risk is Risk.HIGH or before.risk is Risk.HIGH:
                assert run.state not in (S.EXECUTE, S.COMPLETED)
            check_history(run)
            continue
        assert run is before
        assert (run.state in TERMINAL_STATES) == isinstance(error, RunFinished)
    event(f"ended in {run.state.value}")


class RunMachine(RuleBasedStateMachine):
    """Drives one run with legal events mostly; checks the invariants after every rule."""

    def __init__(self) -> None:
        super().__init__()
        self.run = AgentRun(run_id="r", max_attempts=2)
        self.n = 0

    @precondition(lambda self: not self.run.finished)
    @rule(data=st.data(), risk=st.sampled_from([None, None, None, Risk.MEDIUM, Risk.HIGH]))
    def legal(self, data: st.DataObject, risk: Risk | None) -> None:
        kind = data.draw(st.sampled_from(allowed_events(self.run.state)))
        self.n += 1
        self.run = step(self.run, make_event(kind, self.n, risk))

    @rule(kind=st.sampled_from(list(EventType)))
    def anything(self, kind: EventType) -> None:
        self.n += 1
        before = self.run
        try:
            self.run = step(self.run, make_event(kind, self.n, None))
        except IllegalMove:
            assert self.run is before

    @invariant()
    def promises_hold(self) -> None:
        check_history(self.run)


TestRunMachine = RunMachine.TestCase
