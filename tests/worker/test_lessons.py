"""Lessons on the recorded model server (both protocols), the real journal and a real Redis:
a quest that landed yields a lesson the consolidation reviewer keeps, once however often and
by however many workers its effect is delivered; a rejected or unfounded review keeps
nothing; an endpoint that is down keeps nothing and is tried again."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator
from datetime import UTC, datetime

import pytest
from pydantic import SecretStr

from bot.adapters import AdapterContext, AppIdentity
from bot.agent.model import ModelEndpoint, Wire
from bot.agent.model.conversation import ModelUnavailable
from bot.core import Event, Policy, State
from bot.core.lessons import teaches
from bot.journal import Journal
from bot.journal.keys import quest_keys
from bot.journal.lessons import Fate, LessonStore, lesson_trail
from bot.journal.wire import RedisClient
from bot.lessons.runs import Consolidator, consolidate_effect, model_runs
from questbot_testing.modelserver.make_recorded import HYPOTHESIS, LESSON, PLAN
from questbot_testing.modelserver.server import ModelServer, recorded
from tests.agent.conftest import StaticSettings
from tests.core.quests import builder_in

REPO = "octo/demo"
QUEST = "q-1"
MODELS = {"openai": "gpt-4.1-mini", "anthropic": "claude-sonnet-4-5"}
NAMES = ("lesson-landed", "lesson-rolled-back", "lesson-abandoned", "review-consolidation",
         "review-consolidation-rejected", "review-consolidation-unfounded")


@pytest.fixture(params=["openai", "anthropic"])
def protocol(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
async def served(protocol: str) -> AsyncIterator[ModelServer]:
    async with ModelServer(recorded(protocol, *NAMES)) as server:
        yield server


def endpoint(protocol: str, url: str) -> ModelEndpoint:
    # retry_wait_seconds: the default four retries of an endpoint that is down, 10 ms apart
    # rather than 2 + 4 + 8 + 16 s
    return ModelEndpoint(wire=Wire(protocol), url=f"{url}/v1" if protocol == "openai" else url,
                         api_key=SecretStr("sk-test-not-a-real-key"), model=MODELS[protocol],
                         retry_wait_seconds=0.01)


async def _no_hosts(repo: str) -> object:
    raise AssertionError("a lesson reads the journal and the evidence store only")


def consolidator(client: RedisClient, model: ModelEndpoint) -> Consolidator:
    ctx = AdapterContext(journal=Journal(client), hosts=_no_hosts,  # type: ignore[arg-type]
                         settings=StaticSettings(), app=AppIdentity(id=1, slug="questbot"),
                         clock=lambda: datetime(2026, 12, 1, tzinfo=UTC))
    return Consolidator(ctx, *model_runs(model))


def sample(event: Event) -> Event:
    """The sample repository's words for the builder's hypothesis and plan."""
    if event.type == "hypothesis_written":
        return event.model_copy(update={"summary": HYPOTHESIS})
    if event.type == "plan_written":
        return event.model_copy(update={"summary": PLAN["summary"]})
    return event


async def ended(journal: Journal, state: State, *, killed_from: State | None = None) -> None:
    b = builder_in(killed_from or state)
    if killed_from is not None:
        b.add("killed", actor="maintainer", reason="not this way")
    for event in b.inputs:
        await journal.apply(sample(event), b.policy)


async def deliver(c: Consolidator) -> None:
    _v, quest = await c.ctx.journal.snapshot(QUEST)
    assert quest is not None
    ending = teaches(quest)
    assert ending is not None
    events = await c.consolidate(consolidate_effect(quest.id, quest.revision, ending))
    if events:
        await c.ctx.journal.apply_many(list(events), Policy())


async def test_a_landed_quest_keeps_its_reviewed_lesson_once(
        served: ModelServer, protocol: str, redis_async: RedisClient) -> None:
    c = consolidator(redis_async, endpoint(protocol, served.url))
    await ended(c.ctx.journal, State.CLOSED)
    await deliver(c)
    (lesson,) = await LessonStore(redis_async).lessons(REPO)
    assert (lesson.text, lesson.quest_id, lesson.ending.value) == (LESSON, QUEST, "landed")
    assert "stayed clean" in lesson.synopsis
    assert await LessonStore(redis_async).fate(QUEST, 1, REPO) is Fate.KEPT
    writer = served.served[0].request
    sent = str(writer.get("messages", writer))
    assert "lesson: landed;" in sent and "page_count divides with //" in sent
    (review,) = [str(s.request["messages"]) for s in served.served
                 if s.conversation == "review-consolidation"]
    assert LESSON in review  # a fresh conversation: the lesson, not the writer's talk
    assert "consolidation writer" not in review and "lesson: landed;" not in review
    _v, quest = await c.ctx.journal.snapshot(QUEST)
    assert quest is not None and quest.usage_tokens == 1500 + 90 + 1700 + 160
    await deliver(c)  # delivered again (a restart before the runner recorded it)
    assert len(await LessonStore(redis_async).lessons(REPO)) == 1
    assert served.turns_of("lesson-landed") == [1]
    assert served.turns_of("review-consolidation") == [1]
    served.assert_clean()


async def test_two_workers_keep_one_lesson(served: ModelServer, protocol: str,
                                           redis_async: RedisClient) -> None:
    model = endpoint(protocol, served.url)
    one, two = consolidator(redis_async, model), consolidator(redis_async, model)
    await ended(one.ctx.journal, State.CLOSED)
    await asyncio.gather(deliver(one), deliver(two))
    assert [lesson.text for lesson in await LessonStore(redis_async).lessons(REPO)] == [LESSON]
    served.assert_clean()


async def test_a_rejected_lesson_is_not_kept_nor_asked_again(
        served: ModelServer, protocol: str, redis_async: RedisClient) -> None:
    c = consolidator(redis_async, endpoint(protocol, served.url))
    await ended(c.ctx.journal, State.ROLLED_BACK)
    await deliver(c)
    assert await LessonStore(redis_async).lessons(REPO) == []
    assert await LessonStore(redis_async).fate(QUEST, 1, REPO) is Fate.REJECTED
    await deliver(c)
    assert served.turns_of("review-consolidation-rejected") == [1]
    served.assert_clean()


async def test_an_unfounded_approval_keeps_nothing(served: ModelServer, protocol: str,
                                                   redis_async: RedisClient) -> None:
    c = consolidator(redis_async, endpoint(protocol, served.url))
    await ended(c.ctx.journal, State.ABANDONED, killed_from=State.PLANNED)
    await deliver(c)
    assert await LessonStore(redis_async).lessons(REPO) == []
    assert await LessonStore(redis_async).fate(QUEST, 1, REPO) is Fate.UNREVIEWED
    assert served.turns_of("review-consolidation-unfounded") == [1, 2]
    served.assert_clean()


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def test_an_endpoint_down_keeps_nothing_and_the_lesson_comes_later(
        served: ModelServer, protocol: str, redis_async: RedisClient) -> None:
    down = consolidator(redis_async, endpoint(protocol, f"http://127.0.0.1:{closed_port()}"))
    await ended(down.ctx.journal, State.CLOSED)
    with pytest.raises(ModelUnavailable):  # RetryLater: the runner tries the effect again
        await deliver(down)
    assert await LessonStore(redis_async).fate(QUEST, 1, REPO) is None
    assert await LessonStore(redis_async).lessons(REPO) == []
    await deliver(consolidator(redis_async, endpoint(protocol, served.url)))
    assert [lesson.text for lesson in await LessonStore(redis_async).lessons(REPO)] == [LESSON]


async def test_an_ending_is_enqueued_once_and_a_quest_without_work_teaches_nothing(
        redis_async: RedisClient) -> None:
    c = consolidator(redis_async, endpoint("openai", "http://127.0.0.1:9"))
    journal = c.ctx.journal
    await ended(journal, State.CLOSED)
    _v, quest = await journal.snapshot(QUEST)
    assert quest is not None
    await c.after_change(quest)
    await c.after_change(quest)  # the view synced again
    assert await redis_async.xlen(quest_keys(lesson_trail(QUEST)).outbox) == 1
    killed = builder_in(State.ABANDONED).quest  # killed before any work
    assert killed is not None and teaches(killed) is None


async def test_a_retry_after_the_reviewer_was_down_reviews_the_same_draft(
        served: ModelServer, protocol: str, redis_async: RedisClient) -> None:
    live = model_runs(endpoint(protocol, served.url))
    dead = model_runs(endpoint(protocol, f"http://127.0.0.1:{closed_port()}"))
    first = consolidator(redis_async, endpoint(protocol, served.url))
    first.review = dead[1]  # the writer answers, then the endpoint goes away
    await ended(first.ctx.journal, State.CLOSED)
    with pytest.raises(ModelUnavailable):
        await deliver(first)
    assert await LessonStore(redis_async).lessons(REPO) == []
    first.review = live[1]
    await deliver(first)  # the runner's retry
    assert [lesson.text for lesson in await LessonStore(redis_async).lessons(REPO)] == [LESSON]
    assert served.turns_of("lesson-landed") == [1]  # written once, paid for once
    _v, quest = await first.ctx.journal.snapshot(QUEST)
    assert quest is not None and quest.usage_tokens == 1500 + 90 + 1700 + 160


async def test_a_lesson_the_runner_gave_up_on_is_queued_again_by_the_next_change(
        served: ModelServer, protocol: str, redis_async: RedisClient) -> None:
    c = consolidator(redis_async, endpoint(protocol, served.url))
    journal = c.ctx.journal
    await ended(journal, State.CLOSED)
    _v, quest = await journal.snapshot(QUEST)
    assert quest is not None
    await c.after_change(quest)
    trail = quest_keys(lesson_trail(QUEST))
    (entry,) = await redis_async.xrange(trail.outbox)
    first = entry[1][b"k"].decode()
    # the runner gave up (eight tries with the endpoint down): recorded failed, out of the outbox
    await redis_async.hset(trail.done, first, "failed")
    await redis_async.xdel(trail.outbox, entry[0])
    assert await LessonStore(redis_async).owed(REPO) == [(QUEST, 1, teaches(quest))]
    other = builder_in(State.RESEARCHING).quest
    assert other is not None
    await c.after_change(other.model_copy(update={"id": "q-2"}))  # any quest of the repository
    (entry,) = await redis_async.xrange(trail.outbox)
    again = entry[1][b"k"].decode()
    assert again != first and again.endswith(":1")  # the next occurrence
    await deliver(c)
    assert [lesson.text for lesson in await LessonStore(redis_async).lessons(REPO)] == [LESSON]
    assert await LessonStore(redis_async).owed(REPO) == []
