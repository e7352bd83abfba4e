"""What a review is made of: roles, the pinned snapshot and evidence, the stored record, and
the bodies a reviewer session sends (pydantic at the boundary: a malformed body is a 422)."""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field

from bot.core.events.decisions import Snapshot, Verdict
from bot.core.policy import Checkpoint


class ReviewRole(StrEnum):
    DESIGN = "design_reviewer"
    EXPERIMENT = "experiment_reviewer"
    REFLECTION = "reflection_reviewer"
    CONSOLIDATION = "consolidation_reviewer"
    HUMAN = "human"
    AUTOMATED_CHECK = "automated_check"


ROLE_GATE: dict[ReviewRole, Checkpoint] = {ReviewRole.DESIGN: Checkpoint.B,
                                           ReviewRole.EXPERIMENT: Checkpoint.C}
"""The gate each gate role reviews; ``human`` and ``automated_check`` review the open one."""

OUTSIDE_GATES = (ReviewRole.HUMAN, ReviewRole.AUTOMATED_CHECK)


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class PinnedSnapshot(_Model):
    """What a review is bound to. ``core`` is the snapshot the core's currency check compares
    (revision, head, base, proof digest); ``artifacts`` the SHA-256 of each of the gate's
    artifacts as the quest holds them; ``seal`` the gate's sealed evidence (``bot.core.seals``)."""

    core: Snapshot
    artifacts: tuple[tuple[str, str], ...]
    """``(name, sha256 hex)``, in the gate's order."""
    seal: str | None = None
    """The digest of the gate's seal when the review was requested (``Quest.seal``): a
    submission after the evidence was submitted again is stale, in this check and in the
    core's (the decision carries it)."""


class PinnedEvidence(_Model):
    """What the reviewer session gets: the pinned artifacts' text and bounded context about
    the quest — never the producer's conversation."""

    snapshot: PinnedSnapshot
    artifacts: dict[str, str]
    context: dict[str, str]


class ReviewStatus(StrEnum):
    REQUESTED = "requested"
    STARTED = "started"
    SUBMITTED = "submitted"


class ReviewRecord(_Model):
    """One review request as stored (``capabilities``); the capability itself is not in it."""

    review_id: str
    quest_id: str
    repo: str
    role: ReviewRole
    checkpoint: Checkpoint
    producer_session: str
    pinned: PinnedEvidence
    requested_at: float
    status: ReviewStatus = ReviewStatus.REQUESTED
    reviewer_session: str | None = None
    verdict: Verdict | None = None
    synopsis: str = ""


class Issued(_Model):
    """``review.request``'s answer, shown once: the capability is never stored in clear."""

    review_id: str
    capability: str
    expires_in_seconds: int
    handoff: str


SESSION = Field(min_length=1, max_length=200, pattern=r"^[\x21-\x7e]+$")


class StartBody(_Model):
    session: str = SESSION


class SubmitBody(_Model):
    session: str = SESSION
    verdict: Verdict
    synopsis: str = Field(min_length=1, max_length=4000)
