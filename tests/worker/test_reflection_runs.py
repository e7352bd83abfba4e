"""questbot's reflection runs once per wave and attempt (issue 14, item 6), on a real Redis and
journal with the writer and the reviewer on the recorded model server: two workers, or one
restarted, write and review one reflection once and pass the wave once; a maintainer who
reflects first ends the wave, and the run records nothing; a person without write access puts
a reflection up for the same reviewer, a bounded number of times."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import UTC, datetime

import pytest
import redis.asyncio
from pydantic import SecretStr

from bot.adapters import AdapterContext, AppIdentity
from bot.agent.model import ModelEndpoint, Wire
from bot.core import Effect
from bot.journal import Journal
from bot.journal.keys import quest_keys, reflection_trail
from bot.journal.limits import RepoLimits
from bot.journal.records import load_effect
from bot.journal.reflection_attempts import ReflectionAttempts, ReflectionReview
from bot.reflection.runs import MAX_SUBMISSIONS, ReflectionRuns, model_runs
from bot.reflection.waves import Reflections
from bot.settings.repository.schema import Settings
from questbot_testing.journals import JournalBuilder
from questbot_testing.modelserver.server import ModelServer, recorded
from tests.journal.conftest import POLICY

REPO = "octo/demo"
TRAIL = reflection_trail(REPO)
LOG_FIRST = "Research starts from the failing log and quotes it before any fix is planned."


class WaveSettings:
    async def settings(self, repo: str) -> Settings:
        return Settings.model_validate({"reflection": {"after_bad_endings": 2}})


async def _no_hosts(repo: str) -> object:
    raise AssertionError("reflection runs read the journal only")


@pytest.fixture
async def served() -> AsyncIterator[ModelServer]:
    async with ModelServer(recorded("openai", "reflect-write", "review-reflection-pass")) as s:
        yield s


class Worker:
    """One worker's reflection runs; ``released`` counts its releases of held quests."""

    def __init__(self, client: redis.asyncio.Redis, served: ModelServer) -> None:
        endpoint = ModelEndpoint(wire=Wire.OPENAI, url=f"{served.url}/v1",
                                 api_key=SecretStr("sk-test-not-a-real-key"),
                                 model="gpt-4.1-mini")
        self.journal = Journal(client)
        self.ctx = AdapterContext(journal=self.journal, hosts=_no_hosts,  # type: ignore[arg-type]
                                  settings=WaveSettings(), app=AppIdentity(id=1, slug="questbot"),
                                  clock=lambda: datetime.now(UTC))
        self.limits = RepoLimits(client)
        self.released = 0
        self.runs = ReflectionRuns(self.ctx, self.limits, self.release, model_runs(endpoint))

    async def release(self, repo: str) -> int:
        self.released += 1
        return 0

    async def queued(self) -> list[Effect]:
        """The trail's outbox, taken as the effect runner takes it: each effect marked
        delivered and its entry dropped (this test calls the adapter itself)."""
        keys = quest_keys(TRAIL)
        out = []
        for entry_id, fields in await self.journal.client.xrange(keys.outbox, "-", "+"):
            effect = load_effect(fields[b"e"])
            out.append(effect)
            await self.journal.client.hset(keys.done, effect.key, "ok")
            await self.journal.client.xdel(keys.outbox, entry_id)
        return out


async def two_bad_endings(journal: Journal) -> None:
    for quest, reason in (("q-a", "the fix guessed at the cause without reading the log"),
                          ("q-b", "guessed again, the log said otherwise")):
        b = JournalBuilder(quest, repo=REPO).sense(fingerprint=quest)
        b.add("killed", actor="maya", reason=reason)
        for event in b.inputs:
            await journal.apply(event, POLICY)


def reflects(effects: list[Effect]) -> list[Effect]:
    return [e for e in effects if e.type.value == "reflect"]


async def test_two_workers_and_a_restart_write_and_review_one_reflection_once(
        served: ModelServer, redis_async: redis.asyncio.Redis) -> None:
    a, b = Worker(redis_async, served), Worker(redis_async, served)
    await two_bad_endings(a.journal)
    await asyncio.gather(a.runs.nudge(REPO), b.runs.nudge(REPO))
    (write,) = reflects(await a.queued())  # both workers asked: queued once
    await a.runs.run(write)
    await b.runs.run(write)  # delivered again (a restart before it was recorded as done)
    assert served.turns_of("reflect-write") == [1]  # written once
    effects = await a.queued()
    (review,) = reflects(effects)
    assert review.payload["review"] == 1
    pending = await a.limits.pending(REPO)
    assert pending is not None and pending.by == "questbot" and LOG_FIRST in pending.text
    await asyncio.gather(a.runs.run(review), b.runs.run(review))  # two workers at once
    await a.runs.run(review)  # and again after a restart
    attempts = ReflectionAttempts(redis_async)
    kept = await attempts.review(REPO, 0, "1")
    assert kept is not None and kept.passed is True
    assert a.released + b.released == 1  # the wave passed once
    assert await attempts.wave(REPO) == 1 and await a.limits.pending(REPO) is None
    written = await attempts.attempt(REPO, 0, "1")
    assert written is not None and written.session != kept.session
    assert sorted(written.record) == ["endings/1", "endings/2"]
    assert "the log said otherwise" in written.record["endings/2"]
    await a.runs.nudge(REPO)  # the wave is over: nothing more to write
    assert reflects(await a.queued()) == []
    served.assert_clean()


async def test_a_maintainer_who_reflects_first_ends_the_wave_and_the_run_records_nothing(
        served: ModelServer, redis_async: redis.asyncio.Redis) -> None:
    w = Worker(redis_async, served)
    await two_bad_endings(w.journal)
    await w.runs.nudge(REPO)
    (write,) = reflects(await w.queued())
    await w.runs.run(write)
    (review,) = reflects(await w.queued())
    reflections = Reflections(w.ctx, w.limits, w.release, runs=w.runs)
    said = await reflections.reflect(REPO, "maya", "we guessed; research reads the log first")
    assert "the reflection passed" in said
    await w.runs.run(review)
    assert served.turns_of("review-reflection-pass") == []  # never asked
    passed = await w.limits.passed(REPO)
    assert passed is not None and passed.by == "maya"
    assert await ReflectionAttempts(redis_async).review(REPO, 0, "1") is None


async def test_a_reflection_by_someone_without_write_access_goes_to_the_same_reviewer(
        served: ModelServer, redis_async: redis.asyncio.Redis) -> None:
    w = Worker(redis_async, served)
    said = await w.runs.submit(REPO, "rex", LOG_FIRST, "comment-1-1")
    assert "no reflection is due" in said and reflects(await w.queued()) == []
    await two_bad_endings(w.journal)
    said = await w.runs.submit(REPO, "rex", LOG_FIRST, "comment-2-1")
    assert "goes to questbot's reflection reviewer" in said
    await w.runs.submit(REPO, "rex", LOG_FIRST, "comment-2-1")  # the webhook redelivered
    (write,) = reflects(await w.queued())
    assert write.payload["attempt"] == "s1"
    await w.runs.run(write)
    assert served.turns_of("reflect-write") == []  # rex's words, not questbot's
    (review,) = reflects(await w.queued())
    await w.runs.run(review)
    passed = await w.limits.passed(REPO)
    assert passed is not None and passed.by == "rex" and passed.reviewer == "reflection reviewer"
    assert w.released == 1
    await two_bad_endings_again(w.journal)
    for n in range(MAX_SUBMISSIONS):
        assert "goes to" in await w.runs.submit(REPO, "rex", "we will be careful",
                                                f"comment-3-{n}")
    assert "needs a maintainer" in await w.runs.submit(REPO, "rex", "we will be careful",
                                                       "comment-4-1")


async def two_bad_endings_again(journal: Journal) -> None:
    for quest in ("q-c", "q-d"):
        b = JournalBuilder(quest, repo=REPO).sense(fingerprint=quest)
        b.add("killed", actor="maya", reason="wrong idea")
        for event in b.inputs:
            await journal.apply(event, POLICY)


async def test_after_three_reflections_sent_back_the_wave_waits_for_a_maintainer(
        served: ModelServer, redis_async: redis.asyncio.Redis) -> None:
    w = Worker(redis_async, served)
    await two_bad_endings(w.journal)
    attempts = ReflectionAttempts(redis_async)
    for n in ("1", "2", "3"):
        await w.runs.nudge(REPO)
        (write,) = reflects(await w.queued())
        assert write.payload["attempt"] == n  # the next attempt, each once
        await attempts.review_once(REPO, 0, n, ReflectionReview(
            passed=False, synopsis="too vague", session="s", at=datetime.now(UTC)))
    await w.runs.nudge(REPO)
    assert reflects(await w.queued()) == []  # no fourth: a maintainer's /reflect now
    reflections = Reflections(w.ctx, w.limits, w.release, runs=w.runs)
    assert "the reflection passed" in await reflections.reflect(REPO, "maya", "we guessed")
    assert served.served == []


async def test_a_reflection_its_writer_cannot_back_with_the_record_is_not_put_up(
        redis_async: redis.asyncio.Redis) -> None:
    async with ModelServer(recorded("openai", "reflect-unfounded")) as served:
        w = Worker(redis_async, served)
        await two_bad_endings_again(w.journal)
        await w.runs.nudge(REPO)
        (write,) = reflects(await w.queued())
        await w.runs.run(write)
        assert served.turns_of("reflect-unfounded") == [1, 2]  # told, and again
        assert await w.limits.pending(REPO) is None  # not shown as under review
        (review,) = reflects(await w.queued())
        await w.runs.run(review)  # no reviewer is asked: nothing is recorded to serve it
        rejected = await ReflectionAttempts(redis_async).rejected(REPO)
        assert rejected is not None and "could not back its reflection" in rejected.synopsis
        (again,) = reflects(await w.queued())
        assert again.payload["attempt"] == "2" and "review" not in again.payload
        assert await w.limits.passed(REPO) is None
        served.assert_clean()


async def test_an_attempt_the_runner_gave_up_on_is_queued_again_by_the_next_nudge(
        served: ModelServer, redis_async: redis.asyncio.Redis) -> None:
    w = Worker(redis_async, served)
    await two_bad_endings(w.journal)
    await w.runs.nudge(REPO)
    (write,) = reflects(await w.queued())
    await redis_async.hset(quest_keys(TRAIL).done, write.key, "failed")  # endpoint down long
    await w.runs.nudge(REPO)
    (again,) = reflects(await w.queued())
    assert again.payload == write.payload and again.occurrence == 1 and again.key != write.key
