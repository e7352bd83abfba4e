"""questbot's own reflection runs: when a reflection wave is due, questbot writes the
reflection from the bad endings on record, and a ``reflection_reviewer`` in a fresh session
reviews it; a pass ends the wave and releases the held quests (``bot.reflection.waves`` has
the maintainer's ``/reflect``, which needs neither).

How a wave goes:

1. **Due.** After a quest of the repository ended badly, or was held for a reflection (the
   projection's sync, ``after_change``), ``nudge`` looks whether a reflection is due and, if
   so, enqueues a ``reflect`` effect on the repository's reflection trail
   (``<owner/name>#reflection``: an outbox, a delivered record and a lease of its own, beside
   no quest), keyed by the wave and the attempt — so every worker that sees it enqueues the
   same key, which the journal queues once.
2. **Written, once.** The effect's adapter (``run``) reads the record (``reflection_record``:
   each bad ending's quest, how it ended, what it tried, every reason on the way), asks the
   writer, and keeps the reflection with ``HSETNX`` (``bot.journal.reflection_attempts``): a
   redelivery after a restart, or another worker, finds it and reviews that one. Then it
   queues the inbox's rewrite, which shows it pending, and the review, as effects of the trail.
3. **Reviewed, once.** The review effect hands the reviewer only the reflection and the same
   record, in a conversation of its own; its verdict is kept with ``HSETNX`` too. A verdict
   whose citations do not hold decides nothing; it counts as the attempt's end, so the writer
   tries again.
4. **Decided.** A pass ends the wave in one script that checks the wave is still the run's
   (a maintainer may have reflected meanwhile; a wave passes once), then the held quests are
   released; a rejection is shown in the inbox with the reviewer's reason and the next
   attempt is enqueued — ``MAX_ATTEMPTS`` per wave, then the wave waits for a maintainer.

What each run used is counted once in the repository's ledger (``bot.journal.model_use``,
keyed by the effect's key) and on ``/metrics``; the inbox shows the total.

A model endpoint that is down raises ``RetryLater`` before anything is recorded: the effect
runner tries again with its backoff; when it gives up, the next nudge enqueues the same attempt
again under a new occurrence — a quest's change, or the worker's look at owed runs
(``bot.worker.owed_sweep``, every ten minutes per repository), so a quiet repository's wave
is tried again once the endpoint is back. Nothing passes without a founded verdict.

People without write access may ``/reflect`` too (``submit``): their text goes to the same
reviewer, as an attempt of its own (``s1``, ``s2``…, at most ``MAX_SUBMISSIONS`` a wave), so
they can lift a wave only as questbot's writer can — by a reflection the reviewer passes on the
record.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from bot.adapters import AdapterContext
from bot.agent.model import ModelEndpoint
from bot.agent.task import Usage
from bot.core import Effect, EffectType, Event, Quest, State, effect_key
from bot.core.events import Hold
from bot.journal.keys import quest_keys, reflection_trail, repo_bad_endings_key
from bot.journal.limits import ReflectionRecord, RepoLimits
from bot.journal.model_use import Kind, ModelUse
from bot.journal.owed_runs import OwedRuns
from bot.journal.reflection_attempts import ReflectionAttempt, ReflectionAttempts, ReflectionReview
from bot.observe.metrics import Metrics
from bot.reflection.record import (
    MAX_ATTEMPTS,
    Reviewed,
    Written,
    ending_document,
    parse_ending,
    reasons,
    record_of,
)

log = logging.getLogger(__name__)

MAX_SUBMISSIONS = 3
"""Reflections people without write access may put up for review per wave."""
WRITER = "questbot"
REVIEWER = "reflection reviewer"
ENDED = frozenset({State.ABANDONED, State.PARKED, State.ROLLED_BACK})

Release = Callable[[str], Awaitable[int]]
WriteRun = Callable[[Mapping[str, str], int, Sequence[str]], Awaitable[Written]]
"""``(record, attempt, earlier rejections) → reflection``: a fresh writer conversation."""
ReviewRun = Callable[[str, Mapping[str, str]], Awaitable[Reviewed]]
"""``(reflection, record) → verdict``: a fresh reviewer conversation."""


@dataclass(frozen=True)
class ReflectionModel:
    write: WriteRun
    review: ReviewRun


def model_runs(endpoint: ModelEndpoint) -> ReflectionModel:
    """The writer and the reviewer on the real agent's endpoint."""

    async def write(record: Mapping[str, str], attempt: int,
                    rejections: Sequence[str]) -> Written:
        from bot.reflection.review import write_reflection  # pydantic-ai: when used

        return await write_reflection(endpoint, record, attempt, rejections)

    async def review(reflection: str, record: Mapping[str, str]) -> Reviewed:
        from bot.reflection.review import review_reflection

        return await review_reflection(endpoint, reflection, record)

    return ReflectionModel(write, review)




async def wave_due(ctx: AdapterContext, limits: RepoLimits, repo: str) -> bool:
    wave = (await ctx.settings.settings(repo)).reflection
    return await limits.wave_due(repo, wave.after_bad_endings, wave.window_hours)


class ReflectionRuns:
    def __init__(self, ctx: AdapterContext, limits: RepoLimits, release: Release,
                 model: ReflectionModel, *, metrics: Metrics | None = None) -> None:
        self.ctx = ctx
        self.limits = limits
        self.release = release
        self.model = model
        self.metrics = metrics
        self.attempts = ReflectionAttempts(ctx.journal.client)
        self.use = ModelUse(ctx.journal.client)
        self.owed = OwedRuns(ctx.journal.client)
        ctx.sweeps.append(self.nudge)

    # -- when -----------------------------------------------------------------------------

    async def after_change(self, quest: Quest) -> None:
        """The projection's sync: a bad ending, or a quest held for a reflection, may mean a
        wave is due."""
        held = quest.held is Hold.REFLECTION and quest.state is State.SENSED
        if held or quest.state in ENDED:
            await self.nudge(quest.repo)

    async def nudge(self, repo: str) -> bool:
        """Enqueue the wave's next writer attempt, if a reflection is due and attempts are
        left (the same key from every worker: queued once); whether one is owed."""
        if not await wave_due(self.ctx, self.limits, repo):
            return False
        wave = await self.attempts.wave(repo)
        for n in range(1, MAX_ATTEMPTS + 1):
            if await self.attempts.review(repo, wave, str(n)) is None:
                written = await self.attempts.attempt(repo, wave, str(n)) is not None
                await self._enqueue(repo, wave, str(n), {"review": 1} if written else {})
                return True
        return False  # every attempt was reviewed and none passed: a maintainer's turn

    async def submit(self, repo: str, login: str, text: str, cause: str) -> str:
        """A ``/reflect`` by someone without write access, from comment ``cause``: put up
        for review, once however often the comment is delivered. The reply."""
        if not await wave_due(self.ctx, self.limits, repo):
            return (f"@{login} thank you, but no reflection is due: no quest waits for one. "
                    "When several quests end badly, the inbox says so.")
        wave = await self.attempts.wave(repo)
        n = await self.attempts.outsider(repo, wave, cause)
        if not 0 < n <= MAX_SUBMISSIONS:
            return (f"@{login} thank you: enough reflections were put up for review in this "
                    "wave; the next one needs a maintainer's `/reflect`.")
        await self._enqueue(repo, wave, f"s{n}", {"text": text[:4000], "by": login})
        return (f"@{login} thank you: your reflection goes to questbot's reflection "
                "reviewer, and the inbox shows its verdict. A maintainer's `/reflect` passes "
                "at once.")

    async def _enqueue(self, repo: str, wave: int, attempt: str,
                       extra: dict[str, Any]) -> None:
        trail = reflection_trail(repo)
        cause = f"wave-{wave}-try-{attempt}" + ("-review" if extra.get("review") else "")
        done = quest_keys(trail).done
        occurrence = 0  # an attempt the runner gave up on (endpoint down) goes again
        while await self.ctx.journal.client.hget(
                done, effect_key(trail, 0, EffectType.REFLECT.value, cause, occurrence)) in (
                b"failed", "failed"):
            occurrence += 1
        await self.ctx.journal.enqueue(trail, [Effect(
            key=effect_key(trail, 0, EffectType.REFLECT.value, cause, occurrence),
            type=EffectType.REFLECT, quest_id=trail, revision=0, event_id=cause,
            occurrence=occurrence,
            payload={"repo": repo, "wave": wave, "attempt": attempt, **extra})])
        await self.owed.owed(repo, self.ctx.clock())

    async def _show(self, repo: str, cause: str) -> None:
        """Write the inbox again, after this run's effect (``notify_inbox``'s rewrite)."""
        trail = reflection_trail(repo)
        await self.ctx.journal.enqueue(trail, [Effect(
            key=effect_key(trail, 0, EffectType.NOTIFY_INBOX.value, cause, 0),
            type=EffectType.NOTIFY_INBOX, quest_id=trail, revision=0, event_id=cause,
            occurrence=0, payload={"repo": repo, "rewrite": 1})])

    # -- the run ----------------------------------------------------------------------------

    async def run(self, effect: Effect) -> Sequence[Event] | None:
        """The ``reflect`` adapter, in two effects so the inbox shows the reflection between
        them: write it (once) and queue its review; then review it (once) and decide."""
        p = effect.payload
        repo, wave, attempt = str(p["repo"]), int(p["wave"]), str(p["attempt"])
        if (await self.attempts.wave(repo) != wave
                or not await wave_due(self.ctx, self.limits, repo)):
            return None  # the wave is over (a maintainer reflected, or a review passed)
        kept = await self.attempts.attempt(repo, wave, attempt)
        if not p.get("review"):
            if kept is None and await self._write(repo, wave, attempt, p, effect.key) is None:
                return None
            await self._show(repo, f"{effect.event_id}-written")
            await self._enqueue(repo, wave, attempt, {"review": 1})
            return None
        if kept is None:
            return None  # never written: the write effect comes first
        review = await self.attempts.review(repo, wave, attempt)
        if review is None:
            review = await self._review(repo, kept, effect.key)
            if review is None:
                return None
        await self._decide(repo, kept, review)
        await self._show(repo, f"{effect.event_id}-decided")
        return None

    async def record(self, repo: str) -> dict[str, str]:
        """The bad endings since the last reflection that passed, one document a quest."""
        passed = await self.limits.passed(repo)
        found: Any = await self.ctx.journal.client.zrange(repo_bad_endings_key(repo), 0, -1,
                                                           withscores=True)
        docs = []
        for member, ms in found:
            ending = parse_ending(member.decode() if isinstance(member, bytes) else str(member),
                                  float(ms))
            if ending is None or (passed is not None and ending.at <= passed.at):
                continue
            _v, quest = await self.ctx.journal.snapshot(ending.quest_id)
            said = reasons(await self.ctx.journal.events(ending.quest_id)) if quest else []
            docs.append((ending, ending_document(ending, quest, said)))
        return record_of(docs)

    async def _count(self, repo: str, kind: Kind, run: str, usage: Usage) -> None:
        """The run's spend in the repository's ledger, once per effect, and on /metrics."""
        if await self.use.count(repo, kind, run, usage.tokens, usage.cost_cents) and (
                self.metrics is not None):
            self.metrics.model_used(repo, kind.value, usage.tokens, usage.cost_cents)

    async def _write(self, repo: str, wave: int, attempt: str,
                     p: Mapping[str, Any], run: str) -> ReflectionAttempt | None:
        record = await self.record(repo)
        at = self.ctx.clock()
        if "text" in p:  # a person's, submitted for review
            return await self.attempts.write_once(repo, ReflectionAttempt(
                wave=wave, attempt=attempt, text=str(p["text"]), by=str(p["by"]), at=at,
                session=str(p["by"]), record=record))
        rejections = []
        for n in range(1, int(attempt)):
            earlier = await self.attempts.review(repo, wave, str(n))
            if earlier is not None and earlier.passed is False and earlier.synopsis:
                rejections.append(earlier.synopsis)
        written = await self.model.write(record, int(attempt), rejections)  # RetryLater
        await self._count(repo, Kind.REFLECTION_WRITER, run, written.usage)
        log.info("questbot wrote reflection %s of wave %d for %s (%d tokens)", attempt, wave,
                 repo, written.usage.tokens)
        text = written.reflection.text if written.reflection is not None else ""
        backed = written.reflection is not None and not written.problems
        kept = await self.attempts.write_once(repo, ReflectionAttempt(
            wave=wave, attempt=attempt, text=text or "(no reflection)", by=WRITER, at=at,
            session=f"questbot-reflection-writer:{wave}:{attempt}", record=record),
            pending=backed)
        if kept is not None and not backed:
            # the writer could not back it with the record: no reviewer is asked to judge it
            await self.attempts.review_once(repo, wave, attempt, ReflectionReview(
                passed=False, synopsis="questbot could not back its reflection with the "
                "record of what went wrong", problems=tuple(written.problems),
                session="questbot-reflection-check", at=at))
        return kept

    async def _review(self, repo: str, kept: ReflectionAttempt,
                      run: str) -> ReflectionReview | None:
        reviewed = await self.model.review(kept.text, kept.record)  # RetryLater: nothing kept
        await self._count(repo, Kind.REFLECTION_REVIEWER, run, reviewed.usage)
        log.info("the reflection reviewer %s reflection %s of wave %d for %s (%d tokens)%s",
                 {True: "passed", False: "rejected", None: "decided nothing on"}[
                     reviewed.passed], kept.attempt, kept.wave, repo, reviewed.usage.tokens,
                 f": {'; '.join(reviewed.problems)}" if reviewed.problems else "")
        return await self.attempts.review_once(repo, kept.wave, kept.attempt, ReflectionReview(
            passed=reviewed.passed, synopsis=reviewed.synopsis, problems=tuple(reviewed.problems),
            session=f"questbot-reflection-reviewer:{kept.wave}:{kept.attempt}",
            at=self.ctx.clock()))

    async def _decide(self, repo: str, kept: ReflectionAttempt,
                      review: ReflectionReview) -> None:
        if review.passed:
            record = ReflectionRecord(text=kept.text[:4000], by=kept.by, at=self.ctx.clock(),
                                      reviewer=REVIEWER, synopsis=review.synopsis[:4000])
            if await self.attempts.pass_wave(repo, kept.wave, record):
                started = await self.release(repo)
                log.info("the reflection reviewer passed %s's reflection for %s; %d held "
                         "quests start", kept.by, repo, started)
            return
        reason = (review.synopsis if review.passed is False else
                  "the review did not stand on the record, so it decided nothing")
        await self.attempts.reject(repo, kept.wave, ReflectionRecord(
            text=kept.text[:4000], by=kept.by, at=kept.at, reviewer=REVIEWER,
            synopsis=reason[:4000]))
        await self.nudge(repo)  # the writer's next attempt, if any is left
