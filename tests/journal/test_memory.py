"""The lease on creating a GitHub object (``ForgeMemory.creating``): one holder at a time, a
waiter sees what the holder recorded, a dead holder's lease runs out, a live one's does not,
and nobody releases a lease that is not theirs."""

from __future__ import annotations

import asyncio
from typing import Any, cast

import pytest
import redis.asyncio

from bot.errors import RetryLater
from bot.journal.keys import quest_gh_key
from bot.journal.memory import CreationBusy, ForgeMemory
from bot.journal.wire import RedisClient

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


class CancelLost:
    """The client as redis-py behaves on Python 3.11 when a cancel lands as a command's answer
    arrives (CPython gh-86296): the command completes and the cancel is lost. Only the
    lease's renewals (``PEXPIRE``) are so; ``renewing`` is set while one is under way."""

    def __init__(self, client: redis.asyncio.Redis) -> None:
        self.client = client
        self.renewing = asyncio.Event()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.client, name)

    async def eval(self, script: str, numkeys: int, *args: Any) -> Any:
        if "PEXPIRE" not in script:
            return await self.client.eval(script, numkeys, *args)

        async def slow() -> Any:
            await asyncio.sleep(0.1)  # on its way: the block ends meanwhile
            return await self.client.eval(script, numkeys, *args)

        answer = asyncio.ensure_future(slow())
        self.renewing.set()
        try:
            return await asyncio.shield(answer)
        except asyncio.CancelledError:
            return await answer  # the answer came with the cancel, which is lost


async def test_a_lease_whose_heartbeat_lost_its_cancel_is_released_at_once(
        redis_async: redis.asyncio.Redis) -> None:
    """The heartbeat ends when the block does, told twice: before, one that lost its cancel
    renewed the lease for good and leaving the block waited for it for ever (a chaos-free
    CI run: two paths refreshing the inbox, one waiting 60 s for ``CreationBusy``, or an
    end-to-end test hanging until its timeout on a loaded machine)."""
    client = CancelLost(redis_async)
    memory = ForgeMemory(cast(RedisClient, client))

    async def hold() -> None:
        async with memory.creating(quest_gh_key("q-1"), "pr", lease_ms=600):
            await client.renewing.wait()  # leaving while a renewal is under way

    # not ``asyncio.timeout``: leaving the block swallows a cancel while it waits
    left, _ = await asyncio.wait({asyncio.ensure_future(hold())}, timeout=5)
    assert left, "leaving the block waits for a heartbeat that renews the lease for ever"
    assert await redis_async.exists(LEASE) == 0


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
