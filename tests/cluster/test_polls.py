"""Several streams read on the cluster (``bot/runner/streams.py``): each ``XREADGROUP`` goes
to its key's node without redis-py asking a node where the key is, an idle read looks less
and less often, and an entry that arrives is found at the next look."""

from __future__ import annotations

import asyncio
import time
from collections import Counter

import redis

from bot.journal.keys import RUNNERS_GROUP, doorbell_key
from bot.journal.wire import plain_client
from bot.runner import doorbells
from bot.runner.streams import read_group
from questbot_testing.redis_cluster import RedisCluster

STREAMS = {doorbell_key(s): ">" for s in range(16)}


def calls(cluster: RedisCluster) -> Counter[str]:
    """Commands run by the masters, by name."""
    out: Counter[str] = Counter()
    for node in cluster.nodes:
        if node.process is None:
            continue
        client = redis.Redis(port=node.port)
        try:
            if client.info("replication")["role"] != "master":
                continue
            for name, stat in client.info("commandstats").items():
                out[name.removeprefix("cmdstat_")] += int(stat["calls"])
        finally:
            client.close()
    return out


async def test_an_idle_read_backs_off_and_never_asks_where_a_key_is(
        redis_cluster: RedisCluster) -> None:
    redis_cluster.flush()
    client = plain_client(redis_cluster.url)
    try:
        await doorbells.create_groups(client, range(16))
        before = calls(redis_cluster)
        found = await read_group(client, RUNNERS_GROUP, "idle", STREAMS, count=1, block_ms=1000)
        after = calls(redis_cluster)
        assert found == []
        looks = (after["xreadgroup"] - before["xreadgroup"]) / len(STREAMS)
        assert 3 <= looks <= 16, looks  # 25, 50, then 100 ms apart: 13 in a second, not 40
        assert after["command|getkeys"] == before["command|getkeys"]
    finally:
        await client.aclose()


async def test_an_entry_is_found_at_the_next_look(redis_cluster: RedisCluster) -> None:
    redis_cluster.flush()
    client = plain_client(redis_cluster.url)
    try:
        await doorbells.create_groups(client, range(16))

        async def ring_later() -> float:
            await asyncio.sleep(0.4)
            await client.xadd(doorbell_key(5), {"q": "q-1"})
            return time.monotonic()

        ringing = asyncio.create_task(ring_later())
        found = await read_group(client, RUNNERS_GROUP, "w", STREAMS, count=1, block_ms=3000)
        waited = time.monotonic() - await ringing
        assert [name for name, _ in found] == [doorbell_key(5)]
        assert waited < 0.5, waited  # the next look is at most 100 ms away (room for load)
    finally:
        await client.aclose()
