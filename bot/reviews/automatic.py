"""Automatic reviewers: at an advisory checkpoint, or at any checkpoint in shadow mode,
questbot requests a role review from a model run of its own and submits its verdict.

The run goes through the same three steps a reviewer session does — ``request`` pins the
snapshot and issues a capability, ``start`` in a fresh session (``questbot-reviewer:<id>``,
never the producer's) hands over the pinned evidence, ``submit`` routes the verdict through
the currency checks and the core — so the automatic decision is the one the core already
accepts: it passes an advisory gate and is recorded only in shadow mode or at a blocking gate.

A verdict whose cited evidence does not hold (``evidence_view``), or a run without a usable
answer, decides nothing: the gate waits for a person, and the log says why. Once per effect:
a ``request_checkpoint`` delivered again finds ``auto-done:<effect key>`` and does not review
twice; an endpoint that is down raises ``RetryLater`` before that mark, so it is tried again.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from bot.agent.task import Usage
from bot.core import Effect
from bot.core.events.decisions import Verdict
from bot.core.policy import Checkpoint
from bot.journal.keys import reviews_key
from bot.reviews.agreement import Agreement
from bot.reviews.models import PinnedEvidence, ReviewRole, SubmitBody
from bot.reviews.pinning import open_gate
from bot.reviews.service import ReviewRefused, Reviews

log = logging.getLogger(__name__)

ROLE_AT: dict[Checkpoint, ReviewRole] = {Checkpoint.A: ReviewRole.AUTOMATED_CHECK,
                                         Checkpoint.B: ReviewRole.DESIGN,
                                         Checkpoint.C: ReviewRole.EXPERIMENT}
"""Who reviews each gate automatically: the reviewer roles at B and C, an automated check at A."""

@dataclass
class ModelVerdict:
    verdict: Verdict | None
    """``None`` when the run gave no usable answer."""
    synopsis: str
    founded: bool
    """The cited evidence holds (``evidence_view.check_citations``)."""
    problems: list[str] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)


RunReview = Callable[[ReviewRole, str, PinnedEvidence], Awaitable[ModelVerdict]]
"""``(role, handoff prompt, pinned evidence) → verdict``: a fresh model conversation."""


def wanted(effect: Effect) -> bool:
    """An advisory checkpoint, or any checkpoint in shadow mode, gets an automatic review."""
    payload = effect.payload
    return not payload.get("blocking", True) or bool(payload.get("shadow"))


class AutomaticReviewer:
    def __init__(self, reviews: Reviews, run: RunReview, agreement: Agreement) -> None:
        self.reviews = reviews
        self.run = run
        self.agreement = agreement

    async def on_request(self, effect: Effect) -> ModelVerdict | None:
        """Review the checkpoint ``effect`` asks for, if it wants one and is still open;
        the verdict (submitted or not), or ``None`` when nothing was reviewed."""
        if not wanted(effect):
            return None
        checkpoint = Checkpoint(str(effect.payload["checkpoint"]))
        client = self.reviews.journal.client
        done = f"auto-done:{effect.key}"
        if await client.hexists(reviews_key(effect.quest_id), done):
            return None
        _v, quest = await self.reviews.journal.snapshot(effect.quest_id)
        if (quest is None or open_gate(quest) is not checkpoint
                or quest.revision != effect.revision):
            return None  # the quest moved on since it asked
        role = ROLE_AT[checkpoint]
        try:
            issued = await self.reviews.request(quest.id, role)
            session = f"questbot-reviewer:{issued.review_id}"
            started = await self.reviews.start(issued.review_id, issued.capability, session)
        except ReviewRefused as exc:  # the quest moved on between the read and the pin
            log.info("no automatic %s review of quest %s: %s", role.value, quest.id, exc.reason)
            return None
        verdict = await self.run(role, started.handoff, started.evidence)
        await client.hset(reviews_key(quest.id), done, issued.review_id)
        if verdict.verdict is None or not verdict.founded:
            log.info("the automatic %s review of quest %s decides nothing: %s", role.value,
                     quest.id, "; ".join(verdict.problems) or "no verdict")
            return verdict
        await self.agreement.automatic(quest, checkpoint, verdict.verdict)
        try:
            await self.reviews.submit(issued.review_id, issued.capability,
                                      SubmitBody(session=session, verdict=verdict.verdict,
                                                 synopsis=verdict.synopsis))
        except ReviewRefused as exc:
            log.info("the automatic %s review of quest %s was not routed: %s", role.value,
                     quest.id, exc.reason)
        return verdict
