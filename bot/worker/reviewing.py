"""The worker's side of reviews: questbot's automatic reviewer at ``request_checkpoint``, and
the agreement count after every applied decision (``bot.reviews``).

``reviewing(inner, model, metrics)`` wraps a plugin (GitHub's, which owns
``request_checkpoint``): its adapter runs first — the pull request, the check run, the review
requests — and then, where the checkpoint wants one (advisory, or shadow mode), the automatic
review. Without a model endpoint nothing is reviewed automatically and advisory checkpoints
wait for a person, as they did before; the agreement count runs either way. The review's
tokens and cost are reported as ``usage_recorded``, like an agent run's.
"""

from __future__ import annotations

from collections.abc import Sequence

from bot.adapters import AdapterContext, Plugin, Sync, outcome_id
from bot.agent.model import ModelEndpoint
from bot.core import Effect, EffectType, Event
from bot.core.events import UsageRecorded
from bot.observe.metrics import Metrics
from bot.reviews.agreement import Agreement
from bot.reviews.automatic import AutomaticReviewer, ModelVerdict, RunReview
from bot.reviews.capabilities import Capabilities
from bot.reviews.models import PinnedEvidence, ReviewRole
from bot.reviews.proof_context import proof_context
from bot.reviews.service import Reviews
from bot.runner import Adapter
from bot.worker.projector import ObservedJournal


def model_run(endpoint: ModelEndpoint) -> RunReview:
    async def run(role: ReviewRole, handoff: str, pinned: PinnedEvidence) -> ModelVerdict:
        from bot.reviews.model_review import review_with_model  # pydantic-ai: only when used

        return await review_with_model(endpoint, role, handoff, pinned)

    return run


def reviewing(inner: Plugin, model: ModelEndpoint | None, metrics: Metrics | None = None,
              *, run: RunReview | None = None) -> Plugin:
    """``inner`` with the automatic reviewer after its ``request_checkpoint``; ``run``
    replaces the model conversation (a test's)."""

    def plug(ctx: AdapterContext) -> tuple[dict[EffectType, Adapter], Sync | None]:
        adapters, sync = inner(ctx)
        journal = ctx.journal
        agreement = Agreement(journal.client, metrics)
        if isinstance(journal, ObservedJournal):
            journal.event_listeners.append(agreement.on_applied)
        review = run or (model_run(model) if model is not None else None)
        asked = adapters.get(EffectType.REQUEST_CHECKPOINT)
        if review is None or asked is None:
            return adapters, sync
        reviews = Reviews(journal, Capabilities(journal.client),
                          context_of=proof_context(journal.client))
        reviewer = AutomaticReviewer(reviews, review, agreement)
        first = asked

        async def request_checkpoint(effect: Effect) -> Sequence[Event] | None:
            events = list(await first(effect) or ())
            verdict = await reviewer.on_request(effect)
            usage = verdict.usage if verdict is not None else None
            if usage is not None and (usage.tokens or usage.cost_cents):
                events.append(UsageRecorded(id=outcome_id(effect, "review-usage"),
                                            quest_id=effect.quest_id, at=ctx.clock(),
                                            tokens=usage.tokens,
                                            cost_cents=usage.cost_cents or 0,
                                            free=usage.free))
            return events or None

        return {**adapters, EffectType.REQUEST_CHECKPOINT: request_checkpoint}, sync

    return plug
