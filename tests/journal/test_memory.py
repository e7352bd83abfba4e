"""The lease on creating a GitHub object (``ForgeMemory.creating``): one holder at a time, a
waiter sees what the holder recorded, a dead holder's lease runs out, a live one's does not,
and nobody releases a lease that is not theirs."""

from __future__ import annotations

import asyncio

import pytest
import redis.asyncio

from bot.errors import RetryLater
from bot.journal.keys import quest_gh_key
from bot.journal.memory import CreationBusy, ForgeMemory

pytestmark = pytest.mark.cluster_too

LEASE = quest_gh_key("q-1") + ":creating:pr"


async def test_one_holder_at_a_time_and_the_waiter_reads_the_record(
        redis_async: redis.asyncio.Redis) -> None:
    memory = ForgeMemory(redis_async)
    seen: list[str | None] = []
    order: list[str] = []

    async def create(name: str) -> None:
        async with memory.quest_creating("q-1", "pr"):
            order.append(f"{name} in")
            found = await memory.quest("q-1", "pr")
            seen.append(found)
            if found is None:
                await asyncio.sleep(0.05)  # the POST to GitHub
                await memory.set_quest("q-1", pr=7)
            order.append(f"{name} out")

    await asyncio.gather(create("a"), create("b"))
    assert seen == [None, "7"]
    assert order in (["a in", "a out", "b in", "b out"], ["b in", "b out", "a in", "a out"])
    assert await redis_async.exists(LEASE) == 0


async def test_a_dead_holders_lease_runs_out(redis_async: redis.asyncio.Redis) -> None:
    memory = ForgeMemory(redis_async)
    await redis_async.set(LEASE, "a dead worker", px=150)  # it never released
    loop = asyncio.get_running_loop()
    started = loop.time()
    async with memory.quest_creating("q-1", "pr"):
        waited = loop.time() - started
    assert 0.1 < waited < 2.0


async def test_a_live_holder_keeps_its_lease_and_others_give_up_for_a_retry(
        redis_async: redis.asyncio.Redis) -> None:
    memory = ForgeMemory(redis_async)
    async with memory.creating(quest_gh_key("q-1"), "pr", lease_ms=150):
        await asyncio.sleep(0.5)  # three times the lease: the heartbeat renews it
        with pytest.raises(CreationBusy, match="creating pr") as caught:
            async with memory.creating(quest_gh_key("q-1"), "pr", wait_s=0.2):
                pass
    assert isinstance(caught.value, RetryLater)


async def test_a_lease_taken_over_is_not_released_by_the_old_holder(
        redis_async: redis.asyncio.Redis) -> None:
    memory = ForgeMemory(redis_async)
    async with memory.quest_creating("q-1", "pr"):
        await redis_async.set(LEASE, "the next holder")  # ours ran out meanwhile
    assert await redis_async.get(LEASE) == b"the next holder"


async def test_a_record_with_its_reservation_dropped_is_one_write(
        redis_async: redis.asyncio.Redis) -> None:
    memory = ForgeMemory(redis_async)
    await memory.set_quest_field("q-1", "check_creating", "abc")
    await memory.record_quest("q-1", clear="check_creating", check_run=5, check_head="abc")
    assert await memory.quest_fields("q-1", "check_run", "check_head", "check_creating") == [
        "5", "abc", None]
