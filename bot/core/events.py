"""Events: everything that can happen to a quest, as frozen, JSON round-trippable models.

Each event carries a stable ``id`` (a GitHub delivery id plus an index, a comment id, a
runner's receipt id, a timer's due time) and the time it happened, ``at``. The core never
reads a clock or mints an id: both arrive here. ``actor`` is the GitHub login of the person
who caused the event, or ``None`` for questbot, its agent and its runners.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, model_validator

from bot.core.names import Name
from bot.core.policy import Checkpoint
from bot.core.proof import ProofBundle, Risk
from bot.core.unvalidated import new as _new
from bot.core.unvalidated import set_dict as _set_dict
from bot.core.unvalidated import set_extra as _set_extra
from bot.core.unvalidated import set_fields_set as _set_fields_set
from bot.core.unvalidated import set_private as _set_private


class Route(Name):
    AUTO_FIX = "auto_fix"
    RESEARCH_ONLY = "research_only"
    HUMAN = "human"
    IGNORE = "ignore"
    DUPLICATE = "duplicate"
    CONFLICT = "conflict"


class SignalKind(Name):
    CHECK_FAILURE = "check_failure"
    ISSUE = "issue"
    COMMENT = "comment"
    REGRESSION = "regression"


class Severity(Name):
    LOW = "low"
    MEDIUM = "medium"
    HIGH = "high"
    CRITICAL = "critical"

    @property
    def rank(self) -> int:
        return _SEVERITY_RANK[self]


_SEVERITY_RANK = {s: i for i, s in enumerate(Severity)}


def max_severity(a: Severity, b: Severity) -> Severity:
    return a if a.rank >= b.rank else b


class Hold(Name):
    """Why triage held a quest before any work (``Held``)."""

    SLOT = "slot"
    """The repository works on its most live quests already (``max_live_quests``)."""
    REFLECTION = "reflection"
    """Too many quests ended badly of late: a reflection must pass a review first."""


class Verdict(Name):
    APPROVE = "approve"
    REVISE = "revise"
    REJECT = "reject"


class Snapshot(BaseModel):
    """What a decision was made on. A decision counts only while the quest still shows it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    revision: int
    head: str | None = None
    base: str | None = None
    proof_digest: str | None = None

    @classmethod
    def of(cls, revision: int, head: str | None, base: str | None,
           proof_digest: str | None) -> Snapshot:
        """``Snapshot(revision=..., head=..., base=..., proof_digest=...)`` without validation,
        for the core's hot path, which only passes values a quest already holds (typed when
        the quest was). The result is equal field for field, fields-set included."""
        snapshot = _new(cls)
        _set_dict(snapshot, {"revision": revision, "head": head, "base": base,
                             "proof_digest": proof_digest})
        _set_fields_set(snapshot, _SNAPSHOT_FIELDS)  # shared, as Quest.evolve shares its own
        _set_extra(snapshot, None)
        _set_private(snapshot, None)
        return snapshot


_SNAPSHOT_FIELDS = {"revision", "head", "base", "proof_digest"}
"""Every snapshot ``of`` makes has all four fields set; pydantic copies a model's set before
it changes one (``model_copy``), so one set can stand for them all."""


class _Event(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = Field(min_length=1)
    quest_id: str = Field(min_length=1)
    at: datetime
    actor: str | None = None


class SignalSensed(_Event):
    type: Literal["signal_sensed"] = "signal_sensed"
    repo: str
    fingerprint: str
    kind: SignalKind
    severity: Severity = Severity.MEDIUM
    title: str = ""
    source: str = ""
    base: str | None = None
    run: str | None = None
    """The run that failed, for a failing check (``Suspect.run``'s names): what triage may
    re-run before any agent is paid for."""
    details_url: str | None = None
    """Where the failing check's CI says to look (for Actions, the job and its log), beside
    ``source``, GitHub's page of the run: what the status comment links to."""


class Triaged(_Event):
    type: Literal["triaged"] = "triaged"
    route: Route
    risk: Risk = Risk.LOW
    duplicate_of: str | None = None
    parent: str | None = None

    @model_validator(mode="after")
    def _route_targets(self) -> Triaged:
        if self.route is Route.DUPLICATE and not self.duplicate_of:
            raise ValueError("route duplicate needs duplicate_of: the quest the signal joins")
        if self.route is Route.CONFLICT and not self.parent:
            raise ValueError("route conflict needs parent: the quest this one waits for")
        return self


class Held(_Event):
    """Triage held the quest before any work (issue 14, item 6): the repository is at its
    live-quest cap, or a reflection wave is due. The quest stays ``sensed``, listed in the
    inbox, and is triaged again — the same checks, then ``triaged`` — when a slot frees or a
    reflection passes."""

    type: Literal["held"] = "held"
    reason: Hold
    detail: str = ""


class ResearchStarted(_Event):
    """Questbot starts research on a quest its triage routed to the agent: the follow-up the
    core derives from that ``triaged`` (``lifecycle.step``'s ``follow_ups``), journaled right
    after it, so the quest passes through ``triaged`` as the seed's main line does."""

    type: Literal["research_started"] = "research_started"


class RerunRequested(_Event):
    """Triage routed a failing check to the agent, and asks first for the failed run again on
    the same commit: a pass says the failure was flaky, and no agent is paid for."""

    type: Literal["rerun_requested"] = "rerun_requested"
    route: Route
    sha: str
    run: str


class RerunResult(Name):
    PASSED = "passed"
    FAILED = "failed"
    UNAVAILABLE = "unavailable"
    """GitHub would not re-run it for questbot (another App's check, too old): research."""


class RerunReported(_Event):
    """What the re-run triage asked for concluded: ``run`` is the re-run's own report (or,
    unavailable, the original run), ``reason`` says why there was none."""

    type: Literal["rerun_reported"] = "rerun_reported"
    result: RerunResult
    run: str | None = None
    source: str = ""
    reason: str = ""


class SignalAttached(_Event):
    """A signal joins a quest that has one already: a duplicate merged by triage, another
    report of the same failure (a matrix job, its suite, its workflow run), a green result of
    one of its checks, or a failure seen while it is watched."""

    type: Literal["signal_attached"] = "signal_attached"
    fingerprint: str
    source: str = ""
    severity: Severity = Severity.MEDIUM
    sha: str | None = None
    """The commit the signal is about, when it names one."""
    run: str | None = None
    """The run that reported it, named by the adapter (``Suspect.run``): another run of the
    same check on the same commit is a re-run."""
    passed: bool = False
    """A green result: evidence that a failure was flaky or has been fixed, not a failure."""
    suspect: bool = False
    """A failure on the landed commit or a later one of the default branch, during the
    watch: a regression once a re-run fails too (``Quest.suspects``)."""


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

    questbot's own event (seed 000 has none for it; seed 002's run outcomes name the cases):
    the run ``failed``, ``refused`` its plan, needs a person (``needs_human``: high impact,
    inconclusive evidence, the agent asked), or could not start because no agent is set up
    (``unconfigured``). The quest parks with the reason, so GitHub shows it waiting for a
    person instead of working for ever, and ``/resume`` runs the stage again."""

    type: Literal["agent_halted"] = "agent_halted"
    stage: str
    outcome: Literal["failed", "needs_human", "refused", "unconfigured"]
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


class CheckpointDecided(_Event):
    type: Literal["checkpoint_decided"] = "checkpoint_decided"
    checkpoint: Checkpoint
    verdict: Verdict
    automatic: bool = False
    reason: str = ""
    snapshot: Snapshot | None = None
    """The snapshot the decider saw; a mismatch with the quest's makes the decision stale."""
    seal: str | None = None
    """The digest of the gate's seal the decider saw (``Quest.seal``); a decision on another
    seal — the evidence was submitted again since — is refused as stale."""


class Claimed(_Event):
    type: Literal["claimed"] = "claimed"


class Released(_Event):
    type: Literal["released"] = "released"


class Paused(_Event):
    type: Literal["paused"] = "paused"
    reason: str = ""


class Resumed(_Event):
    type: Literal["resumed"] = "resumed"


class Killed(_Event):
    type: Literal["killed"] = "killed"
    reason: str = ""


class HumanRevision(_Event):
    type: Literal["human_revision"] = "human_revision"
    head: str
    pusher: str


class BaseMoved(_Event):
    type: Literal["base_moved"] = "base_moved"
    base: str


class Landed(_Event):
    type: Literal["landed"] = "landed"
    merge_sha: str


class WatchClean(_Event):
    type: Literal["watch_clean"] = "watch_clean"


class RegressionDetected(_Event):
    """A regression of a landed quest, confirmed: a re-run of a suspected failure failed too.
    ``sha``, ``fingerprint`` and ``run`` name that re-run, and the core holds them against the
    quest's suspects; journals from before re-runs were asked carry none, and count as they
    stand."""

    type: Literal["regression_detected"] = "regression_detected"
    source: str = ""
    sha: str | None = None
    fingerprint: str | None = None
    run: str | None = None


class RollbackConfirmed(_Event):
    type: Literal["rollback_confirmed"] = "rollback_confirmed"
    revert_sha: str


class Reopened(_Event):
    type: Literal["reopened"] = "reopened"
    fingerprint: str
    source: str = ""
    severity: Severity = Severity.MEDIUM
    base: str | None = None
    """The default branch's head when the regression was seen: where research starts again
    (``None`` in journals from before, which kept the old base)."""
    details_url: str | None = None
    """As ``SignalSensed.details_url``: where the failure that reopened the quest is told."""


class ParentLanded(_Event):
    type: Literal["parent_landed"] = "parent_landed"
    parent: str


class ChildEvidence(_Event):
    type: Literal["child_evidence"] = "child_evidence"
    child: str


class SpendRequested(_Event):
    type: Literal["spend_requested"] = "spend_requested"
    amount_cents: int = Field(ge=0)
    purpose: str


class SpendDecided(_Event):
    type: Literal["spend_decided"] = "spend_decided"
    request_id: str
    approved: bool


class UsageRecorded(_Event):
    type: Literal["usage_recorded"] = "usage_recorded"
    tokens: int = Field(default=0, ge=0)
    cost_cents: int = Field(default=0, ge=0)
    stage: str | None = Field(default=None, max_length=40)
    """The agent stage the receipt is for (``research``, ``reproduce``, ``plan``, ``patch``),
    when a stage's run reported it: the status comment shows the cost per stage."""


class EffectFailed(_Event):
    """An effect could not be delivered and will not be retried: journaled so people see it."""

    type: Literal["effect_failed"] = "effect_failed"
    effect_key: str
    effect_type: str
    error: str
    tries: int = Field(default=1, ge=1)


class CommentPosted(_Event):
    type: Literal["comment_posted"] = "comment_posted"
    comment_id: int


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

EVENT_TYPES: tuple[str, ...] = tuple(
    cls.model_fields["type"].default for cls in _Event.__subclasses__()
)
