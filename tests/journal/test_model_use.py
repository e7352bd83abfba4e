"""The ledger of a repository's model runs outside quests, on a real Redis: each run (its
effect's key) counted once however often or by however many workers, totals per kind."""

from __future__ import annotations

import asyncio

import pytest

from bot.journal.model_use import Kind, ModelUse, Spent
from bot.journal.wire import RedisClient

pytestmark = pytest.mark.cluster_too

REPO = "octo/demo"


async def test_a_run_is_counted_once_however_often_it_is_delivered(
        redis_async: RedisClient) -> None:
    use = ModelUse(redis_async)
    counted = await asyncio.gather(*(use.count(REPO, Kind.REFLECTION_WRITER, "e1", 100, 2)
                                     for _ in range(6)))
    assert sorted(counted) == [False] * 5 + [True]
    assert await use.count(REPO, Kind.REFLECTION_REVIEWER, "e1", 50, 1)  # another kind's run
    assert await use.count(REPO, Kind.REFLECTION_WRITER, "e2", 10, 0)
    assert await use.spent(REPO) == Spent(tokens=160, cents=3, runs=3)
    assert await use.spent(REPO, (Kind.REFLECTION_WRITER,)) == Spent(110, 2, 2)
    assert await use.spent("octo/other") == Spent()
