"""The ``scripted`` agent: deterministic answers from a small spec, for the demo and the tests.

It is an agent like any other: it gets the same ``AgentTask``, works in the same checkout and
answers with the same ``AgentReply``, so everything downstream (claim validation against the
checkout, running the reproduction on the base, verify and review of the patch, the push) is
exercised for real. Only the thinking is scripted. A spec whose claims quote lines that are
not in the repository is rejected by validation exactly as a model's would be.

The patch is written into the checkout (``patch_files`` as whole contents, ``patch_edits`` as
exact replacements that must match once), not returned as contents, so the same "read the
checkout's changes" path the command agent uses carries it to GitHub.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from bot.agent.task import (
    AgentReply,
    AgentTask,
    PlanReply,
    ReplyStatus,
    ReproductionReply,
    Stage,
    Usage,
)
from bot.agent.validation import Claim, lexical_path_problem
from bot.core.proof import Risk


@dataclass(frozen=True, slots=True)
class Edit:
    """Replace ``old`` (which must occur exactly once) with ``new`` in ``path``."""

    path: str
    old: str
    new: str


@dataclass(frozen=True, slots=True)
class ScriptedSpec:
    hypothesis: str
    claims: tuple[Claim, ...]
    reproduction_name: str
    reproduction_files: Mapping[str, str]
    reproduction_command: tuple[str, ...]
    plan: str
    risk: Risk = Risk.LOW
    plan_files: tuple[str, ...] = ()
    """The files the plan names: the patch's scope (``bot.agent.scope``)."""
    patch_files: Mapping[str, str] = field(default_factory=dict)
    patch_edits: tuple[Edit, ...] = ()
    message: str = "Fix the bug the reproduction shows"
    fail: Mapping[Stage, tuple[ReplyStatus, str]] = field(default_factory=dict)
    """Stages that end with this status and reason instead (to exercise failure paths)."""
    tokens_per_stage: int = 0
    asked: list[AgentTask] = field(default_factory=list, compare=False, hash=False)
    """Every task an agent following this script was given, oldest first (for tests)."""


class ScriptedAgent:
    def __init__(self, spec: ScriptedSpec) -> None:
        self.spec = spec
        self.tasks: list[AgentTask] = []

    async def run(self, task: AgentTask, checkout: Path) -> AgentReply:
        self.tasks.append(task)
        self.spec.asked.append(task)
        spec = self.spec
        usage = Usage(tokens=spec.tokens_per_stage) if spec.tokens_per_stage else None
        if task.stage in spec.fail:
            status, reason = spec.fail[task.stage]
            return AgentReply(status=status, reason=reason, usage=usage)
        plan = PlanReply(summary=_revised(spec.plan, task.revise), risk=spec.risk,
                         files=spec.plan_files)
        if task.stage is Stage.RESEARCH:
            return AgentReply(hypothesis=_revised(spec.hypothesis, task.revise),
                              claims=spec.claims, usage=usage)
        if task.stage is Stage.REPRODUCE:
            reproduction = ReproductionReply(name=spec.reproduction_name,
                                             command=spec.reproduction_command,
                                             files=dict(spec.reproduction_files))
            return AgentReply(reproduction=reproduction, plan=plan, usage=usage)
        if task.stage is Stage.PLAN:
            return AgentReply(plan=plan, usage=usage)
        problem = _write_patch(spec, checkout)
        if problem is not None:
            return AgentReply.failed(problem, usage=usage)
        return AgentReply(message=spec.message, usage=usage)


def _revised(text: str, note: str | None) -> str:
    return text if not note else f"{text}\n\nRevised as asked: {note}"


def _write_patch(spec: ScriptedSpec, checkout: Path) -> str | None:
    """Apply the spec's patch to ``checkout``; a reason when it does not apply."""
    for path, content in spec.patch_files.items():
        if (problem := lexical_path_problem(path)) is not None:
            return f"scripted patch path {path!r}: {problem}"
        target = checkout / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content)
    for edit in spec.patch_edits:
        if (problem := lexical_path_problem(edit.path)) is not None:
            return f"scripted edit path {edit.path!r}: {problem}"
        target = checkout / edit.path
        if not target.is_file():
            return f"scripted edit: {edit.path} does not exist in the checkout"
        text = target.read_text()
        if text.count(edit.old) != 1:
            return (f"scripted edit: {edit.path} contains {edit.old!r} "
                    f"{text.count(edit.old)} times, not once; the spec no longer applies")
        target.write_text(text.replace(edit.old, edit.new))
    return None
