"""The terminal result of an agent run, and the one place ``verified`` is decided.

``TaskResult.verified`` is a computed property over the result's own fields, derived in
``verification_gaps`` and nowhere else. A result is verified exactly when it has no gaps:

* the run ended ``completed``;
* a change was applied (``change`` is present: a head different from the base, files touched);
* at least one check was executed, and every executed check exited 0.

The seed says "every executed check passing"; it is silent on a run that executed none. We
read that as *not* verified: "verified" must mean the repository's own checks ran and passed,
not that nothing contradicted the run.

No caller can set ``verified``. The constructor accepts a ``verified`` key only so that a
dumped result round-trips through JSON, and only when it agrees with the derivation; a
disagreeing value (a branch trying to assert verification it did not earn) is a validation
error. The model is frozen, and ``model_copy(update=...)`` cannot shadow a property.
"""

from __future__ import annotations

from typing import Any, Self

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ModelWrapValidatorHandler,
    computed_field,
    model_validator,
)

from bot.agent.errors import RunNotFinished
from bot.agent.machine import TERMINAL_STATES, AgentRun, RunState
from bot.core.proof import CheckRecord, Risk

_ABSENT = object()


class AppliedChange(BaseModel):
    """What execute changed: the commit it produced on top of ``base`` and the files touched."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    base: str = Field(min_length=1)
    head: str = Field(min_length=1)
    files: tuple[str, ...] = Field(min_length=1)

    @model_validator(mode="after")
    def _moved(self) -> Self:
        if self.head == self.base:
            raise ValueError(f"head {self.head!r} equals base: no change was applied")
        return self


RUN_ENDED: dict[RunState, str] = {
    RunState.COMPLETED: "completed",
    RunState.FAILED: "failed",
    RunState.NEEDS_HUMAN: "stopped for a person's decision",
    RunState.REFUSED: "refused its plan",
}
"""How a run ended, in people's words and in the past tense: the evidence shows them long
after the run, when the quest may have ended too, so none says that anything still waits
("needs human" read as an identifier, and as a wait)."""


class TaskResult(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    run_id: str
    state: RunState
    reason: str | None = None
    attempts: int = Field(default=0, ge=0)
    risk: Risk = Risk.LOW
    change: AppliedChange | None = None
    checks: tuple[CheckRecord, ...] = ()

    @model_validator(mode="wrap")
    @classmethod
    def _verified_is_derived(cls, data: Any, handler: ModelWrapValidatorHandler[Self]) -> Self:
        claimed: object = _ABSENT
        if isinstance(data, dict) and "verified" in data:
            data = dict(data)
            claimed = data.pop("verified")
        result = handler(data)
        if claimed is not _ABSENT and claimed is not result.verified:
            raise ValueError(
                f"verified is derived, not set: the input says {claimed!r} but the result "
                f"derives {result.verified!r} ({'; '.join(result.verification_gaps()) or 'ok'})"
            )
        return result

    @model_validator(mode="after")
    def _terminal(self) -> Self:
        if self.state not in TERMINAL_STATES:
            raise RunNotFinished(self.state.value)
        return self

    def verification_gaps(self) -> tuple[str, ...]:
        """Everything standing between this result and ``verified`` (empty when verified)."""
        gaps: list[str] = []
        if self.state is not RunState.COMPLETED:
            gaps.append(f"the run {RUN_ENDED[self.state]} and did not complete")
        if self.change is None:
            gaps.append("no change was applied")
        if not self.checks:
            gaps.append("no checks were executed")
        gaps.extend(
            f"check {check.name!r} failed (exit {check.exit_code})"
            for check in self.checks
            if not check.passed
        )
        return tuple(gaps)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def verified(self) -> bool:
        return not self.verification_gaps()

    @classmethod
    def from_run(
        cls,
        run: AgentRun,
        *,
        change: AppliedChange | None = None,
        checks: tuple[CheckRecord, ...] = (),
    ) -> TaskResult:
        """The result of a finished ``run``; raises ``RunNotFinished`` for a run still going."""
        if not run.finished:
            raise RunNotFinished(run.state.value)
        return cls(
            run_id=run.run_id,
            state=run.state,
            reason=run.reason,
            attempts=run.attempts,
            risk=run.risk,
            change=change,
            checks=checks,
        )
