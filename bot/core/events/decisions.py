"""People's decisions: a checkpoint's verdict, a claim, a pause, a kill, a pushed revision.

A decision is made on a ``Snapshot`` of the quest, and counts only while the quest still
shows it.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from bot.core.events.base import _Event
from bot.core.names import Name
from bot.core.policy import Checkpoint
from bot.core.unvalidated import new as _new
from bot.core.unvalidated import set_dict as _set_dict
from bot.core.unvalidated import set_extra as _set_extra
from bot.core.unvalidated import set_fields_set as _set_fields_set
from bot.core.unvalidated import set_private as _set_private


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
    repository: str = Field(default="", max_length=1000)
    """Set when no person paused the quest but its repository changed under it (archived,
    removed from the App, the App suspended, the quest's branch deleted): what happened and
    what to do, in people's words. The quest parks ``repository_changed`` with this as its
    note, whoever holds its review, and the inbox is told (``rules.interruptions.paused``)."""


class Resumed(_Event):
    type: Literal["resumed"] = "resumed"


class Killed(_Event):
    type: Literal["killed"] = "killed"
    reason: str = ""


class HumanRevision(_Event):
    type: Literal["human_revision"] = "human_revision"
    head: str
    pusher: str
