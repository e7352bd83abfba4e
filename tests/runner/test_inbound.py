"""The inbound store as workers use it (read, ack, claim), and the group-commit batcher."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from datetime import UTC, datetime

import pytest
import redis.asyncio

from bot.journal.keys import inbound_shard, inbound_stream
from bot.runner.group_commit import GroupCommit
from bot.runner.inbound import STREAM, Duplicate, Inbound, Stored, seen_key
from bot.runner.inbound_consumer import GROUP
from questbot_testing.fakegithub.webhooks import load_example

pytestmark = pytest.mark.cluster_too

RECEIVED = datetime(2024, 5, 1, 12, 0, 0, 123000, tzinfo=UTC)


async def test_store_then_read_gives_back_the_exact_bytes(inbound: Inbound) -> None:
    body = b'{"action":"opened","x":"\xc3\xa9"}'
    stored = await inbound.store("d-1", "issues", body, RECEIVED)
    assert isinstance(stored, Stored)
    (got,) = await inbound.read("w1", block_ms=None)
    assert got.entry_id == stored.entry_id
    assert (got.delivery_id, got.event, got.body, got.received_at) == (
        "d-1", "issues", body, RECEIVED)


async def test_a_second_store_of_one_delivery_id_is_a_duplicate_of_the_first(
    inbound: Inbound, redis_async: redis.asyncio.Redis
) -> None:
    first = await inbound.store("d-1", "issues", b"{}", RECEIVED)
    again = await inbound.store("d-1", "issues", b'{"other": 1}', RECEIVED)
    assert again == Duplicate("d-1", first.entry_id)
    assert await redis_async.xlen(inbound.stream_of("d-1")) == 1
    ttl = await redis_async.ttl(seen_key("d-1", inbound.shards))
    assert 3 * 24 * 3600 < ttl <= inbound.seen_ttl_seconds


async def test_the_dedupe_marker_and_the_stream_share_one_cluster_slot() -> None:
    from redis.crc import key_slot

    assert key_slot(seen_key("72d3162e-cc78-11e3-81ab-4c9367dc0958").encode()) == key_slot(
        STREAM.encode())
    assert key_slot(seen_key("{evil}").encode()) == key_slot(STREAM.encode())
    for delivery in ("72d3162e-cc78-11e3-81ab-4c9367dc0958", "{evil}", "d-1"):  # sharded
        stream = inbound_stream(inbound_shard(delivery, 16), 16)
        assert key_slot(seen_key(delivery, 16).encode()) == key_slot(stream.encode())
    assert len({key_slot(inbound_stream(n, 16).encode()) for n in range(16)}) == 16


async def test_ack_deletes_and_claim_stale_takes_over_what_a_dead_worker_left(
    inbound: Inbound, redis_async: redis.asyncio.Redis
) -> None:
    for n in range(3):
        await inbound.store(f"d-{n}", "push", b"{}", RECEIVED)
    read = await inbound.read("w1", count=10, block_ms=None)
    read.sort(key=lambda d: d.delivery_id)  # in order on one stream; over shards, by time
    assert [d.delivery_id for d in read] == ["d-0", "d-1", "d-2"]
    assert await inbound.read("w2", block_ms=None) == []  # each delivery goes to one worker
    assert await inbound.ack([read[0].entry_id]) == 1
    assert await inbound.backlog() == 2
    # w1 dies holding d-1 and d-2; w2 takes them over once they are idle long enough.
    assert await inbound.claim_stale("w2", min_idle_ms=60_000) == []
    claimed = await inbound.claim_stale("w2", min_idle_ms=0)
    assert sorted(d.delivery_id for d in claimed) == ["d-1", "d-2"]
    pending = [p for stream in inbound.streams
               for p in await redis_async.xpending_range(stream, GROUP, "-", "+", 10)]
    assert {p["consumer"] for p in pending} == {b"w2"}
    assert await inbound.ack([d.entry_id for d in claimed]) == 2
    assert await inbound.backlog() == 0
    assert await inbound.ack([]) == 0


async def test_deliveries_stored_before_the_group_exists_are_read(
    redis_async: redis.asyncio.Redis,
) -> None:
    web_side = Inbound(redis_async)
    await web_side.store("early", "issues", b"{}", RECEIVED)
    worker_side = Inbound(redis_async)
    (got,) = await worker_side.read("w1", block_ms=None)
    assert got.delivery_id == "early"


async def test_read_survives_the_stream_being_deleted(
    inbound: Inbound, redis_async: redis.asyncio.Redis
) -> None:
    await inbound.store("a", "issues", b"{}", RECEIVED)
    assert len(await inbound.read("w1", block_ms=None)) == 1
    await redis_async.flushdb()
    assert await inbound.read("w1", block_ms=None) == []
    await inbound.store("b", "issues", b"{}", RECEIVED)
    assert [d.delivery_id for d in await inbound.read("w1", block_ms=None)] == ["b"]


async def test_read_blocks_until_a_delivery_arrives(
    inbound: Inbound, redis_async: redis.asyncio.Redis
) -> None:
    await inbound.ensure_group()
    reader = asyncio.create_task(inbound.read("w1", block_ms=2000))
    await asyncio.sleep(0.05)
    await Inbound(redis_async).store("late", "push", b"{}", RECEIVED)
    (got,) = await asyncio.wait_for(reader, 3)
    assert got.delivery_id == "late"


async def test_durable_acks_learn_how_this_server_makes_writes_durable(
    inbound: Inbound,
) -> None:
    await inbound.store("d", "issues", b"{}", RECEIVED)
    # The test server is 7.0 (no WAITAOF) with appendfsync always, or 7.2+ with WAITAOF; on
    # the cluster a replica acknowledged the write (WAIT), or store would have raised.
    assert (inbound.durability.supported is True or inbound.durability.fsync_always is True
            or inbound.durability.command() == ("WAIT", 1, inbound.durability.timeout_ms))


# -- the batcher on its own ------------------------------------------------------------------


async def test_group_commit_batches_what_arrives_during_a_flush() -> None:
    calls: list[list[int]] = []
    gate = asyncio.Event()

    async def flush(items: list[int]) -> Sequence[int]:
        calls.append(items)
        if len(calls) == 1:
            await gate.wait()
        return [i * 10 for i in items]

    batcher: GroupCommit[int, int] = GroupCommit(flush)
    first = asyncio.create_task(batcher.submit(1))
    await asyncio.sleep(0)
    await asyncio.sleep(0)
    rest = [asyncio.create_task(batcher.submit(i)) for i in range(2, 6)]
    await asyncio.sleep(0)
    gate.set()
    assert await first == 10
    assert [await t for t in rest] == [20, 30, 40, 50]
    assert calls == [[1], [2, 3, 4, 5]]


async def test_group_commit_respects_the_batch_limits() -> None:
    calls: list[list[int]] = []

    async def flush(items: list[int]) -> Sequence[int]:
        calls.append(items)
        return items

    batcher: GroupCommit[int, int] = GroupCommit(flush, max_items=3, size=lambda n: n,
                                                 max_bytes=10)
    assert await asyncio.gather(*(batcher.submit(n) for n in [1, 1, 1, 1, 8, 9, 20])) == [
        1, 1, 1, 1, 8, 9, 20]
    assert calls == [[1, 1, 1], [1, 8], [9], [20]]


async def test_a_failed_flush_fails_every_caller_of_that_batch_only() -> None:
    async def flush(items: list[int]) -> Sequence[int]:
        if 0 in items:
            raise ConnectionError("redis went away")
        return items

    batcher: GroupCommit[int, int] = GroupCommit(flush)
    results = await asyncio.gather(*(batcher.submit(n) for n in [0, 1, 2]),
                                   return_exceptions=True)
    assert all(isinstance(r, ConnectionError) for r in results)
    assert await batcher.submit(3) == 3


async def test_a_cancelled_caller_does_not_stop_its_batch_or_the_others() -> None:
    gate = asyncio.Event()
    flushed: list[int] = []

    async def flush(items: list[int]) -> Sequence[int]:
        await gate.wait()
        flushed.extend(items)
        return items

    batcher: GroupCommit[int, int] = GroupCommit(flush)
    a = asyncio.create_task(batcher.submit(1))
    b = asyncio.create_task(batcher.submit(2))
    await asyncio.sleep(0.01)
    a.cancel()
    gate.set()
    assert await b == 2
    with pytest.raises(asyncio.CancelledError):
        await a
    await batcher.close()
    assert flushed == [1, 2]


async def test_group_commit_paces_round_trips_under_load_but_not_when_idle() -> None:
    loop = asyncio.get_running_loop()
    starts: list[float] = []

    async def flush(items: list[int]) -> Sequence[int]:
        starts.append(loop.time())
        return items

    batcher: GroupCommit[int, int] = GroupCommit(flush, min_interval_s=0.05)
    begun = loop.time()
    assert await batcher.submit(1) == 1
    assert starts[0] - begun < 0.04  # idle: at once
    assert await asyncio.gather(batcher.submit(2), batcher.submit(3)) == [2, 3]
    assert len(starts) == 2 and starts[1] - starts[0] >= 0.045  # paced, and batched together


async def test_bodies_are_stored_compressed_and_read_back_byte_for_byte(
    inbound: Inbound, redis_async: redis.asyncio.Redis
) -> None:
    body = json.dumps(load_example("check_run", "completed.with-organization"),
                      indent=2).encode()
    await inbound.store("d-big", "check_run", body, RECEIVED)
    ((_, fields),) = await redis_async.xrange(inbound.stream_of("d-big"))
    assert b"b" not in fields and len(fields[b"lz4"]) * 3 < len(body)
    (got,) = await inbound.read("w1", block_ms=None)
    assert got.body == body


async def test_an_entry_stored_raw_before_compression_is_still_read(
    inbound: Inbound, redis_async: redis.asyncio.Redis
) -> None:
    await inbound.ensure_group()
    await redis_async.xadd(inbound.stream_of("d-old"),
                           {"d": "d-old", "e": "issues", "t": 1_700_000_000_000,
                            "b": b'{"action": "opened"}'})
    (got,) = await inbound.read("w1", block_ms=None)
    assert (got.delivery_id, got.event, got.body) == ("d-old", "issues", b'{"action": "opened"}')


@pytest.mark.slow
async def test_a_store_after_redis_restarts_is_sent_again_on_a_new_connection() -> None:
    """``wire.Batch`` resends a batch through the connection's ``Retry``: a client from
    ``wire.connect`` has one, so the first store on the connection a restart closed succeeds
    (redis-py's ``from_url`` client has none and raised "Connection closed by server")."""
    from bot.journal.wire import connect
    from questbot_testing.redis_server import RedisServer

    server = RedisServer(appendonly=True)
    server.start()
    errors: list[int] = []
    reconnects: list[int] = []
    client = connect(server.url, socket_timeout=5, on_error=lambda: errors.append(1),
                     on_reconnect=lambda: reconnects.append(1))
    try:
        inbound = Inbound(client, durable=True)
        assert isinstance(await inbound.store("d-1", "issues", b"{}", RECEIVED), Stored)
        server.restart()
        assert isinstance(await inbound.store("d-2", "issues", b"{}", RECEIVED), Stored)
        assert (len(errors), len(reconnects)) == (1, 1)
        assert await client.xlen(STREAM) == 2
        server.kill()
        with pytest.raises(redis.exceptions.ConnectionError):
            await inbound.store("d-3", "issues", b"{}", RECEIVED)
        assert len(errors) == 1 + 1 + 5, "the failure, then five retries before giving up"
    finally:
        await client.aclose()
        server.cleanup()
