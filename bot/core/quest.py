"""The quest record: everything the lifecycle needs to decide, and nothing that grows without
bound (signals, comments and decisions are counted here and kept in full in the journal)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

from bot.core.attempts import AttemptRecord, DecisionRecord
from bot.core.events.decisions import Snapshot
from bot.core.events.signals import Hold, Route, Severity, SignalKind
from bot.core.names import Name
from bot.core.policy import Checkpoint
from bot.core.proof import Risk
from bot.core.seals import Seal, seal_of
from bot.core.states import State
from bot.core.unvalidated import new as _new
from bot.core.unvalidated import set_dict as _set_dict
from bot.core.unvalidated import set_extra as _set_extra
from bot.core.unvalidated import set_fields_set as _set_fields_set
from bot.core.unvalidated import set_private as _set_private


class ParkReason(Name):
    PAUSED = "paused"
    ATTEMPTS_EXHAUSTED = "attempts_exhausted"
    CANNOT_REPRODUCE = "cannot_reproduce"
    WAITING_FOR_PARENT = "waiting_for_parent"
    RESEARCH_COMPLETE = "research_complete"
    AGENT_FAILED = "agent_failed"
    AGENT_REFUSED = "agent_refused"
    NEEDS_HUMAN = "needs_human"
    NO_AGENT = "no_agent"
    MODEL_FAILED = "model_failed"
    """The model endpoint refused the stage's requests or stopped answering (``agent_halted``
    with outcome ``endpoint``): the operator fixes the endpoint, then ``/resume``."""
    WORK_FAILED = "work_failed"
    """The work the quest's state waits on could not be done, and questbot gave up retrying
    (``effect_failed``): nothing would ever move the quest, so it waits for a person."""
    BUDGET_REACHED = "budget_reached"
    SPEND_DECLINED = "spend_declined"
    REPOSITORY_CHANGED = "repository_changed"
    """The repository changed under the quest so questbot cannot go on there — archived,
    removed from the App, the App suspended or uninstalled, the quest's branch deleted
    (``paused`` with ``repository``): ``park_note`` says what happened and what to do."""


class Outcome(Name):
    """Why a quest ended, for the terminal states."""

    CLOSED = "closed"
    KILLED = "killed"
    REJECTED = "rejected"
    IGNORED = "ignored"
    DUPLICATE = "duplicate"
    FLAKY = "flaky"


class Suspect(BaseModel):
    """A failure seen during the watch on the landed commit or a later one: a regression only
    once another run of the same check on the same commit fails too (``Quest.confirms``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    sha: str
    fingerprint: str
    run: str
    """The run that failed, named by the adapter that reported it (for GitHub
    ``check_run:<id>``, ``check_suite:<id>``, ``workflow_run:<id>:<attempt>``)."""


class Rerun(BaseModel):
    """Triage's re-run of a quest's failed check on the same commit, with its evidence: the
    run that failed first and the re-run's report once it came."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    sha: str
    fingerprint: str
    first: str
    route: Route
    """Where triage routes the quest when the re-run fails too."""
    second: str | None = None
    result: str | None = None
    """``None`` while it runs, then a ``RerunResult`` value."""
    reason: str = ""


class SpendAsk(BaseModel):
    """A stage the budget held back (``rules.budget``): what was spent when it was to start,
    the allowance then, and the agent start a person's approval pays for."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    request_id: str
    stage: str
    start: dict[str, Any]
    """The ``start_agent`` payload held back; the respondent run carries it."""
    spent_cents: int
    spent_tokens: int
    budget_cents: int | None
    budget_tokens: int | None
    """The allowance in force: the budget times one plus the approvals so far (``None``: no
    budget in that unit)."""


class StageUsage(BaseModel):
    """What the receipts of one agent stage add up to, over the quest's life."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    stage: str
    tokens: int = 0
    cost_cents: int = 0
    free_tokens: int = 0
    """Of ``tokens``, those priced at zero (``UsageRecorded.free``)."""


MAX_SUSPECTS = 32
"""Suspects kept at once, the newest: a watch is an hour, and a red default branch reports a
handful of checks per commit."""


class Quest(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    repo: str
    state: State
    revision: int = 1
    fingerprint: str
    kind: SignalKind
    title: str = ""
    severity: Severity = Severity.MEDIUM
    severity_floor: Severity = Severity.LOW
    risk: Risk = Risk.LOW
    route: Route | None = None
    awaiting_person: bool = False
    held: Hold | None = None
    """Triage held the quest before any work (``Held``): a full repository or a reflection
    due. Cleared when triage routes it."""

    signals: int = 1
    last_signal: str = ""
    attached: tuple[str, ...] = ()
    """The fingerprints of failures attached since the first (``fingerprint``), each once: a
    matrix job, its check suite and its workflow run are one failure told three ways, and a
    later failure of any of them is this quest's."""
    passes: int = 0
    """Green results of the quest's checks on the default branch, recorded as evidence."""
    flaky: int = 0
    """Of those, results on a commit where the same check failed for this quest: the failure
    was flaky there (a re-run passed)."""
    suspects: tuple[Suspect, ...] = ()
    """Failures during the watch waiting for their re-run (``Suspect``)."""
    source_run: str | None = None
    """The run whose failure sensed the quest (``SignalSensed.run``)."""
    rerun: Rerun | None = None
    """Triage's re-run of that failure before research (``Rerun``)."""

    base: str | None = None
    head: str | None = None
    head_pusher: str | None = None
    hypothesis: str | None = None
    reproduction: str | None = None
    reproduction_command: tuple[str, ...] = ()
    plan: str | None = None
    attempts: int = 0
    rebasing: bool = False
    """Patching only to bring the head onto a base that moved: the push that ends it proves
    the same change again, so it is no new attempt."""
    proof: Snapshot | None = None
    """The snapshot (with digest) the completed proof was bound to."""
    c_approval: Snapshot | None = None
    """The snapshot a C approval was given on; it counts only while it equals ``snapshot``."""
    seals: tuple[Seal, ...] = ()
    """Each gate's sealed artifact set, the latest submitted (``bot.core.seals``)."""
    attempt_number: int = 1
    """The attempt under way (``bot.core.attempts``); not ``attempts``, the proof attempts."""
    attempt_reviews: tuple[DecisionRecord, ...] = ()
    """The decisions taken at the gates during this attempt."""
    attempt_log: tuple[AttemptRecord, ...] = ()
    """The attempts that ended, oldest first, with their evidence and reviews."""
    merge_sha: str | None = None
    branch_revision: int = 1
    """The revision the quest's branch and pull request were started for: 1, or the revision
    a rollback or a reopening began. A quest that starts again works from the default branch's
    head on a fresh branch (``branch``), never on its old, merged one."""

    resume_state: State | None = None
    park_reason: ParkReason | None = None
    park_note: str | None = None
    """Why the agent halted, in its words (``agent_halted``): shown beside the park reason."""
    claimed_from: State | None = None
    owner: str | None = None

    parent: str | None = None
    children: tuple[str, ...] = ()
    duplicate_of: str | None = None
    outcome: Outcome | None = None

    spend_pending: tuple[str, ...] = ()
    spend_approved: int = 0
    spend_ask: SpendAsk | None = None
    """The spend request the quest is parked on, while it waits for a person's decision."""
    usage_tokens: int = 0
    usage_cost_cents: int = 0
    usage_free_tokens: int = 0
    """Of ``usage_tokens``, those priced at zero: a local model's, no charge."""
    usage_by_stage: tuple[StageUsage, ...] = ()
    """The same per agent stage, in the order each first spent (receipts naming a stage)."""
    decisions: int = 0
    recorded_only_decisions: int = 0
    comments: int = 0
    failed_effects: int = 0
    last_failure: str | None = None
    """``<effect type>: <error>`` of the latest effect that could not be delivered."""

    def evolve(self, changes: dict[str, Any]) -> Quest:
        """``model_copy(update=changes)`` without its generic deep-copy machinery: ``step``
        makes one or two of these per event, and the fields are immutable values already.
        Like ``model_copy`` it does not validate; the handlers only set typed values."""
        new = _new(Quest)
        _set_dict(new, {**self.__dict__, **changes})
        _set_fields_set(new, self.__pydantic_fields_set__)
        _set_extra(new, None)
        _set_private(new, None)
        return new

    @property
    def branch(self) -> str:
        """The branch the quest works on: ``quest/<id>``, then ``quest/<id>-r<revision>`` for
        each start after a rollback or a reopening."""
        if self.branch_revision <= 1:
            return f"quest/{self.id}"
        return f"quest/{self.id}-r{self.branch_revision}"

    def holds(self, fingerprint: str) -> bool:
        """``fingerprint`` is this quest's: its first signal's, or one attached since."""
        return fingerprint == self.fingerprint or fingerprint in self.attached

    def reruns(self, sha: str, fingerprint: str, run: str) -> bool:
        """A report of ``fingerprint`` on ``sha`` by ``run`` is the result of triage's re-run:
        the same check on the same commit, from another run than the one that failed."""
        rerun = self.rerun
        return (rerun is not None and rerun.result is None and rerun.sha == sha
                and rerun.fingerprint == fingerprint and rerun.first != run)

    def confirms(self, sha: str, fingerprint: str, run: str) -> bool:
        """A failure of ``fingerprint`` on ``sha`` reported by ``run`` confirms a suspected
        regression: the same check failed on the same commit in another run — a re-run."""
        return any(s.sha == sha and s.fingerprint == fingerprint and s.run != run
                   for s in self.suspects)

    @property
    def snapshot(self) -> Snapshot:
        proof = self.proof
        return Snapshot.of(self.revision, self.head, self.base,
                           proof.proof_digest if proof else None)

    @property
    def proof_bound(self) -> bool:
        """The completed proof was made on exactly this revision, head and base."""
        proof = self.proof
        return (
            proof is not None
            and proof.revision == self.revision
            and proof.head == self.head
            and proof.base == self.base
        )

    def shows(self, snapshot: Snapshot) -> bool:
        """``snapshot == self.snapshot``, compared field by field without building a model:
        every decision and every move to ``landing`` asks it."""
        proof = self.proof
        return (snapshot.revision == self.revision and snapshot.head == self.head
                and snapshot.base == self.base
                and snapshot.proof_digest == (proof.proof_digest if proof is not None else None))

    @property
    def c_approval_counts(self) -> bool:
        approval = self.c_approval
        return approval is not None and self.shows(approval)

    @property
    def approved(self) -> Snapshot | None:
        """The snapshot checkpoint C approved, while that approval stands: it is the quest's
        own snapshot — no push, base move or new proof since — as while it lands and after the
        merge (a landed quest's head and base stay what landed). What is merged, said to be
        landing and rolled back is read here, never from ``c_approval`` itself: a stale
        approval approves nothing."""
        approval = self.c_approval
        return approval if approval is not None and self.shows(approval) else None

    def seal(self, gate: Checkpoint) -> Seal | None:
        return seal_of(self.seals, gate)

    @property
    def checkpoint_state(self) -> State:
        """The state whose checkpoint is open: through a claim, the one it was claimed from."""
        if self.state is State.HANDED_OFF and self.claimed_from is not None:
            return self.claimed_from
        return self.state
