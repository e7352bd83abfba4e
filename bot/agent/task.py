"""What an agent is asked (``AgentTask``) and what it answers (``AgentReply``), as JSON models.

Every agent kind speaks these two shapes: the ``command`` agent receives the task as JSON on
stdin and prints the reply as JSON on stdout; the ``scripted`` agent builds the reply in
process. The reply is data only. Nothing in it is executed, except the reproduction
``command``, which is an argv list run without a shell, by the proof runner's rules, in a
scratch checkout — the same treatment the repository's own configured checks get.

A reply is a claim, not a verdict: claims are validated against the checkout, the
reproduction is run on the base, the patch is verified by the repository's checks, all by
``bot.agent.stages``. ``status`` lets an agent end a run itself (``failed``, ``needs_human``,
``refused``) with a reason people will read.
"""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Protocol

from pydantic import BaseModel, ConfigDict, Field, field_validator

from bot.agent.scope import scope_path_problem
from bot.agent.validation import Claim, lexical_path_problem
from bot.core import Quest
from bot.core.proof import Risk

MAX_REASON_CHARS = 4_000


class Stage(StrEnum):
    RESEARCH = "research"
    REPRODUCE = "reproduce"
    PLAN = "plan"
    PATCH = "patch"


class ReplyStatus(StrEnum):
    OK = "ok"
    FAILED = "failed"
    NEEDS_HUMAN = "needs_human"
    REFUSED = "refused"


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class QuestBrief(_Model):
    """The part of a quest an agent may see: no owners, decisions or spend."""

    id: str
    repo: str
    title: str
    kind: str
    severity: str
    revision: int
    base: str | None
    head: str | None
    hypothesis: str | None
    reproduction: str | None
    reproduction_command: tuple[str, ...]
    plan: str | None
    risk: Risk
    attempts: int

    @classmethod
    def of(cls, quest: Quest) -> QuestBrief:
        return cls(
            id=quest.id, repo=quest.repo, title=quest.title, kind=quest.kind.value,
            severity=quest.severity.value, revision=quest.revision, base=quest.base,
            head=quest.head, hypothesis=quest.hypothesis, reproduction=quest.reproduction,
            reproduction_command=quest.reproduction_command, plan=quest.plan, risk=quest.risk,
            attempts=quest.attempts,
        )  # fmt: skip


class AgentTask(_Model):
    """The task handed to an agent. ``repair`` is the failing output of the last attempt (the
    proof's, or this run's own verify); ``revise`` is what a person asked to change."""

    stage: Stage
    quest: QuestBrief
    signal: str = ""
    checkout: str = "."
    """Where the checkout is; the command agent also runs with it as its working directory."""
    repair: str | None = None
    revise: str | None = None
    resumed: bool = False
    attempt: int = 1
    log: str | None = None
    """The failing CI job's log, when whoever started the run fetched one (untrusted text)."""
    status: str = ""
    """Seed 003's ``status_and_next`` as the stage starts (``StatusAndNext.text``): the
    quest's state, its gates with the evidence each needs and has, what each role may do and
    what comes next — the read an agent takes first and after every transition (a stage
    begins at one), in the words ``python -m bot status`` prints."""
    lessons: tuple[str, ...] = ()
    """What earlier quests in the repository taught, newest first, each accepted by the
    consolidation reviewer (``bot.lessons.runs``): context, and untrusted — a lesson was
    written by a model from text that came from outside."""


class ReproductionReply(_Model):
    name: str = Field(min_length=1, max_length=200)
    command: tuple[str, ...] = Field(min_length=1)
    files: dict[str, str] = Field(default_factory=dict)
    """Test files as contents; when empty, the checkout's changes are the reproduction."""


class PlanReply(_Model):
    summary: str = Field(min_length=1)
    risk: Risk = Risk.LOW
    files: tuple[str, ...] = ()
    """The files the change will touch: its scope. The patch may change these and no others
    (``bot.agent.scope``); none named leaves the patch unscoped."""

    @field_validator("files")
    @classmethod
    def _one_path_each(cls, files: tuple[str, ...]) -> tuple[str, ...]:
        for path in files:
            problem = lexical_path_problem(path) or scope_path_problem(path)
            if problem is not None:
                raise ValueError(f"{path!r} cannot be a file of the plan: {problem}")
        return files


class Usage(_Model):
    tokens: int = Field(default=0, ge=0)
    cost_cents: int = Field(default=0, ge=0)
    """What the receipts carry: whole cents, rounded up."""
    cost_usd: float | None = Field(default=None, ge=0)
    """The cost as the price gave it; ``None`` when no price is known."""

    @property
    def free(self) -> bool:
        """Tokens priced at zero (a local model): no charge, which is not an unknown price."""
        return self.tokens > 0 and self.cost_usd == 0

    def __add__(self, other: Usage) -> Usage:
        cost = (None if self.cost_usd is None and other.cost_usd is None
                else (self.cost_usd or 0.0) + (other.cost_usd or 0.0))
        return Usage(tokens=self.tokens + other.tokens,
                     cost_cents=self.cost_cents + other.cost_cents, cost_usd=cost)


class AgentReply(_Model):
    status: ReplyStatus = ReplyStatus.OK
    reason: str | None = Field(default=None, max_length=MAX_REASON_CHARS)
    hypothesis: str | None = None
    claims: tuple[Claim, ...] = ()
    reproduction: ReproductionReply | None = None
    plan: PlanReply | None = None
    files: dict[str, str | None] = Field(default_factory=dict)
    """The patch as contents (``None`` deletes); when empty, the checkout's changes are it."""
    message: str | None = None
    """The commit message for a pushed change."""
    usage: Usage | None = None

    @classmethod
    def failed(cls, reason: str, *, usage: Usage | None = None) -> AgentReply:
        return cls(status=ReplyStatus.FAILED, reason=reason[:MAX_REASON_CHARS], usage=usage)


class Agent(Protocol):
    """One agent kind. ``run`` may change files under ``checkout``; it must not raise for an
    agent's own failure (return ``AgentReply.failed``), only for the worker's."""

    async def run(self, task: AgentTask, checkout: Path) -> AgentReply: ...
