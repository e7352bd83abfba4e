"""The inbound delivery store: webhook deliveries kept in Redis until a worker has handled them.

Theory of operation. The web process stores each delivery (its id, event name, receipt time
and the exact body bytes) and only then answers GitHub; workers read the deliveries through a
consumer group, turn them into core events and acknowledge them. A delivery is stored at most
once per ``X-GitHub-Delivery`` id: GitHub redelivers with the same id (manual redelivery, or a
retried request), and a redelivery must not become a second signal.

Keys (``bot.journal.keys.inbound_stream``): on one Redis a single stream and its markers, all
under the hash tag ``{inbound}``; on a Redis Cluster ``INBOUND_CLUSTER_SHARDS`` such streams,
``inbound:{inbound-<n>}``, a delivery going to the shard of its id, workers reading them all::

    inbound:{inbound}                   stream, consumer group "workers": d, e, t, lz4
    inbound:{inbound}:seen:<delivery>   string with a TTL: the stream entry id first stored

The dedupe marker and the stream entry are written by one Lua script, so they are atomic: a
crash cannot leave a marker without its entry (which would make GitHub's redelivery of a lost
delivery look like a duplicate and drop it for good). Atomicity across keys needs one slot,
hence the shared tag; a batch of deliveries is one script call a shard, in one round trip.
Over several shards the entry ids callers see are ``<shard>/<stream id>``.

Markers live four days: GitHub lets people redeliver deliveries from the past three days
(https://docs.github.com/en/webhooks/testing-and-troubleshooting-webhooks/redelivering-webhooks),
and a day of margin covers clock skew and slow redeliveries.

Group commit. Each ``store`` call joins a batch; one Redis round trip (one ``EVALSHA`` for the
whole batch, then, with durable acks on a server that has it, one ``WAITAOF``) stores the
batch, and every caller gets its own answer only after that round trip — nobody is answered
before their delivery is stored. The first caller that finds no round trip in flight starts
one; callers arriving while it is in flight form the next batch. Under load the next round
trip also waits until ``flush_interval_ms`` (2 ms) after the previous one started, so batches
grow with the load: a round trip costs the web process about 150-250 µs of CPU whatever its
size, and storing one delivery about 10 µs more, so ten to a batch is most of the difference
between keeping up with GitHub and not. A delivery arriving at an idle server goes at once.

Durability. With durable acks the answer waits for ``WAITAOF`` (Redis 7.2+), which returns
once the AOF is fsynced: immediately after the write with ``appendfsync always`` (Redis fsyncs
once per event-loop turn, its own group commit), but only at the next once-a-second fsync with
``appendfsync everysec`` — there each acknowledgement takes up to a second and, one round trip
being in flight at a time, at most one batch (``MAX_BATCH`` deliveries) is stored a second: run
the webhook's Redis with ``appendfsync always``. Before 7.2 the durability helper checks
``appendfsync always`` instead and warns if it is not set.

Bodies are stored LZ4-compressed (an LZ4 block with its size, field ``lz4``): GitHub's JSON
shrinks about four and a half times for ~9 µs of CPU per 15 KB, and every byte stored is a byte
Redis appends to its AOF and writes to disk. On this project's two-core test machine the disk
writes were what stalled: Redis's latency monitor showed AOF writes blocking its main thread
for up to 58 ms at 25 MB/s of bodies (``scripts/bench_webhook.py``). zlib at its fastest level
shrinks them a little more but cost ~45 µs a delivery, over a quarter of the web process's CPU.
Entries with a raw body (field ``b``, as stored before) are still read; an entry that cannot be
read back goes to the dead letters instead of failing the read. Upgrade workers before the web
process: a worker from before this change cannot read an ``lz4`` entry.

Workers read the stream through ``bot.runner.inbound_consumer`` (``read``, ``ack``, ``keep``,
``claim_stale``, the dead letters), whose methods ``Inbound`` inherits.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import redis.asyncio
import redis.exceptions

from bot.journal.durability import Durability
from bot.journal.keys import INBOUND_CLUSTER_SHARDS, inbound_shard, inbound_stream
from bot.journal.wire import Arg, Batch, Head, RedisClient
from bot.runner.group_commit import MAX_BATCH, GroupCommit
from bot.runner.inbound_consumer import InboundConsumer
from bot.runner.inbound_entries import compress, text

STREAM = "inbound:{inbound}"
SEEN_TTL_SECONDS = 4 * 24 * 3600
FLUSH_INTERVAL_MS = 2.0


def seen_key(delivery_id: str, shards: int = 1) -> str:
    """The dedupe marker of one delivery. The key's hash tag is the first ``{…}`` in it, which
    is always its shard's (``{inbound}`` on one Redis), so braces in a delivery id cannot move
    it to another slot."""
    return f"{inbound_stream(inbound_shard(delivery_id, shards), shards)}:seen:{delivery_id}"


def default_shards(client: RedisClient) -> int:
    """One inbound stream on one Redis, ``INBOUND_CLUSTER_SHARDS`` on a cluster."""
    return INBOUND_CLUSTER_SHARDS if isinstance(client, redis.asyncio.RedisCluster) else 1


STORE = """
-- KEYS[1]: the inbound stream; KEYS[1 + i]: the seen marker of delivery i
-- ARGV[1]: marker ttl (s); then 4 values per delivery: delivery id, event, received ms,
-- LZ4-compressed body
-- returns, per delivery: {1, new entry id} or {0, the entry id stored first}
local out = {}
for i = 2, #KEYS do
  local a = (i - 2) * 4 + 2
  local first = redis.call('GET', KEYS[i])
  if first then
    out[#out + 1] = {0, first}
  else
    local id = redis.call('XADD', KEYS[1], '*', 'd', ARGV[a], 'e', ARGV[a + 1],
                          't', ARGV[a + 2], 'lz4', ARGV[a + 3])
    redis.call('SET', KEYS[i], id, 'EX', ARGV[1])
    out[#out + 1] = {1, id}
  end
end
return out
"""
_STORE_SHA = hashlib.sha1(STORE.encode(), usedforsecurity=False).hexdigest()
_STORE_HEAD = Head.of("EVALSHA", _STORE_SHA)


@dataclass(frozen=True, slots=True)
class Stored:
    """The delivery is in the inbound stream (durably, with durable acks on)."""

    delivery_id: str
    entry_id: str


@dataclass(frozen=True, slots=True)
class Duplicate:
    """The delivery id was stored before; nothing was written. ``entry_id`` is the first
    entry's (it may since have been handled and deleted)."""

    delivery_id: str
    entry_id: str


@dataclass(frozen=True, slots=True)
class _Pending:
    delivery_id: str
    event: str
    body: bytes
    """Compressed, as stored."""
    received_ms: int


class Inbound(InboundConsumer):
    """The inbound stream: ``store`` for the web process; ``read``, ``ack`` and
    ``claim_stale`` for workers.

    ``client`` must return bytes (``decode_responses=False``, the default): bodies are kept
    as the exact bytes GitHub signed. With ``durable`` on, ``store`` returns only once Redis
    has fsynced the batch to its AOF (``WAITAOF``; on Redis before 7.2 the server must run
    ``appendfsync always`` instead — ``bot.journal.durability`` checks and warns).
    """

    def __init__(
        self,
        client: RedisClient,
        *,
        durable: bool = True,
        durability_timeout_ms: int = 1000,
        seen_ttl_seconds: int = SEEN_TTL_SECONDS,
        max_batch: int = MAX_BATCH,
        on_batch: Callable[[int], None] | None = None,
        flush_interval_ms: float = FLUSH_INTERVAL_MS,
        shards: int | None = None,
    ) -> None:
        self.client = client
        self.shards = shards or default_shards(client)
        """Streams the deliveries are spread over (by delivery id); the web process and
        every worker must agree. One on a single Redis, ``INBOUND_CLUSTER_SHARDS`` on a
        cluster, where each shard's stream lands on a slot of its own."""
        self.streams = [inbound_stream(n, self.shards) for n in range(self.shards)]
        self.durable = durable
        self.durability = Durability(timeout_ms=durability_timeout_ms,
                                     cluster=isinstance(client, redis.asyncio.RedisCluster))
        self.seen_ttl_seconds = seen_ttl_seconds
        self._batcher: GroupCommit[_Pending, Stored | Duplicate] = GroupCommit(
            self._store_batch, size=lambda p: len(p.body), max_items=max_batch,
            on_batch=on_batch, min_interval_s=flush_interval_ms / 1000,
        )
        self._group_ready = False

    async def store(
        self, delivery_id: str, event_name: str, body: bytes, received_at: datetime
    ) -> Stored | Duplicate:
        """Store one delivery unless its id was stored before; returns once it is stored
        (and durable, with durable acks). Raises ``redis.exceptions.RedisError`` (or
        ``DurabilityError``) if it cannot be: the caller must not acknowledge it then."""
        received_ms = int(received_at.timestamp() * 1000)
        return await self._batcher.submit(
            _Pending(delivery_id, event_name, compress(body), received_ms))

    async def close(self) -> None:
        """Let the batches in flight finish (before the Redis client is closed)."""
        await self._batcher.close()

    async def _store_batch(self, batch: list[_Pending]) -> list[Stored | Duplicate]:
        # per shard: EVALSHA <sha> <numkeys> <stream> <marker>... <ttl> (<id> <event> <ms>
        # <body>)...; one script call a shard, all of them in one round trip
        by_shard: dict[int, list[int]] = {}
        for n, p in enumerate(batch):
            by_shard.setdefault(inbound_shard(p.delivery_id, self.shards), []).append(n)
        calls: list[list[Arg]] = []
        for shard, members in by_shard.items():
            keys: list[Arg] = [len(members) + 1, self.streams[shard]]
            values: list[Arg] = [self.seen_ttl_seconds]
            for n in members:
                p = batch[n]
                keys.append(seen_key(p.delivery_id, self.shards))
                values += (p.delivery_id, p.event, p.received_ms, p.body)
            calls.append(keys + values)
        for attempt in range(2):
            replies, waited = await self._send(calls)
            if any(isinstance(r, redis.exceptions.NoScriptError) for r in replies) \
                    and attempt == 0:
                # A restarted or failed-over server lost its script cache; nothing ran
                # there, and what ran elsewhere answers the second call as duplicates.
                await self.client.script_load(STORE)
                continue
            for reply in replies:
                if isinstance(reply, Exception):
                    raise reply
            if waited is not None:
                await self.durability.check(self.client, waited)
            out: list[Stored | Duplicate | None] = [None] * len(batch)
            for (shard, members), reply in zip(by_shard.items(), replies, strict=True):
                for n, (new, entry) in zip(members, reply, strict=True):
                    entry_id = self._qualified(shard, text(entry))
                    out[n] = (Stored if int(new) else Duplicate)(batch[n].delivery_id,
                                                                  entry_id)
            return [o for o in out if o is not None]
        raise AssertionError("unreachable: the second attempt returns or raises")

    async def _send(self, calls: list[list[Arg]]) -> tuple[list[Any], object | None]:
        """One round trip: each script call's reply (or its error), and ``WAITAOF``'s (or on
        a cluster ``WAIT``'s) reply if it was sent (durable acks on, and the server not known
        to lack it).

        The request is packed and its replies read by ``bot.journal.wire.Batch``, not a
        redis-py pipeline: redis-py runs every argument through its encoder and every reply
        through a parse step and a callback, which for a batch of 4 arguments a delivery cost
        the web process more CPU than the rest of the round trip. Like redis-py's own
        commands, a connection error is retried by the connection's ``Retry`` policy, and a
        retried batch is safe: the script answers a delivery it already stored as a duplicate.
        """
        batch = Batch()
        for args in calls:
            batch.call(_STORE_HEAD, *args)
        command = self.durability.command() if self.durable else None
        if command is not None:
            batch.add(*command)
        replies = await batch.execute(self.client)
        return replies[:len(calls)], replies[-1] if command is not None else None

    def stream_of(self, delivery_id: str) -> str:
        """The stream a delivery is (or would be) stored in."""
        return self.streams[inbound_shard(delivery_id, self.shards)]
