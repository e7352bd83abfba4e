"""What a model hands in to end a stage: one typed answer per stage, or a halt.

Each is an output tool of the conversation (``answer`` and ``halt``), so the model's final
word is a JSON object checked against these models by pydantic-ai — a malformed one goes
back to the model as a retry — and then turned into the ``AgentReply`` every agent kind
gives (``to_reply``). The answer types reuse the reply's own parts (``Claim``,
``ReproductionReply``, ``PlanReply``), so there is one definition of a claim, a reproduction
and a plan.

A halt is the model saying it will not or cannot go on: ``refused`` (it will not do this
plan), ``needs_human`` (a person must decide: high impact, unclear evidence) or ``failed``
(it could not find an answer). Each stays a distinct outcome up to the quest's check run.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from bot.agent.task import (
    MAX_REASON_CHARS,
    AgentReply,
    PlanReply,
    ReplyStatus,
    ReproductionReply,
    Stage,
    Usage,
)
from bot.agent.validation import Claim


class _Answer(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class ResearchAnswer(_Answer):
    """The hypothesis, and the claims it rests on: each cites a file, a quote copied exactly
    from it and, where known, its line."""

    hypothesis: str = Field(min_length=1)
    claims: tuple[Claim, ...] = Field(min_length=1)


class ScopedPlan(PlanReply):
    """The plan: what to change, its risk, and the files it changes — the patch may change
    these and no others."""

    files: tuple[str, ...] = Field(min_length=1, description=(
        "the paths of the files the patch will change, relative to the checkout's root"))


class ReproduceAnswer(_Answer):
    """A test that fails on the base because of the bug, how to run it (its files are all it
    may change), and the plan."""

    reproduction: ReproductionReply
    plan: ScopedPlan


class PlanAnswer(_Answer):
    """A new plan for the reproduction that stands."""

    plan: ScopedPlan
    claims: tuple[Claim, ...] = ()


class PatchAnswer(_Answer):
    """The fix is written into the checkout with ``write_file``; this is its commit message."""

    message: str = Field(min_length=1, max_length=2_000)


class Halt(_Answer):
    """Stop without an answer, and say why a person should read."""

    status: Literal["refused", "needs_human", "failed"]
    reason: str = Field(min_length=1, max_length=MAX_REASON_CHARS)


Answer = ResearchAnswer | ReproduceAnswer | PlanAnswer | PatchAnswer

ANSWERS: dict[Stage, type[Answer]] = {
    Stage.RESEARCH: ResearchAnswer, Stage.REPRODUCE: ReproduceAnswer,
    Stage.PLAN: PlanAnswer, Stage.PATCH: PatchAnswer,
}  # fmt: skip


def to_reply(answer: Answer | Halt, usage: Usage | None = None) -> AgentReply:
    if isinstance(answer, Halt):
        return AgentReply(status=ReplyStatus(answer.status), reason=answer.reason, usage=usage)
    if isinstance(answer, ResearchAnswer):
        return AgentReply(hypothesis=answer.hypothesis, claims=answer.claims, usage=usage)
    if isinstance(answer, ReproduceAnswer):
        return AgentReply(reproduction=answer.reproduction, plan=answer.plan, usage=usage)
    if isinstance(answer, PlanAnswer):
        return AgentReply(plan=answer.plan, claims=answer.claims, usage=usage)
    return AgentReply(message=answer.message, usage=usage)
