"""Lessons, the worker's part: when a quest's ending teaches something (``core.lessons``),
questbot's model writes a lesson from the quest's record and the ``consolidation_reviewer``
judges it in a fresh conversation (``bot.lessons.consolidation``); an accepted lesson is kept
for the repository (``bot.journal.lessons``) and read by every later stage's agent.

``lessons(model)`` is a plugin: its projection, run after each transition's views, sees a
quest at a teaching ending and enqueues one ``consolidate`` effect for it
(``Journal.enqueue``; the key names the quest and revision, so seeing the quest again queues
nothing new). The effect lives on a trail of its own (``lesson_trail``), not the quest's: a
rolled-back quest goes on working, and its next stage must not wait behind a model run. A
kept lesson asks for the inbox to be written again (``notify_inbox``), which lists them.

Its adapter writes and reviews the lesson. The effect runner gives it what every effect has —
one runner at a time (the trail's lease), retries with back-off when the endpoint is down
(``ModelUnavailable`` is ``RetryLater``), a delivery again after a crash — and the store's
atomic mark makes the keep once-only. The lesson is *owed* until its fate is written: when the
runner gives up on it (the endpoint down longer than its back-off), the next change of any
quest of the repository queues it again, as the effect's next occurrence — or, on a quiet
repository, the worker's look at owed runs (``bot.worker.owed_sweep``, every ten minutes). A
draft that was written is kept beside the mark, so a retry after the reviewer's endpoint failed
reviews the same words rather than paying for new ones. Nothing is kept without a founded
``approve``: a rejection, a verdict whose claims do not hold, or a run without an answer keeps
nothing and is not tried again. Without a model endpoint no lesson is written.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence

from bot.adapters import AdapterContext, Plugin, Sync, outcome_id
from bot.agent.evidence_store import EvidenceStore
from bot.agent.model import ModelEndpoint
from bot.agent.task import Usage
from bot.core import Effect, EffectType, Event, Quest
from bot.core.effects import effect_key
from bot.core.events import UsageRecorded, Verdict
from bot.core.lessons import Ending, teaches
from bot.journal.keys import quest_keys
from bot.journal.lessons import Draft, Fate, Lesson, LessonStore, inbox_rewrite, lesson_trail
from bot.journal.owed_runs import OwedRuns
from bot.lessons.consolidation import quest_record
from bot.reviews.automatic import ModelVerdict
from bot.runner.outbox import Adapter

log = logging.getLogger(__name__)

LESSON_STAGE = "lesson"
"""What the receipt of a lesson's two runs names as its stage: the status comment's cost line
shows it beside the agent's stages."""

WriteLesson = Callable[[Quest, Ending, dict[str, str]], Awaitable[tuple[str | None, Usage]]]
"""``(quest, ending, record) → (lesson or None, usage)``: the writer's fresh conversation."""
ReviewLesson = Callable[[Quest, Ending, str, dict[str, str]], Awaitable[ModelVerdict]]
"""``(quest, ending, lesson, record) → verdict``: the consolidation reviewer's."""


def consolidate_effect(quest_id: str, revision: int, ending: Ending,
                       occurrence: int = 0) -> Effect:
    """The effect that writes and reviews one ending's lesson; ``occurrence`` counts the
    times the runner gave up on it before."""
    trail = lesson_trail(quest_id)
    return Effect(key=effect_key(trail, revision, EffectType.CONSOLIDATE.value, ending.value,
                                 occurrence),
                  type=EffectType.CONSOLIDATE, quest_id=trail, revision=revision,
                  event_id=ending.value, occurrence=occurrence,
                  payload={"quest": quest_id, "revision": revision})


def model_runs(endpoint: ModelEndpoint) -> tuple[WriteLesson, ReviewLesson]:
    async def write(quest: Quest, ending: Ending,
                    record: dict[str, str]) -> tuple[str | None, Usage]:
        from bot.lessons.model import write_lesson  # pydantic-ai: when used

        drafted = await write_lesson(endpoint, quest, ending, record)
        if drafted.text is None:
            log.info("no lesson from quest %s: %s", quest.id, drafted.problem)
        return drafted.text, drafted.usage

    async def review(quest: Quest, ending: Ending, lesson: str,
                     record: dict[str, str]) -> ModelVerdict:
        from bot.lessons.model import review_lesson

        return await review_lesson(endpoint, quest, ending, lesson, record)

    return write, review


class Consolidator:
    def __init__(self, ctx: AdapterContext, write: WriteLesson, review: ReviewLesson) -> None:
        self.ctx = ctx
        self.write = write
        self.review = review
        self.store = LessonStore(ctx.journal.client)
        self.evidence = EvidenceStore(ctx.journal.client)
        self.owed = OwedRuns(ctx.journal.client)

    async def after_change(self, quest: Quest) -> None:
        """A quest at a teaching ending gets its ``consolidate`` effect, once; and any change
        in the repository queues again a lesson whose effect the runner gave up on."""
        ending = teaches(quest)
        if ending is not None and await self.store.fate(quest.id, quest.revision,
                                                        quest.repo) is None:
            await self.store.owe(quest.id, quest.revision, quest.repo, ending)
        await self.sweep(quest.repo)

    async def sweep(self, repo: str) -> bool:
        """Queue every lesson ``repo`` owes (the worker's look at owed runs, too); whether
        any is owed."""
        owed = await self.store.owed(repo)
        for quest_id, revision, ending in owed:
            await self._enqueue(quest_id, revision, ending)
        if owed:
            await self.owed.owed(repo, self.ctx.clock())
        return bool(owed)

    async def _enqueue(self, quest_id: str, revision: int, ending: Ending) -> None:
        """Queue the ending's effect: the same one while it is queued or delivered (the
        journal's enqueue adds nothing then), the next occurrence once the runner gave up."""
        done = quest_keys(lesson_trail(quest_id)).done
        occurrence = 0
        while await self.ctx.journal.client.hget(done, consolidate_effect(
                quest_id, revision, ending, occurrence).key) in (b"failed", "failed"):
            occurrence += 1
        await self.ctx.journal.enqueue(lesson_trail(quest_id), [
            consolidate_effect(quest_id, revision, ending, occurrence)])

    async def consolidate(self, effect: Effect) -> Sequence[Event] | None:
        quest_id, revision = str(effect.payload["quest"]), int(effect.payload["revision"])
        _v, quest = await self.ctx.journal.snapshot(quest_id)
        ending = teaches(quest) if quest is not None else None
        if quest is None or ending is None or quest.revision != revision:
            log.info("no lesson from quest %s revision %d: it has moved on since it ended",
                     quest_id, revision)
            if quest is not None:
                await self.store.forgive(quest_id, revision, quest.repo)
            return None
        if await self.store.fate(quest.id, revision, quest.repo) is not None:
            return None  # decided before this delivery: kept, rejected or dropped
        record = quest_record(quest, ending, await self.evidence.lookup(quest))
        draft = await self.store.draft(quest.id, revision, quest.repo)
        if draft is None:
            text, spent = await self.write(quest, ending, record)  # down: tried again later
            if text is None:
                await self.store.settle(quest.id, revision, quest.repo, Fate.UNREVIEWED)
                return self._receipt(effect, quest, spent)
            draft = Draft(text=text, tokens=spent.tokens, cost_cents=spent.cost_cents)
            await self.store.set_draft(quest.id, revision, quest.repo, draft)
        verdict = await self.review(quest, ending, draft.text, record)
        usage = Usage(tokens=draft.tokens, cost_cents=draft.cost_cents) + verdict.usage
        if verdict.verdict is Verdict.APPROVE and verdict.founded:
            kept = await self.store.keep(Lesson(
                quest_id=quest.id, revision=revision, repo=quest.repo, ending=ending,
                text=draft.text, synopsis=verdict.synopsis[:1000], at=self.ctx.clock()))
            log.info("quest %s's lesson %s", quest.id,
                     "is kept" if kept else "was decided already; not kept again")
            if kept:  # the inbox shows the latest lessons
                await self.ctx.journal.enqueue(lesson_trail(quest.id), [inbox_rewrite(
                    quest.id, quest.repo, revision, "kept")])
        else:
            fate = (Fate.REJECTED if verdict.verdict is not None and verdict.founded
                    else Fate.UNREVIEWED)  # no founded verdict: nobody reviewed it
            await self.store.settle(quest.id, revision, quest.repo, fate)
            log.info("quest %s's lesson is not kept (%s): %s", quest.id, fate.value,
                     "; ".join(verdict.problems) or verdict.synopsis or "no verdict")
        return self._receipt(effect, quest, usage)

    def _receipt(self, effect: Effect, quest: Quest, usage: Usage) -> list[Event]:
        if not (usage.tokens or usage.cost_cents):
            return []
        return [UsageRecorded(id=outcome_id(effect, "lesson-usage"), quest_id=quest.id,
                              at=self.ctx.clock(), tokens=usage.tokens,
                              cost_cents=usage.cost_cents, stage=LESSON_STAGE,
                              free=usage.free)]


def lessons(model: ModelEndpoint | None, *, write: WriteLesson | None = None,
            review: ReviewLesson | None = None) -> Plugin:
    """The lessons plugin; ``write`` and ``review`` replace the model runs (a test's)."""

    def plug(ctx: AdapterContext) -> tuple[dict[EffectType, Adapter], Sync | None]:
        if write is not None and review is not None:
            runs = (write, review)
        elif model is not None:
            runs = model_runs(model)
        else:
            return {}, None
        consolidator = Consolidator(ctx, *runs)
        ctx.sweeps.append(consolidator.sweep)
        return {EffectType.CONSOLIDATE: consolidator.consolidate}, consolidator.after_change

    return plug
