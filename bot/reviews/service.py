"""``review.request``, ``review.start`` and ``review.submit``: the operations the web process
(``bot.web.reviews``), the CLI and questbot's own reviewer (``automatic``) call.

A submission is routed as the core's ``checkpoint_decided`` — id ``review-<rid>``, actor
``review:<role>``, the synopsis as its reason, the pinned snapshot as the snapshot it was made
on — so the core applies to it the rules it applies to ``/approve``: the gate must be open,
the snapshot current, a claim respected. A role review is an automatic decision (it passes an
advisory gate, is recorded only in shadow mode or at a blocking gate); a ``human`` review is a
person's. ``docs/decisions.md`` ("Reviews by capability") says why.

Before the core sees it, the submission passes ``pinning.currency`` (the same snapshot rule,
plus the pinned artifact digests), so a stale review is refused without touching the journal.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from pydantic import BaseModel, ConfigDict

from bot.core import InvalidTransition, Policy, Quest
from bot.core.events.decisions import CheckpointDecided, Verdict
from bot.core.policy import Checkpoint
from bot.errors import Refused
from bot.journal import Journal
from bot.reviews.capabilities import Capabilities, split_review_id
from bot.reviews.handoff import handoff_prompt
from bot.reviews.models import (
    OUTSIDE_GATES,
    ROLE_GATE,
    Issued,
    PinnedEvidence,
    ReviewRecord,
    ReviewRole,
    ReviewStatus,
    SubmitBody,
)
from bot.reviews.pinning import currency, open_gate, pin

PolicyOf = Callable[[str], Awaitable[Policy]]
ContextOf = Callable[[Quest], Awaitable[dict[str, str]]]
"""Context read outside the quest record, for the reviewer (``proof_context``)."""


REFLECTION_REFUSED = (
    "a reflection_reviewer reviews a repository's reflection wave, not a quest: questbot "
    "runs that review itself when a wave is due (a model is configured), and a "
    "maintainer's /reflect <text> in the inbox passes one at once")
"""Why no capability is issued for a reflection review (``docs/decisions.md``, "Reflection
reviews")."""


class ReviewRefused(Refused):
    """A review operation refused, with the HTTP status that says why."""

    status = 409

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class Forbidden(ReviewRefused):
    status = 403


class Conflict(ReviewRefused):
    status = 409


def producer_session(quest_id: str) -> str:
    """The session id of questbot's agent working on a quest: what a reviewer is not."""
    return f"questbot-agent:{quest_id}"


class Started(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    review_id: str
    role: ReviewRole
    checkpoint: Checkpoint
    evidence: PinnedEvidence
    handoff: str


class Submitted(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    review_id: str
    verdict: Verdict
    automatic: bool
    counted: bool
    """The decision moved the quest; ``False`` when it was recorded only (shadow mode, or an
    automatic review at a blocking gate)."""
    state: str


class Reviews:
    def __init__(self, journal: Journal, capabilities: Capabilities, *,
                 policy_of: PolicyOf | None = None, base_url: str | None = None,
                 context_of: ContextOf | None = None) -> None:
        self.journal = journal
        self.capabilities = capabilities
        self.context_of = context_of
        self.policy_of = policy_of or (lambda qid: journal.recorded_policy(qid, Policy()))
        self.base_url = base_url.rstrip("/") if base_url else None

    async def request(self, quest_id: str, role: ReviewRole, *,
                      producer: str | None = None) -> Issued:
        """Pin the open gate's snapshot and issue a capability for ``role``'s review of it."""
        _v, quest = await self.journal.snapshot(quest_id)
        if quest is None:
            raise Conflict(f"there is no quest {quest_id}")
        gate = open_gate(quest)
        want = ROLE_GATE.get(role)
        if role is ReviewRole.REFLECTION:  # a repository's wave, not a quest's gate
            raise Conflict(REFLECTION_REFUSED)
        if want is None and role not in OUTSIDE_GATES:
            raise Conflict(f"a {role.value} reviews outside checkpoints A, B and C, and "
                           "questbot does not ask for that review yet")
        if gate is None or (want is not None and gate is not want):
            where = f"checkpoint {gate.value}" if gate else "no checkpoint"
            need = f"checkpoint {want.value}" if want else "an open checkpoint"
            raise Conflict(f"a {role.value} reviews {need}; quest {quest_id} is at {where}")
        review_id = Capabilities.new_review_id(quest_id)
        extra = await self.context_of(quest) if self.context_of is not None else None
        pinned = pin(quest, gate, extra)
        record = ReviewRecord(review_id=review_id, quest_id=quest_id, repo=quest.repo,
                              role=role, checkpoint=gate,
                              producer_session=producer or producer_session(quest_id),
                              pinned=pinned, requested_at=self.capabilities.clock())
        capability = await self.capabilities.issue(record)
        url = f"{self.base_url}/reviews/{review_id}" if self.base_url else None
        return Issued(review_id=review_id, capability=capability,
                      expires_in_seconds=self.capabilities.ttl_seconds,
                      handoff=handoff_prompt(role, gate, pinned, review_url=url))

    async def _open(self, review_id: str, capability: str | None,
                    session: str) -> ReviewRecord:
        record = await self.capabilities.verify(review_id, capability)  # 401 first
        if session == record.producer_session:
            raise Forbidden("this is the producer's own session; a review needs another "
                            "session than the one that produced the work")
        if await self.capabilities.submitted_by(review_id) is not None:
            raise Conflict("this review was submitted already")
        started = await self.capabilities.started_by(review_id)
        if started is not None and started != session:
            raise Conflict("another session started this review")
        return record

    async def _current(self, record: ReviewRecord) -> Quest:
        _v, quest = await self.journal.snapshot(record.quest_id)
        why = currency(record, quest)
        if why is not None:
            raise Conflict(why)
        assert quest is not None  # currency refuses a missing quest
        return quest

    async def start(self, review_id: str, capability: str | None, session: str) -> Started:
        record = await self._open(review_id, capability, session)
        await self._current(record)
        if await self.capabilities.start(review_id, session) != session:
            raise Conflict("another session started this review")
        return Started(review_id=review_id, role=record.role, checkpoint=record.checkpoint,
                       evidence=record.pinned,
                       handoff=handoff_prompt(record.role, record.checkpoint, record.pinned))

    async def submit(self, review_id: str, capability: str | None,
                     body: SubmitBody) -> Submitted:
        record = await self._open(review_id, capability, body.session)
        if await self.capabilities.started_by(review_id) is None:
            raise Conflict("start the review first (POST /reviews/<id>/start)")
        await self._current(record)
        if not await self.capabilities.submit(review_id, body.session):
            raise Conflict("this review was submitted already")
        _quest, rid = split_review_id(review_id)
        automatic = record.role is not ReviewRole.HUMAN
        event = CheckpointDecided(
            id=f"review-{rid}", quest_id=record.quest_id, at=self.journal.clock(),
            actor=f"review:{record.role.value}", checkpoint=record.checkpoint,
            verdict=body.verdict, automatic=automatic, reason=body.synopsis,
            snapshot=record.pinned.snapshot.core, seal=record.pinned.snapshot.seal)
        policy = await self.policy_of(record.quest_id)
        try:
            applied = await self.journal.apply(event, policy)
        except InvalidTransition as exc:
            raise Conflict(exc.reason) from exc
        finally:
            await self.capabilities.finish(record.model_copy(update={
                "status": ReviewStatus.SUBMITTED, "reviewer_session": body.session,
                "verdict": body.verdict, "synopsis": body.synopsis}))
        counted = not (automatic and (policy.shadow or policy.blocking(record.checkpoint)))
        return Submitted(review_id=review_id, verdict=body.verdict, automatic=automatic,
                         counted=counted, state=applied.quest.state.value)
