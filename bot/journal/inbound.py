"""The inbound delivery store: webhook deliveries kept in Redis until a worker has handled them.

Theory of operation. The web process stores each delivery (its id, event name, receipt time
and the exact body bytes) and only then answers GitHub; workers read the deliveries through a
consumer group, turn them into core events and acknowledge them. A delivery is stored at most
once per ``X-GitHub-Delivery`` id: GitHub redelivers with the same id (manual redelivery, or a
retried request), and a redelivery must not become a second signal.

Keys (``{inbound}`` is the Redis Cluster hash tag: every inbound key is in one slot)::

    inbound:{inbound}                   stream, consumer group "workers": d, e, t, lz4
    inbound:{inbound}:seen:<delivery>   string with a TTL: the stream entry id first stored

The dedupe marker and the stream entry are written by one Lua script, so they are atomic: a
crash cannot leave a marker without its entry (which would make GitHub's redelivery of a lost
delivery look like a duplicate and drop it for good). Atomicity across keys needs one slot,
hence the shared hash tag. The stream is a single key and so a single slot anyway; the markers
are small and expire, so sharing its slot costs little. (If one slot ever becomes the limit,
shard both by delivery id — ``inbound:{inbound-<n>}`` — and have workers read every shard.)

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

Acknowledged entries are deleted (``XACK`` + ``XDEL``): the stream holds only the backlog, and
there is one consumer group. Entries a crashed worker read and never acknowledged are taken
over by ``claim_stale`` (``XAUTOCLAIM``) once idle long enough.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import lz4.block
import redis.asyncio
import redis.exceptions

from bot.journal.durability import Durability
from bot.journal.group_commit import MAX_BATCH, GroupCommit
from bot.journal.wire import Arg, Batch, Head, RedisClient

STREAM = "inbound:{inbound}"
GROUP = "workers"
TRIES = "inbound:{inbound}:tries"
"""Hash: stream entry id → failed handling attempts (transient failures only)."""
DEAD = "inbound:{inbound}:dead"
"""Stream: deliveries that failed ``max_tries`` times, kept with the last error for people."""
SEEN_TTL_SECONDS = 4 * 24 * 3600
FLUSH_INTERVAL_MS = 2.0


def seen_key(delivery_id: str) -> str:
    """The dedupe marker of one delivery. The key's hash tag is the first ``{…}`` in it, which
    is always ``{inbound}``, so braces in a delivery id cannot move it to another slot."""
    return f"{STREAM}:seen:{delivery_id}"


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
class InboundDelivery:
    """One stored delivery, as a worker reads it."""

    entry_id: str
    delivery_id: str
    event: str
    body: bytes
    received_at: datetime
    unreadable: str | None = None
    """Why the stored entry cannot be read back (``body`` then holds what was stored): a
    corrupt compressed body, or an entry with no body. The worker moves it to the dead
    letters at once rather than failing the whole read."""


@dataclass(frozen=True, slots=True)
class _Pending:
    delivery_id: str
    event: str
    body: bytes
    """Compressed, as stored."""
    received_ms: int


class Inbound:
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
    ) -> None:
        self.client = client
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
            _Pending(delivery_id, event_name, _compress(body), received_ms))

    async def close(self) -> None:
        """Let the batches in flight finish (before the Redis client is closed)."""
        await self._batcher.close()

    async def _store_batch(self, batch: list[_Pending]) -> list[Stored | Duplicate]:
        # EVALSHA <sha> <numkeys> <stream> <marker>... <ttl> (<id> <event> <ms> <body>)...
        keys: list[Arg] = [len(batch) + 1, STREAM]
        values: list[Arg] = [self.seen_ttl_seconds]
        for p in batch:
            keys.append(seen_key(p.delivery_id))
            values += (p.delivery_id, p.event, p.received_ms, p.body)
        keys += values
        for attempt in range(2):
            reply, waited = await self._send(keys)
            if isinstance(reply, redis.exceptions.NoScriptError) and attempt == 0:
                # A restarted or failed-over server lost its script cache; nothing ran.
                await self.client.script_load(STORE)
                continue
            if isinstance(reply, Exception):
                raise reply
            if waited is not None:
                await self.durability.check(self.client, waited)
            return [
                (Stored if int(new) else Duplicate)(p.delivery_id, _text(entry))
                for p, (new, entry) in zip(batch, reply, strict=True)
            ]
        raise AssertionError("unreachable: the second attempt returns or raises")

    async def _send(self, args: list[Arg]) -> tuple[Any, object | None]:
        """One round trip: the script's reply (or its error), and ``WAITAOF``'s reply if it
        was sent (durable acks on, and the server not known to lack it).

        The request is packed and its replies read by ``bot.journal.wire.Batch``, not a
        redis-py pipeline: redis-py runs every argument through its encoder and every reply
        through a parse step and a callback, which for a batch of 4 arguments a delivery cost
        the web process more CPU than the rest of the round trip. Like redis-py's own
        commands, a connection error is retried by the connection's ``Retry`` policy, and a
        retried batch is safe: the script answers a delivery it already stored as a duplicate.
        """
        batch = Batch()
        batch.call(_STORE_HEAD, *args)
        command = self.durability.command() if self.durable else None
        if command is not None:
            batch.add(*command)
        replies = await batch.execute(self.client)
        return replies[0], replies[1] if command is not None else None

    async def ensure_group(self) -> None:
        """Create the workers' consumer group (and the stream) if they do not exist. From
        id 0, so deliveries stored before the first worker started are read too."""
        try:
            await self.client.xgroup_create(STREAM, GROUP, id="0", mkstream=True)
        except redis.exceptions.ResponseError as exc:
            if "BUSYGROUP" not in str(exc):
                raise
        self._group_ready = True

    async def read(
        self, consumer: str, count: int = 100, block_ms: int | None = 1000
    ) -> list[InboundDelivery]:
        """Up to ``count`` deliveries no consumer has read yet, waiting up to ``block_ms``
        for one (``None``: do not wait). They stay pending for ``consumer`` until ``ack``.
        The client's socket timeout must be longer than ``block_ms``."""
        if not self._group_ready:
            await self.ensure_group()
        try:
            reply = await self.client.xreadgroup(
                GROUP, consumer, {STREAM: ">"}, count=count, block=block_ms
            )
        except redis.exceptions.ResponseError as exc:
            if "NOGROUP" not in str(exc):
                raise
            await self.ensure_group()  # the stream was deleted (FLUSHDB, a new server)
            return []
        entries: list[tuple[Any, Any]] = []
        streams: Any = reply or []  # [[stream, [(id, fields), ...]], ...] (RESP2)
        for _stream, stream_entries in streams:
            entries += stream_entries
        return [d for d in map(_delivery, entries) if d is not None]

    async def ack(self, entry_ids: Sequence[str]) -> int:
        """Mark deliveries handled and delete them; returns how many were pending."""
        if not entry_ids:
            return 0
        pipe = self.client.pipeline(transaction=False)
        pipe.xack(STREAM, GROUP, *entry_ids)
        pipe.xdel(STREAM, *entry_ids)
        acked, _ = await pipe.execute()
        return int(acked)

    async def claim_stale(
        self, consumer: str, min_idle_ms: int = 60_000, count: int = 100
    ) -> list[InboundDelivery]:
        """Take over up to ``count`` deliveries another consumer read but has not acknowledged
        for ``min_idle_ms`` (it crashed or hangs); they become ``consumer``'s."""
        if not self._group_ready:
            await self.ensure_group()
        claimed: list[InboundDelivery] = []
        cursor: Any = "0-0"
        while len(claimed) < count:
            try:
                reply = await self.client.xautoclaim(
                    STREAM, GROUP, consumer, min_idle_ms, start_id=cursor,
                    count=count - len(claimed),
                )
            except redis.exceptions.ResponseError as exc:
                if "NOGROUP" not in str(exc):
                    raise
                await self.ensure_group()  # the stream was deleted (FLUSHDB, a new server)
                return claimed
            cursor, entries = reply[0], reply[1]
            claimed += [d for d in map(_delivery, entries) if d is not None]
            if _text(cursor) == "0-0":
                break
        return claimed

    async def failed(self, delivery: InboundDelivery, error: str, *, max_tries: int) -> bool:
        """Count a failed attempt. Past ``max_tries`` the delivery moves to the dead-letter
        stream (with the error) and is acknowledged, so a delivery that can never be handled
        stops being retried without being lost. Returns whether it was moved."""
        tries = int(await self.client.hincrby(TRIES, delivery.entry_id, 1))
        if tries < max_tries:
            return False
        pipe = self.client.pipeline(transaction=True)  # one slot: the {inbound} tag
        pipe.xadd(DEAD, {"d": delivery.delivery_id, "e": delivery.event, "b": delivery.body,
                         "error": error[:2000], "tries": str(tries)})
        pipe.hdel(TRIES, delivery.entry_id)
        pipe.xack(STREAM, GROUP, delivery.entry_id)
        pipe.xdel(STREAM, delivery.entry_id)
        await pipe.execute()
        return True

    async def dead_letters(self) -> int:
        return int(await self.client.xlen(DEAD))

    async def backlog(self) -> int:
        """Deliveries stored and not yet acknowledged (read or not)."""
        return int(await self.client.xlen(STREAM))


_compress: Callable[[bytes], bytes] = lz4.block.compress  # the block keeps its size up front
_decompress: Callable[[bytes], bytes] = lz4.block.decompress


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _delivery(entry: tuple[Any, Any]) -> InboundDelivery | None:
    entry_id, fields = entry
    if not fields:  # deleted after it was read (a claim of an entry someone acknowledged)
        return None
    unreadable = None
    if b"lz4" in fields:
        try:
            body = _decompress(fields[b"lz4"])
        except (lz4.block.LZ4BlockError, ValueError, MemoryError) as exc:
            body = bytes(fields[b"lz4"])
            unreadable = f"the stored body is not an LZ4 block: {exc}"
    elif b"b" in fields:
        body = bytes(fields[b"b"])
    else:
        body, unreadable = b"", "the entry holds no body (neither lz4 nor b)"
    return InboundDelivery(
        entry_id=_text(entry_id),
        delivery_id=_text(fields.get(b"d", b"?")),
        event=_text(fields.get(b"e", b"?")),
        body=body,
        received_at=datetime.fromtimestamp(int(fields.get(b"t", 0)) / 1000, UTC),
        unreadable=unreadable,
    )
