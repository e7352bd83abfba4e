"""The effect runner: deliver every effect in the outboxes once, through adapters by type.

Theory of operation. An apply leaves effects in the quest's own outbox stream (same slot as
the journal, so it is written atomically with it) and rings its shard's doorbell stream. Each
doorbell stream has the consumer group ``runners``. A runner reads doorbells, takes the
quest's delivery lease (a key with a TTL, so one runner delivers a quest's effects at a time
and in order), and for each outbox entry whose key is not in the quest's delivered record:

* calls the adapter registered for the effect type; the adapter returns follow-up events
  (outcomes), which go through the same ``Journal.apply`` path;
* then, in one script, records the key as delivered, deletes the outbox entry and renews the
  lease for the next effect.

A runner that dies mid-delivery leaves its doorbells pending; another runner claims them with
``XAUTOCLAIM`` once they have been idle ``claim_idle_s`` — longer than the slowest adapter —
and the lease has expired by then too. The one write that can repeat is an adapter call whose
record was not written before the crash, so adapters must be idempotent by effect key where the
world allows (a hidden marker in a comment, a check run's ``external_id``).

An adapter that raises is retried with exponential backoff; after ``Backoff.max_tries``, or at
once for ``PermanentError``, the failure is recorded in the quest's failures stream, logged,
and passed to ``on_failure`` (the worker turns it into something people see) — never dropped.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field

import redis.asyncio

from bot.core import Effect, EffectType, Event, InvalidTransition
from bot.journal.errors import PermanentError
from bot.journal.keys import RUNNERS_GROUP, doorbell_key, quest_keys
from bot.journal.records import RecordError, load_effect
from bot.journal.store import Journal, PolicySource, _s, stream_rows

log = logging.getLogger(__name__)

Adapter = Callable[[Effect], Awaitable[Sequence[Event] | None]]
"""Performs one effect; returns the events that report its outcome (or nothing)."""


class Adapters:
    """The registry of adapters, keyed by effect type."""

    def __init__(self, adapters: dict[EffectType | str, Adapter] | None = None) -> None:
        self._by_type: dict[str, Adapter] = {}
        for type_, adapter in (adapters or {}).items():
            self.register(type_, adapter)

    def register(self, type_: EffectType | str, adapter: Adapter) -> None:
        self._by_type[EffectType(type_).value] = adapter

    def get(self, type_: EffectType | str) -> Adapter | None:
        return self._by_type.get(str(type_))


@dataclass(frozen=True, slots=True)
class Backoff:
    base_s: float = 1.0
    cap_s: float = 300.0
    max_tries: int = 8
    """Attempts before an effect is recorded as permanently failed."""


@dataclass(frozen=True, slots=True)
class Failure:
    """A permanent delivery failure, as recorded in the quest's failures stream."""

    quest_id: str
    effect_key: str
    effect_type: str
    error: str
    tries: int
    at: float

    def fields(self) -> dict[str, str]:
        return {"key": self.effect_key, "type": self.effect_type, "error": self.error,
                "tries": str(self.tries), "at": f"{self.at:.3f}"}


@dataclass
class RunStats:
    delivered: int = 0
    skipped: int = 0
    """Effects found already delivered (a redelivery)."""
    retried: int = 0
    failures: list[Failure] = field(default_factory=list)
    claimed: int = 0
    """Doorbells taken over from a runner that went quiet."""


@dataclass(frozen=True, slots=True)
class _Outcome:
    drained: bool
    wait_until: float = 0.0


class EffectRunner:
    """One consumer of the doorbell streams of ``shards`` (all by default)."""

    def __init__(self, journal: Journal, adapters: Adapters, policy: PolicySource, *,
                 consumer: str | None = None, shards: Sequence[int] | None = None,
                 claim_idle_s: float = 60.0, lease_s: float | None = None,
                 backoff: Backoff | None = None, clock: Callable[[], float] = time.time,
                 on_failure: Callable[[Failure], Awaitable[None]] | None = None,
                 batch: int = 64, concurrency: int = 16) -> None:
        self.journal = journal
        self.client: redis.asyncio.Redis = journal.client
        self.adapters = adapters
        self.policy = policy
        self.consumer = consumer or f"runner-{uuid.uuid4().hex[:8]}"
        self.shards = list(range(journal.shards) if shards is None else shards)
        self.claim_idle_ms = int(claim_idle_s * 1000)
        self.lease_ms = int((lease_s if lease_s is not None else claim_idle_s) * 1000)
        self.backoff = backoff or Backoff()
        self.clock = clock
        self.on_failure = on_failure
        self.batch = batch
        self._limit = asyncio.Semaphore(concurrency)
        self._deferred: dict[tuple[int, str], tuple[str, float]] = {}
        """(shard, doorbell entry id) → (quest id, when to look again): held in our PEL."""

    async def setup(self) -> None:
        """Create the consumer groups (idempotent)."""
        for shard in self.shards:
            try:
                await self.client.xgroup_create(doorbell_key(shard), RUNNERS_GROUP, id="0",
                                                mkstream=True)
            except redis.exceptions.ResponseError as exc:
                if "BUSYGROUP" not in str(exc):
                    raise

    async def run(self, stop: asyncio.Event, *, block_ms: int = 1000) -> None:
        await self.setup()
        while not stop.is_set():
            await self.run_once(block_ms=block_ms)

    async def run_once(self, *, block_ms: int = 0) -> RunStats:
        """Claim stale doorbells, read new ones, deliver the quests they name."""
        stats = RunStats()
        bells: dict[str, list[tuple[int, str]]] = {}

        def add(qid: str, shard: int, entry_id: str) -> None:
            bells.setdefault(qid, []).append((shard, entry_id))

        now = self.clock()
        for (shard, entry_id), (qid, when) in list(self._deferred.items()):
            if when <= now:
                del self._deferred[(shard, entry_id)]
                add(qid, shard, entry_id)
        for shard in self.shards:
            reply = await self.client.xautoclaim(doorbell_key(shard), RUNNERS_GROUP,
                                                 self.consumer, self.claim_idle_ms,
                                                 start_id="0-0", count=self.batch)
            for entry_id, fields in stream_rows(reply[1] if reply else ()):
                if fields and (shard, entry_id) not in self._deferred:
                    stats.claimed += 1
                    add(_s(fields["q"]), shard, entry_id)
        block = block_ms if block_ms and not bells and not self._deferred else None
        streams = {doorbell_key(s): ">" for s in self.shards}
        read: object = await self.client.xreadgroup(
            RUNNERS_GROUP, self.consumer, streams,  # type: ignore[arg-type]
            count=self.batch, block=block)
        by_key = {doorbell_key(s): s for s in self.shards}
        for name, rows in _read_reply(read):
            for entry_id, fields in stream_rows(rows):
                add(_s(fields["q"]), by_key[name], entry_id)
        if not bells:
            if self._deferred and block_ms:
                await asyncio.sleep(min(block_ms / 1000, 0.05))
            return stats
        await asyncio.gather(*(self._serve(qid, entries, stats)
                               for qid, entries in bells.items()))
        return stats

    async def _serve(self, quest_id: str, entries: list[tuple[int, str]],
                     stats: RunStats) -> None:
        async with self._limit:
            outcome = await self.deliver(quest_id, stats)
        if outcome.drained:
            pipe = self.client.pipeline(transaction=False)
            for shard, entry_id in entries:
                pipe.xack(doorbell_key(shard), RUNNERS_GROUP, entry_id)
                pipe.xdel(doorbell_key(shard), entry_id)
            await pipe.execute()
        else:
            for shard, entry_id in entries:
                self._deferred[(shard, entry_id)] = (quest_id, outcome.wait_until)

    async def deliver(self, quest_id: str, stats: RunStats | None = None) -> _Outcome:
        """Deliver the quest's pending effects in order, holding its lease. Not drained when
        another runner holds the lease or an effect waits for its backoff."""
        stats = stats if stats is not None else RunStats()
        k = quest_keys(quest_id)
        token = f"{self.consumer}:{uuid.uuid4().hex}"
        if not await self.client.set(k.lease, token, nx=True, px=self.lease_ms):
            return _Outcome(False, self.clock() + 0.05)
        # the lease runs ``lease_ms`` from the write before each adapter call: taking it,
        # recording the previous effect (the script renews it), or an explicit renewal
        renewed = True
        try:
            while True:
                rows = stream_rows(await self.client.xrange(k.outbox, "-", "+",
                                                            count=self.batch))
                if not rows:
                    return _Outcome(True)
                keys = [_s(f["k"]) for _, f in rows]
                pipe = self.client.pipeline(transaction=False)
                pipe.hmget(k.done, keys)
                pipe.hmget(k.retry_at, keys)
                done, retry_at = await pipe.execute()
                for (entry_id, fields), key, was_done, due in zip(rows, keys, done, retry_at,
                                                                  strict=True):
                    if was_done is not None:
                        await self.client.xdel(k.outbox, entry_id)
                        stats.skipped += 1
                        continue
                    if due is not None and int(due) / 1000 > self.clock():
                        return _Outcome(False, int(due) / 1000)
                    if not renewed:
                        await self.journal.scripts.call(self.client, "renew", [k.lease],
                                                        [token, self.lease_ms])
                    wait, renewed = await self._deliver_one(quest_id, entry_id, key,
                                                            fields["e"], token, stats)
                    if wait is not None:
                        return _Outcome(False, wait)
        finally:
            await self.journal.scripts.call(self.client, "release", [k.lease], [token])

    async def _deliver_one(self, quest_id: str, entry_id: str, key: str, raw: object,
                           token: str, stats: RunStats) -> tuple[float | None, bool]:
        """Deliver one effect. Returns when to try again if it must wait for a backoff, and
        whether the lease was renewed by recording the delivery."""
        k = quest_keys(quest_id)
        try:
            effect = load_effect(raw)  # type: ignore[arg-type]
        except (RecordError, ValueError) as exc:
            await self._fail(quest_id, entry_id, key, "unknown", f"unreadable effect: {exc}",
                             0, stats)
            return None, False
        adapter = self.adapters.get(effect.type)
        if adapter is None:
            await self._fail(quest_id, entry_id, key, effect.type.value,
                             f"no adapter is registered for {effect.type.value}", 0, stats)
            return None, False
        try:
            follow_up = await adapter(effect)
        except PermanentError as exc:
            tries = int(await self.client.hget(k.tries, key) or 0) + 1
            await self._fail(quest_id, entry_id, key, effect.type.value, _describe(exc),
                             tries, stats)
            return None, False
        except Exception as exc:
            now = self.clock()
            tries = int(await self.journal.scripts.call(  # type: ignore[call-overload]
                self.client, "retry_later", [k.tries, k.retry_at],
                [key, int(self.backoff.base_s * 1000), int(self.backoff.cap_s * 1000),
                 int(now * 1000)]))
            if tries >= self.backoff.max_tries:
                await self._fail(quest_id, entry_id, key, effect.type.value, _describe(exc),
                                 tries, stats)
                return None, False
            log.info("effect %s failed (try %d of %d), retrying: %s", key, tries,
                     self.backoff.max_tries, _describe(exc))
            stats.retried += 1
            due = await self.client.hget(k.retry_at, key)
            return (int(due) / 1000 if due is not None else now), False
        if follow_up:
            results = await self.journal.apply_many(list(follow_up), self.policy)
            for result in results:
                if isinstance(result, InvalidTransition):
                    log.warning("outcome of effect %s was refused by the quest: %s", key,
                                result)
        await self.journal.scripts.call(self.client, "delivered",
                                        [k.done, k.outbox, k.tries, k.retry_at, k.lease],
                                        [key, entry_id, "ok", token, self.lease_ms])
        stats.delivered += 1
        return None, True

    async def _fail(self, quest_id: str, entry_id: str, key: str, type_: str, error: str,
                    tries: int, stats: RunStats) -> None:
        k = quest_keys(quest_id)
        failure = Failure(quest_id, key, type_, error, tries, self.clock())
        args: list[str | int | float] = [key, entry_id]
        for name, value in failure.fields().items():
            args += [name, value]
        recorded = await self.journal.scripts.call(
            self.client, "failed", [k.done, k.outbox, k.tries, k.retry_at, k.failures], args)
        if not recorded:
            return
        log.error("effect %s of quest %s failed for good after %d tries: %s", key, quest_id,
                  tries, error)
        stats.failures.append(failure)
        if self.on_failure is not None:
            await self.on_failure(failure)


async def failures(client: redis.asyncio.Redis, quest_id: str) -> list[Failure]:
    """The permanent delivery failures recorded for a quest, oldest first."""
    rows = stream_rows(await client.xrange(quest_keys(quest_id).failures, "-", "+"))
    return [Failure(quest_id, _s(f["key"]), _s(f["type"]), _s(f["error"]), int(f["tries"]),
                    float(f["at"])) for _, f in rows]


async def delivered(client: redis.asyncio.Redis, quest_id: str) -> dict[str, str]:
    """The delivered-key record of a quest: effect key → ``ok`` or ``failed``."""
    raw = await client.hgetall(quest_keys(quest_id).done)
    return {_s(a): _s(b) for a, b in raw.items()}


def _describe(exc: BaseException) -> str:
    text = str(exc) or type(exc).__name__
    return f"{type(exc).__name__}: {text}"[:500]


def _read_reply(reply: object) -> list[tuple[str, object]]:
    """XREADGROUP replies as (stream name, rows), for RESP2 lists and RESP3 maps alike."""
    if not reply:
        return []
    if isinstance(reply, dict):
        return [(_s(name), rows[0] if isinstance(rows, list) and rows and
                 isinstance(rows[0], list) else rows) for name, rows in reply.items()]
    return [(_s(name), rows) for name, rows in reply]  # type: ignore[attr-defined]
