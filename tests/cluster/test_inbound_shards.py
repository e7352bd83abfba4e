"""On a Redis Cluster the inbound deliveries are spread over 16 streams, on every master, and a
worker reads them all back, oldest first."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from bot.journal.wire import RedisClient
from bot.runner.inbound import Inbound
from questbot_testing.redis_cluster import RedisCluster


@pytest.fixture
def redis_kind() -> str:
    return "cluster"


async def test_deliveries_go_to_every_shard_and_are_all_read_in_time_order(
        redis_async: RedisClient, redis_cluster: RedisCluster) -> None:
    web, worker = Inbound(redis_async), Inbound(redis_async)
    assert web.shards == 16
    start = datetime(2024, 5, 1, tzinfo=UTC)
    for n in range(48):
        await web.store(f"d-{n}", "push", b"{}", start + timedelta(seconds=n))
    lengths = [int(await redis_async.xlen(s)) for s in web.streams]
    assert sum(lengths) == 48 and sum(1 for n in lengths if n) >= 8
    masters = {redis_cluster.master_of(s).port for s, n in zip(web.streams, lengths,
                                                               strict=True) if n}
    assert len(masters) == 3
    got = await worker.read("w1", count=100, block_ms=None)
    assert [d.delivery_id for d in got] == [f"d-{n}" for n in range(48)]
    assert await worker.ack([d.entry_id for d in got]) == 48
    assert await worker.backlog() == 0


async def test_a_read_leaves_nothing_pending_that_it_did_not_return(
        redis_async: RedisClient) -> None:
    """``COUNT`` holds per stream: asked for 16 of each shard, a read of 16 took all 48 and
    returned 16; the other 32 stayed pending for it, unseen, until another worker took them
    over ``claim_idle_ms`` later."""
    web, worker = Inbound(redis_async), Inbound(redis_async)
    start = datetime(2024, 5, 1, tzinfo=UTC)
    for n in range(48):
        await web.store(f"d-{n}", "push", b"{}", start + timedelta(seconds=n))
    got = await worker.read("w1", count=16, block_ms=None)
    pending = 0
    for stream in worker.streams:
        pending += int((await redis_async.xpending(stream, "workers"))["pending"])
    assert 0 < len(got) <= 16 and pending == len(got)
