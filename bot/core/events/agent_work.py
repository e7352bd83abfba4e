"""The agent's work: what its runs found, wrote and pushed, and what the proof concluded.

Research writes a hypothesis, reproduction reproduces the failure (or cannot), planning writes
a plan, patching pushes a head, and the proof runs the reproduction on the base and the head.
A run that ends without its stage's result halts the quest for a person (``agent_halted``).
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from bot.core.events.base import _Event
from bot.core.proof import ProofBundle, Risk


class HypothesisWritten(_Event):
    type: Literal["hypothesis_written"] = "hypothesis_written"
    summary: str
    evidence_digest: str | None = None


class Reproduced(_Event):
    type: Literal["reproduced"] = "reproduced"
    check: str
    command: tuple[str, ...] = ()
    """The argv that runs the reproduction; the proof runs it on the base and the head."""
    commit: str | None = None


class ReproductionFailed(_Event):
    type: Literal["reproduction_failed"] = "reproduction_failed"
    reason: str


class AgentHalted(_Event):
    """An agent run ended without its stage's result, and a person must act.

    questbot's own event (the lifecycle has none for it; the agent run's outcomes name the cases):
    the run ``failed``, ``refused`` its plan, needs a person (``needs_human``: high impact,
    inconclusive evidence, the agent asked), or could not start because no agent is set up
    (``unconfigured``), or the model endpoint refused its requests or stopped answering
    (``endpoint``: the model's fault is the operator's to fix, not the agent's). The quest parks
    with the reason, so GitHub shows it waiting for a person instead of working for ever, and
    ``/resume`` runs the stage again."""

    type: Literal["agent_halted"] = "agent_halted"
    stage: str
    outcome: Literal["failed", "needs_human", "refused", "unconfigured", "endpoint"]
    reason: str = Field(min_length=1)


class PlanWritten(_Event):
    type: Literal["plan_written"] = "plan_written"
    summary: str
    risk: Risk = Risk.LOW


class PatchPushed(_Event):
    type: Literal["patch_pushed"] = "patch_pushed"
    head: str
    pusher: str


class ProofCompleted(_Event):
    type: Literal["proof_completed"] = "proof_completed"
    bundle: ProofBundle
    digest: str


class ProofFailed(_Event):
    type: Literal["proof_failed"] = "proof_failed"
    head: str
    reason: str
    digest: str | None = None
