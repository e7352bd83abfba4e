"""Reading several streams of one consumer group, on one Redis or a Redis Cluster.

On one Redis a single ``XREADGROUP … STREAMS k1 k2 …`` reads every stream and blocks until
one has an entry. On a cluster the streams live in different slots (that is why they are
sharded) and a command may name keys of one slot only, and a blocking read can wait on one
node only. There each stream gets its own non-blocking ``XREADGROUP`` in one cluster
pipeline (redis-py sends each node its share on one connection, the nodes at once; each
command is routed to its key's node here, because redis-py would first ask a node where the
key of an ``XREADGROUP`` is — ``COMMAND GETKEYS``, twice a command), and while all of them
come back empty the pipeline is sent again, ``POLL_MS`` later at first and twice as late
after each empty look up to ``POLL_MAX_MS``, until ``block_ms`` has passed. An idle worker
then costs each master about ten small requests a second per stream (forty at a steady
25 ms), and a new entry waits at most 100 ms more than on one Redis — nothing next to a
GitHub call — while a busy one, found at the first look, waits none; and no connection is
held by a blocked read that a cancel would have to tear down.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping
from typing import Any

import redis.asyncio

from bot.journal.wire import RedisClient, text

POLL_MS = 25
POLL_MAX_MS = 100


async def read_group(client: RedisClient, group: str, consumer: str,
                     streams: Mapping[str, str], *, count: int,
                     block_ms: int | None) -> list[tuple[str, Any]]:
    """``(stream name, rows)`` for each stream with entries, as ``XREADGROUP`` would give
    them; ``block_ms=None`` does not wait."""
    if not isinstance(client, redis.asyncio.RedisCluster):
        reply: object = await client.xreadgroup(group, consumer,
                                                dict(streams),  # type: ignore[arg-type]
                                                count=count, block=block_ms)
        return rows_of(reply)
    deadline = time.monotonic() + (block_ms or 0) / 1000
    await client.initialize()  # the slot map, should this be the client's first command
    pause_ms = POLL_MS
    while True:
        pipe = client.pipeline(transaction=False)
        for key, start in streams.items():
            # routed here: redis-py would ask a node (COMMAND GETKEYS) where each
            # XREADGROUP's key is, twice a command, before sending it
            pipe.execute_command("XREADGROUP", "GROUP", group, consumer, "COUNT", count,
                                 "STREAMS", key, start,
                                 target_nodes=client.get_node_from_key(key))
        found: list[tuple[str, Any]] = []
        for reply in await pipe.execute(raise_on_error=True):
            found += rows_of(reply)
        found = [(name, rows) for name, rows in found if rows]
        left = deadline - time.monotonic()
        if found or block_ms is None or left <= 0:
            return found
        await asyncio.sleep(min(left, pause_ms / 1000))
        pause_ms = min(POLL_MAX_MS, pause_ms * 2)


def rows_of(reply: object) -> list[tuple[str, Any]]:
    """XREADGROUP replies as (stream name, rows), for RESP2 lists and RESP3 maps alike."""
    if not reply:
        return []
    if isinstance(reply, dict):
        return [(text(name), rows[0] if isinstance(rows, list) and rows and
                 isinstance(rows[0], list) else rows) for name, rows in reply.items()]
    return [(text(name), rows) for name, rows in reply]  # type: ignore[attr-defined]
