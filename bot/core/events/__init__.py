"""Events: everything that can happen to a quest, as frozen, JSON round-trippable models.

The events live in their families, and this module assembles them into the one
discriminated union ``Event``, its ``EVENT_ADAPTER``, and ``EVENT_TYPES``:

* ``base`` — the fields every event carries (``id``, ``quest_id``, ``at``, ``actor``), and why
  the core never mints them;
* ``signals`` — signals sensed and attached, and triage (routes, holds, re-runs);
* ``agent_work`` — what the agent's runs and the proof produced;
* ``decisions`` — people's decisions, on a ``Snapshot`` of the quest;
* ``landing`` — the pull's base, its landing, the watch after, regressions and reopening;
* ``bookkeeping`` — spend, usage, effects that failed, comments posted.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, TypeAdapter

from bot.core.events.agent_work import (
    AgentHalted,
    HypothesisWritten,
    PatchPushed,
    PlanWritten,
    ProofCompleted,
    ProofFailed,
    Reproduced,
    ReproductionFailed,
)
from bot.core.events.bookkeeping import (
    CommentPosted,
    EffectFailed,
    SpendDecided,
    SpendRequested,
    UsageRecorded,
)
from bot.core.events.decisions import (
    CheckpointDecided,
    Claimed,
    HumanRevision,
    Killed,
    Paused,
    Released,
    Resumed,
    Verdict,
)
from bot.core.events.landing import (
    BaseMoved,
    ChildEvidence,
    Landed,
    ParentLanded,
    RegressionDetected,
    Reopened,
    RollbackConfirmed,
    WatchClean,
)
from bot.core.events.signals import (
    Held,
    Hold,
    RerunReported,
    RerunRequested,
    RerunResult,
    ResearchStarted,
    Route,
    SignalAttached,
    SignalKind,
    SignalSensed,
    Triaged,
)

Event = Annotated[
    SignalSensed
    | Triaged
    | RerunRequested
    | RerunReported
    | Held
    | ResearchStarted
    | SignalAttached
    | HypothesisWritten
    | Reproduced
    | ReproductionFailed
    | AgentHalted
    | PlanWritten
    | PatchPushed
    | ProofCompleted
    | ProofFailed
    | CheckpointDecided
    | Claimed
    | Released
    | Paused
    | Resumed
    | Killed
    | HumanRevision
    | BaseMoved
    | Landed
    | WatchClean
    | RegressionDetected
    | RollbackConfirmed
    | Reopened
    | ParentLanded
    | ChildEvidence
    | SpendRequested
    | SpendDecided
    | UsageRecorded
    | CommentPosted
    | EffectFailed,
    Field(discriminator="type"),
]

EVENT_ADAPTER: TypeAdapter[Event] = TypeAdapter(Event)

EVENT_TYPES: tuple[str, ...] = tuple(cls.model_fields["type"].default for cls in (
    SignalSensed, Triaged, Held, ResearchStarted, RerunRequested, RerunReported, SignalAttached,
    HypothesisWritten, Reproduced, ReproductionFailed, AgentHalted, PlanWritten, PatchPushed,
    ProofCompleted, ProofFailed,
    CheckpointDecided, Claimed, Released, Paused, Resumed, Killed, HumanRevision,
    BaseMoved, Landed, WatchClean, RegressionDetected, RollbackConfirmed, Reopened,
    ParentLanded, ChildEvidence,
    SpendRequested, SpendDecided, UsageRecorded, EffectFailed, CommentPosted,
))
"""Every event type, by family in the order of this module's docstring, each family in its
module's order: the order the lifecycle docs and diagram list them. A test holds it to the
union, type for type."""


# The union and its members, and five words of the families (Hold, RerunResult, Route,
# SignalKind, Verdict): what bot/worker and bot/github still import from here. The other rooms
# import each name from its family.
__all__ = [
    "EVENT_ADAPTER", "EVENT_TYPES", "AgentHalted", "BaseMoved", "CheckpointDecided",
    "ChildEvidence", "Claimed", "CommentPosted", "EffectFailed", "Event", "Held", "Hold",
    "HumanRevision", "HypothesisWritten", "Killed", "Landed", "ParentLanded", "PatchPushed",
    "Paused", "PlanWritten", "ProofCompleted", "ProofFailed", "RegressionDetected", "Released",
    "Reopened", "Reproduced", "ReproductionFailed", "RerunReported", "RerunRequested",
    "RerunResult", "ResearchStarted", "Resumed", "RollbackConfirmed", "Route",
    "SignalAttached", "SignalKind", "SignalSensed", "SpendDecided", "SpendRequested",
    "Triaged", "UsageRecorded", "Verdict", "WatchClean",
]
