"""The lesson store on a real Redis: once per ending however many keep it at once, bounded to
the newest, dropped by quest, and a decided ending stays decided."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

import pytest

from bot.core.lessons import Ending
from bot.journal.lessons import MAX_LESSONS, Draft, Fate, Lesson, LessonStore, lesson_lines
from bot.journal.wire import RedisClient

pytestmark = pytest.mark.cluster_too

REPO = "octo/demo"
AT = datetime(2026, 12, 1, tzinfo=UTC)


def lesson(quest_id: str, text: str = "check X fails under Y; the fix was Z",
           revision: int = 1) -> Lesson:
    return Lesson(quest_id=quest_id, revision=revision, repo=REPO, ending=Ending.LANDED,
                  text=text, at=AT)


async def test_many_keeps_of_one_ending_keep_it_once(redis_async: RedisClient) -> None:
    store = LessonStore(redis_async)
    kept = await asyncio.gather(*(store.keep(lesson("q-1", f"words {n}")) for n in range(8)))
    assert sorted(kept) == [False] * 7 + [True]
    assert len(await store.lessons(REPO)) == 1
    assert await store.fate("q-1", 1, REPO) is Fate.KEPT
    assert await store.keep(lesson("q-1", revision=2))  # a later ending of it is its own


async def test_the_newest_are_kept_and_the_oldest_give_way(redis_async: RedisClient) -> None:
    store = LessonStore(redis_async)
    for n in range(MAX_LESSONS + 5):
        assert await store.keep(lesson(f"q-{n}"))
    found = await store.lessons(REPO)
    assert [x.quest_id for x in found] == [f"q-{n}" for n in range(MAX_LESSONS + 4, 4, -1)]


async def test_a_dropped_lesson_is_gone_and_its_quest_is_not_asked_again(
        redis_async: RedisClient) -> None:
    store = LessonStore(redis_async)
    await store.keep(lesson("q-1"))
    await store.keep(lesson("q-2", "another"))
    assert await store.drop(REPO, "q-1") == 1
    assert [x.quest_id for x in await store.lessons(REPO)] == ["q-2"]
    assert await store.fate("q-1", 1, REPO) is Fate.DROPPED
    assert not await store.keep(lesson("q-1"))
    assert await store.drop(REPO, "q-9") == 0


async def test_a_rejection_is_final_and_clears_the_draft(redis_async: RedisClient) -> None:
    store = LessonStore(redis_async)
    await store.set_draft("q-1", 1, REPO, Draft(text="draft", tokens=10))
    assert await store.draft("q-1", 1, REPO) == Draft(text="draft", tokens=10)
    assert await store.settle("q-1", 1, REPO, Fate.REJECTED)
    assert await store.draft("q-1", 1, REPO) is None
    assert not await store.settle("q-1", 1, REPO, Fate.UNREVIEWED)
    assert not await store.keep(lesson("q-1"))
    assert await store.fate("q-1", 1, REPO) is Fate.REJECTED


def test_the_agent_reads_each_lesson_with_where_it_came_from() -> None:
    assert lesson_lines([lesson("q-1")]) == (
        "- check X fails under Y; the fix was Z (quest q-1, landed and watched clean)",)


async def test_dropping_one_revision_keeps_the_others(redis_async: RedisClient) -> None:
    store = LessonStore(redis_async)
    for revision in (1, 2):
        assert await store.keep(lesson("q-1", revision=revision))
    assert await store.drop(REPO, "q-1", 2) == 1
    assert [x.revision for x in await store.lessons(REPO)] == [1]
    assert await store.fate("q-1", 2, REPO) is Fate.DROPPED
    assert not await store.keep(lesson("q-1", revision=2))
    assert await store.drop(REPO, "q-1", 2) == 0
