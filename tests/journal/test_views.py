"""The ledger of owed views on a real Redis: a view begun and not seen done is found by whoever
looks after the grace period; a sync begun later keeps its claim against an earlier one's
``done``."""

from __future__ import annotations

import asyncio
import time

import pytest
import redis.asyncio

from bot.journal.keys import shard_of
from bot.journal.views import OwedViews, views_key

pytestmark = pytest.mark.cluster_too


async def test_a_view_begun_and_done_is_not_owed(redis_async: redis.asyncio.Redis) -> None:
    views = OwedViews(redis_async, 4)
    score = await views.begin("q-1")
    await views.done("q-1", score)
    assert await views.due(older_than_s=0.0) == []


async def test_a_view_begun_and_never_done_is_owed_after_the_grace(
        redis_async: redis.asyncio.Redis) -> None:
    views = OwedViews(redis_async, 4)
    await views.begin("q-1")
    assert await views.due(older_than_s=60.0) == []  # its sync may still be running
    await asyncio.sleep(0.01)
    assert await views.due(older_than_s=0.0) == ["q-1"]


async def test_an_earlier_sync_finishing_does_not_clear_a_later_ones_claim(
        redis_async: redis.asyncio.Redis) -> None:
    views = OwedViews(redis_async, 4)
    first = await views.begin("q-1")
    await asyncio.sleep(0.002)
    await views.begin("q-1")  # another worker set out meanwhile (and may die)
    await views.done("q-1", first)
    await asyncio.sleep(0.01)
    assert await views.due(older_than_s=0.0) == ["q-1"]


async def test_views_of_every_shard_are_found_within_the_limit(
        redis_async: redis.asyncio.Redis) -> None:
    views = OwedViews(redis_async, 4)
    ids = [f"q-{n}" for n in range(20)]
    for qid in ids:
        await views.begin(qid)
    keys = [k async for k in redis_async.scan_iter(match="views:*")]
    assert len(keys) > 1 and all(k.decode().startswith("views:{shard-") for k in keys)
    await asyncio.sleep(0.01)  # a score is its begin time plus up to 1 ms, to be unique
    assert sorted(await views.due(older_than_s=0.0)) == sorted(ids)
    assert len(await views.due(older_than_s=0.0, limit=5)) == 5
    assert views_key(2) == "views:{shard-2}"


async def test_every_apply_leaves_the_quests_view_owed(redis_async: redis.asyncio.Redis) -> None:
    """A worker killed between applying an event and writing the view: nobody was told, yet the
    view is owed, because the apply itself noted it."""
    from bot.journal import Journal
    from questbot_testing.journals import main_line

    journal = Journal(redis_async, shards=4)
    builder = main_line("q-7")
    for event in builder.events[:3]:
        await journal.apply(event, builder.policy)
    await asyncio.sleep(0.01)
    views = OwedViews(redis_async, 4)
    assert await views.due(older_than_s=0.0) == ["q-7"]


async def test_the_applys_mark_is_whole_milliseconds_and_a_sync_still_claims_over_it(
        redis_async: redis.asyncio.Redis) -> None:
    """The apply notes the view owed at whole milliseconds: a small sorted set is a listpack,
    where Redis parses every fractional score it walks past, ~4x the cost of an integer one
    (issue 26, item 5; ``docs/performance.md``). A sync's ``begin`` keeps its random fraction,
    so its ``done`` never takes the apply's mark for its own."""
    from bot.journal import Journal
    from questbot_testing.journals import main_line

    journal = Journal(redis_async, shards=4)
    builder = main_line("q-7")
    key = views_key(shard_of("q-7", 4))
    before = time.time() * 1000
    await journal.apply(builder.events[0], builder.policy)
    marked = await redis_async.zscore(key, "q-7")
    assert marked is not None and marked == int(marked)
    assert before - 1 <= marked <= time.time() * 1000
    views = OwedViews(redis_async, 4)
    score = await views.begin("q-7")
    await journal.apply(builder.events[1], builder.policy)  # applied while the sync runs
    await views.done("q-7", score)
    assert await redis_async.zscore(key, "q-7") not in (None, score)  # still owed


async def test_a_view_a_worker_is_writing_is_not_owed_while_its_lease_lives(
        redis_async: redis.asyncio.Redis) -> None:
    """A sync that waits its installation's turn past the grace is still writing: taking it up
    again would only wait for the lease. Once the lease lapses (its worker died) it is owed."""
    from bot.journal.memory import ForgeMemory
    from bot.journal.views import view_lease_key

    views = OwedViews(redis_async, 4)
    memory = ForgeMemory(redis_async)
    await views.begin("q-1")
    await views.begin("q-2")
    await asyncio.sleep(0.01)
    async with memory.quest_creating("q-1", "view"):
        assert await redis_async.exists(view_lease_key("q-1"))
        assert await views.due(older_than_s=0.0) == ["q-2"]
    assert sorted(await views.due(older_than_s=0.0)) == ["q-1", "q-2"]
