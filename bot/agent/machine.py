"""The agent-run machine: a pure transition table and the three rules beside it.

Theory of operation
-------------------

An agent run walks one pipeline, each stage owning one decision::

    discover -> understand -> validate -> plan -> execute -> verify -> review -> completed
                                           ^                    |          |
                                           +----- repair <------+----------+

The runner (the adapter that talks to the model, the checkout and the checks) does the work of
a stage and then reports what happened as a ``RunEvent``. ``step(run, event)`` returns the next
``AgentRun``; it performs no I/O, reads no clock and mints no ids (the event brings its id).

``TRANSITIONS`` below is the whole table: a mapping ``(state, event type) -> next state``. A
pair that is not in it is an illegal move: ``step`` raises ``IllegalMove`` naming the state,
the event and why (which stage the event belongs to, what the state accepts), and the caller
keeps the run it had, because runs are frozen. Terminal states (``completed``, ``failed``,
``needs_human``, ``refused``) have no entries at all: any event raises ``RunFinished``. A run
that has ended does not quietly absorb late reports; a late report is a runner bug worth
seeing.

Two events are defined in every non-terminal state: ``failed`` (the runner crashed, timed out
or was stopped) and ``escalated`` (the runner needs a person). So every non-terminal state can
reach ``failed`` and ``needs_human``. Everything else is the pipeline: executing can only go
on to verifying, so it cannot reach ``completed`` without passing through verify; planning can
only go on to executing (or be refused), so it cannot skip to review.

Three rules do not fit the table; they are applied, in this order, to the table's answer:

1. **Risk only rises.** Any event may carry a ``risk``; the run keeps the highest it has seen.
2. **High impact stops at needs_human.** If the run's risk is ``high`` and the table would move
   it into ``execute`` or ``completed``, it goes to ``needs_human`` instead. Reading, validating
   and planning stay allowed, so the person gets the evidence and the plan; no write happens
   and no high-impact run ever calls itself complete.
3. **Repair is bounded.** ``attempts`` counts entries into ``plan`` (the first plan is attempt
   1, every repair that re-plans adds one). When verification fails (``checks_failed``) or
   review sends the change back (``review_rejected``) the table says ``repair``; if
   ``attempts`` already equals ``max_attempts`` the run goes to ``failed`` instead, with a
   reason naming the count. So ``attempts`` never exceeds ``max_attempts``. We chose
   ``failed`` over ``needs_human`` here: ``needs_human`` means "the run is sound and a person
   must decide", whereas running out of attempts means the run could not make the repository's
   own checks pass; the quest core decides whether to park the quest and ask someone.

In ``repair`` the failing output (capped to its last ``MAX_CONTEXT_CHARS`` characters, where
test runners print their summary) is kept as ``repair_context``; the next plan reads it and a
successful ``checks_passed`` clears it.

Authorization refusal in plan (``plan_refused``) ends in ``refused`` with its reason: a
distinct outcome, never folded into ``failed``. Events that end a run or send it to repair
must say why (``REQUIRES_REASON``); the reason is kept on the run and reported.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from enum import StrEnum
from types import MappingProxyType
from typing import Self

from pydantic import BaseModel, ConfigDict, Field, model_validator

from bot.agent.errors import IllegalMove, RunFinished
from bot.core.diagram import state_diagram
from bot.core.proof import Risk

MAX_CONTEXT_CHARS = 20_000
"""How much failing output a repair keeps (the tail: runners print their summary last)."""


class RunState(StrEnum):
    DISCOVER = "discover"
    UNDERSTAND = "understand"
    VALIDATE = "validate"
    PLAN = "plan"
    EXECUTE = "execute"
    VERIFY = "verify"
    REVIEW = "review"
    REPAIR = "repair"
    COMPLETED = "completed"
    FAILED = "failed"
    NEEDS_HUMAN = "needs_human"
    REFUSED = "refused"


class EventType(StrEnum):
    DISCOVERED = "discovered"
    UNDERSTOOD = "understood"
    CLAIM_SUPPORTED = "claim_supported"
    CLAIM_INCONCLUSIVE = "claim_inconclusive"
    CLAIM_REJECTED = "claim_rejected"
    PLAN_AUTHORIZED = "plan_authorized"
    PLAN_REFUSED = "plan_refused"
    CHANGE_APPLIED = "change_applied"
    CHECKS_PASSED = "checks_passed"
    CHECKS_FAILED = "checks_failed"
    REVIEW_PASSED = "review_passed"
    REVIEW_REJECTED = "review_rejected"
    REPLAN = "replan"
    ESCALATED = "escalated"
    FAILED = "failed"


S = RunState
E = EventType

TERMINAL_STATES: frozenset[RunState] = frozenset({S.COMPLETED, S.FAILED, S.NEEDS_HUMAN, S.REFUSED})
ACTIVE_STATES: tuple[RunState, ...] = tuple(s for s in RunState if s not in TERMINAL_STATES)
PIPELINE: tuple[RunState, ...] = (
    S.DISCOVER, S.UNDERSTAND, S.VALIDATE, S.PLAN, S.EXECUTE, S.VERIFY, S.REVIEW,
)  # fmt: skip

_PIPELINE_MOVES: dict[tuple[RunState, EventType], RunState] = {
    (S.DISCOVER, E.DISCOVERED): S.UNDERSTAND,
    (S.UNDERSTAND, E.UNDERSTOOD): S.VALIDATE,
    (S.VALIDATE, E.CLAIM_SUPPORTED): S.PLAN,
    (S.VALIDATE, E.CLAIM_INCONCLUSIVE): S.NEEDS_HUMAN,
    (S.VALIDATE, E.CLAIM_REJECTED): S.FAILED,
    (S.PLAN, E.PLAN_AUTHORIZED): S.EXECUTE,
    (S.PLAN, E.PLAN_REFUSED): S.REFUSED,
    (S.EXECUTE, E.CHANGE_APPLIED): S.VERIFY,
    (S.VERIFY, E.CHECKS_PASSED): S.REVIEW,
    (S.VERIFY, E.CHECKS_FAILED): S.REPAIR,
    (S.REVIEW, E.REVIEW_PASSED): S.COMPLETED,
    (S.REVIEW, E.REVIEW_REJECTED): S.REPAIR,
    (S.REPAIR, E.REPLAN): S.PLAN,
}
_EVERYWHERE: dict[EventType, RunState] = {E.FAILED: S.FAILED, E.ESCALATED: S.NEEDS_HUMAN}

TRANSITIONS: Mapping[tuple[RunState, EventType], RunState] = MappingProxyType(
    _PIPELINE_MOVES
    | {(state, event): target for state in ACTIVE_STATES for event, target in _EVERYWHERE.items()}
)
"""The whole table. Terminal states have no entries: every event there raises."""

REQUIRES_REASON: frozenset[EventType] = frozenset(
    {E.CLAIM_INCONCLUSIVE, E.CLAIM_REJECTED, E.PLAN_REFUSED, E.REVIEW_REJECTED, E.ESCALATED,
     E.FAILED}
)  # fmt: skip
"""Events that end the run or send it back must say why; the reason is reported."""

REQUIRES_OUTPUT: frozenset[EventType] = frozenset({E.CHECKS_FAILED})
"""A failed verification must bring the failing output: it is the repair's context."""

_HOME: dict[EventType, RunState] = {event: state for (state, event) in _PIPELINE_MOVES}


class RunEvent(BaseModel):
    """What the runner reports after doing a stage's work."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = Field(min_length=1)
    type: EventType
    reason: str | None = None
    output: str | None = None
    risk: Risk | None = None

    @model_validator(mode="after")
    def _says_why(self) -> Self:
        if self.type in REQUIRES_REASON and not (self.reason and self.reason.strip()):
            raise ValueError(f"event {self.type.value!r} needs a non-empty reason")
        if self.type in REQUIRES_OUTPUT and self.output is None:
            raise ValueError(f"event {self.type.value!r} needs the failing output")
        return self


class Move(BaseModel):
    """One applied transition; ``rule`` names the rule that overrode the table, if any."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    event_id: str
    event: EventType
    source: RunState
    target: RunState
    rule: str | None = None


_RISK_ORDER = {Risk.LOW: 0, Risk.MEDIUM: 1, Risk.HIGH: 2}


class AgentRun(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    run_id: str = Field(min_length=1)
    state: RunState = RunState.DISCOVER
    max_attempts: int = Field(default=3, ge=1, le=100)
    attempts: int = Field(default=0, ge=0)
    risk: Risk = Risk.LOW
    reason: str | None = None
    """Why the run ended (terminal states other than completed)."""
    repair_context: str | None = None
    """The failing output the next plan must address."""
    history: tuple[Move, ...] = ()

    @model_validator(mode="after")
    def _bounded(self) -> Self:
        if self.attempts > self.max_attempts:
            raise ValueError(f"attempts {self.attempts} exceed max_attempts {self.max_attempts}")
        return self

    @property
    def finished(self) -> bool:
        return self.state in TERMINAL_STATES


def allowed_events(state: RunState) -> tuple[EventType, ...]:
    """The event types ``state`` accepts, in declaration order."""
    return tuple(event for event in EventType if (state, event) in TRANSITIONS)


def _why_undefined(state: RunState, event: EventType) -> str:
    if state in TERMINAL_STATES:
        return f"the run already ended as {state.value!r}; terminal states accept no events"
    accepted = ", ".join(e.value for e in allowed_events(state))
    home = _HOME[event]  # every event not defined everywhere has exactly one home state
    if home in PIPELINE and state in PIPELINE:
        here, there = PIPELINE.index(state), PIPELINE.index(home)
        if there > here:
            why = f"{state.value!r} cannot skip ahead to {home.value!r}"
        else:
            why = f"{event.value!r} belongs to {home.value!r}, which this attempt has left"
    else:
        why = f"{event.value!r} belongs to {home.value!r}"
    return f"{why}; {state.value!r} accepts: {accepted}"


def _max_risk(a: Risk, b: Risk | None) -> Risk:
    return a if b is None or _RISK_ORDER[a] >= _RISK_ORDER[b] else b


def step(run: AgentRun, event: RunEvent) -> AgentRun:
    """The run after ``event``; raises ``IllegalMove`` (run unchanged) for undefined moves."""
    target = TRANSITIONS.get((run.state, event.type))
    if target is None:
        error = RunFinished if run.finished else IllegalMove
        raise error(run.state.value, event.type.value, _why_undefined(run.state, event.type))

    risk = _max_risk(run.risk, event.risk)
    reason = event.reason
    rule: str | None = None
    if risk is Risk.HIGH and target in (S.EXECUTE, S.COMPLETED):
        target, rule = S.NEEDS_HUMAN, "high_impact"
        reason = f"high-impact change: a person must decide before {_verb(event.type)}"
    elif target is S.REPAIR and run.attempts >= run.max_attempts:
        target, rule = S.FAILED, "attempts_exhausted"
        last = event.reason or "checks failed"
        reason = f"attempts exhausted ({run.attempts} of {run.max_attempts}); last: {last}"

    attempts = run.attempts + 1 if target is S.PLAN else run.attempts
    context = run.repair_context
    if target is S.REPAIR:
        context = _tail(event.output if event.output is not None else (event.reason or ""))
    elif event.type is E.CHECKS_PASSED:
        context = None
    return run.model_copy(
        update={
            "state": target,
            "attempts": attempts,
            "risk": risk,
            "reason": reason if target in TERMINAL_STATES - {S.COMPLETED} else None,
            "repair_context": context,
            "history": (
                *run.history,
                Move(
                    event_id=event.id, event=event.type, source=run.state, target=target, rule=rule
                ),
            ),
        }
    )


def fold(run: AgentRun, events: Iterable[RunEvent]) -> AgentRun:
    """Apply ``events`` in order (replay); the first illegal one raises."""
    for event in events:
        run = step(run, event)
    return run


def _verb(event: EventType) -> str:
    return "executing" if event is E.PLAN_AUTHORIZED else "completing"


def _tail(text: str) -> str:
    return text[-MAX_CONTEXT_CHARS:]


def mermaid() -> str:
    """A Mermaid state diagram generated from ``TRANSITIONS`` (for the docs; never drawn by hand).

    The universal ``failed``/``escalated`` edges are summarised in a note to keep it readable.
    """
    return state_diagram(
        [(source.value, target.value, [event.value])
         for (source, event), target in _PIPELINE_MOVES.items()],
        start=[S.DISCOVER.value],
        ends=[state.value for state in RunState if state in TERMINAL_STATES],
        notes=[(S.DISCOVER.value, "every non-terminal state also takes\\n"
                "failed -> failed and escalated -> needs_human")],
    ) + "\n"
