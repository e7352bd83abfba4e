"""The evidence bundle of a run: what a person needs to judge it.

An ``EvidenceBundle`` gathers the hypothesis, every claim with the verdict validation gave it
(and all its reasons), the reproduction, the plan, and the terminal ``TaskResult`` with its
checks (exit codes and output digests), and the tail of what each proof command printed
(``CommandOutput``): a digest binds the output, but a person reads the words. The bundle has
no ``verified`` of its own to set: ``bundle.verified`` is the result's derived flag.

The bundle is provider-neutral: how it reads on GitHub (the Markdown of the status comment
and the check run) is the GitHub adapter's business (its ``evidence`` module).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from bot.agent.result import TaskResult
from bot.agent.validation import ClaimVerdict
from bot.core.proof import CheckRecord, Reproduction

OUTPUT_TAIL = 4_000
"""Characters kept of what one proof command printed: the end, where a failure says why."""


class CommandOutput(BaseModel):
    """One command the proof ran — where (``head`` or ``base``), its argv, its exit code — and
    the tail of what it printed."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    at: str
    command: tuple[str, ...]
    exit_code: int
    tail: str = ""
    truncated: bool = False
    """More was printed than ``tail`` holds."""

    @classmethod
    def of(cls, *, name: str, at: str, command: tuple[str, ...], exit_code: int, output: str,
           truncated: bool = False) -> CommandOutput:
        cut = len(output) > OUTPUT_TAIL
        return cls(name=name, at=at, command=command, exit_code=exit_code,
                   tail=output[-OUTPUT_TAIL:], truncated=truncated or cut)


class EvidenceBundle(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    hypothesis: str
    claims: tuple[ClaimVerdict, ...] = ()
    reproduction: Reproduction | None = None
    plan: str | None = None
    result: TaskResult
    proof_digest: str | None = None
    outputs: tuple[CommandOutput, ...] = ()
    """What the latest proof's commands printed, in the order they ran."""
    lines: tuple[int, int] | None = None
    """Lines the change adds and removes, as the latest proof saw it (``None``: not known)."""

    @property
    def checks(self) -> tuple[CheckRecord, ...]:
        return self.result.checks

    @property
    def verified(self) -> bool:
        return self.result.verified
