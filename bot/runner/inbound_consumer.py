"""The workers' side of the inbound stream: reading deliveries through the consumer group,
keeping and acknowledging them, taking over a crashed worker's, and the dead letters (a part of
``Inbound``, which inherits it; ``bot.runner.inbound`` explains how deliveries are stored).

Acknowledged entries are deleted (``XACK`` + ``XDEL``): the stream holds only the backlog, and
there is one consumer group. Entries a crashed worker read and never acknowledged are taken
over by ``claim_stale`` (``XAUTOCLAIM``) once idle long enough.

A delivery that fails ``max_tries`` times moves to the shard's dead-letter stream with its last
error, and is acknowledged (``failed``): it stops being retried without being lost. Over
several shards the entry ids callers see are ``<shard>/<stream id>`` (stream ids repeat across
streams); ``_where`` and ``_by_shard`` take them apart again.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import redis.exceptions

from bot.journal.wire import RedisClient, atomic
from bot.runner.inbound_entries import InboundDelivery, read_entry, text
from bot.runner.streams import read_group

GROUP = "workers"
TRIES = "inbound:{inbound}:tries"
"""Hash: stream entry id → failed handling attempts (transient failures only)."""
DEAD = "inbound:{inbound}:dead"
"""Stream: deliveries that failed ``max_tries`` times, kept with the last error for people."""


class InboundConsumer:
    """``read``, ``keep``, ``ack`` and ``claim_stale`` for workers, over every shard's stream."""

    client: RedisClient
    shards: int
    streams: list[str]
    _group_ready: bool

    def _qualified(self, shard: int, raw: str) -> str:
        """The entry id callers see: the stream's own id on one stream, ``<shard>/<id>``
        over several (stream ids repeat across streams)."""
        return raw if self.shards == 1 else f"{shard}/{raw}"

    def _where(self, entry_id: str) -> tuple[int, str]:
        if self.shards == 1:
            return 0, entry_id
        shard, _, raw = entry_id.partition("/")
        return int(shard), raw

    def _by_shard(self, entry_ids: Sequence[str]) -> dict[int, list[str]]:
        out: dict[int, list[str]] = {}
        for entry_id in entry_ids:
            shard, raw = self._where(entry_id)
            out.setdefault(shard, []).append(raw)
        return out

    async def ensure_group(self) -> None:
        """Create the workers' consumer group (and the stream) of every shard if they do not
        exist. From id 0, so deliveries stored before the first worker started are read too."""
        for stream in self.streams:
            try:
                await self.client.xgroup_create(stream, GROUP, id="0", mkstream=True)
            except redis.exceptions.ResponseError as exc:
                if "BUSYGROUP" not in str(exc):
                    raise
        self._group_ready = True

    async def read(
        self, consumer: str, count: int = 100, block_ms: int | None = 1000
    ) -> list[InboundDelivery]:
        """About ``count`` deliveries no consumer has read yet (from every shard), waiting up
        to ``block_ms`` for one (``None``: do not wait). They stay pending for ``consumer``
        until ``ack``. The client's socket timeout must be longer than ``block_ms``.

        ``XREADGROUP``'s ``COUNT`` holds per stream: each of the shards is asked for its share
        of ``count`` (rounded up, so up to ``count`` rounded up to a multiple of the shards
        come back), and every delivery read is returned. Asking each for ``count`` and
        returning the oldest ``count`` left the rest pending for this consumer, unseen and
        unrefreshed, until another worker took them over ``claim_idle_ms`` later."""
        if not self._group_ready:
            await self.ensure_group()
        try:
            found = await read_group(self.client, GROUP, consumer,
                                     {stream: ">" for stream in self.streams},
                                     count=-(-count // len(self.streams)), block_ms=block_ms)
        except redis.exceptions.ResponseError as exc:
            if "NOGROUP" not in str(exc):
                raise
            await self.ensure_group()  # the stream was deleted (FLUSHDB, a new server)
            return []
        shard_of = {stream: n for n, stream in enumerate(self.streams)}
        got = [d for name, rows in found for entry in rows
               if (d := self._delivery(shard_of[name], entry)) is not None]
        if self.shards > 1:  # several streams: oldest first, as one stream would give them
            got.sort(key=lambda d: d.received_at)
        return got

    async def ack(self, entry_ids: Sequence[str]) -> int:
        """Mark deliveries handled and delete them; returns how many were pending."""
        if not entry_ids:
            return 0
        pipe = self.client.pipeline(transaction=False)
        for shard, raws in self._by_shard(entry_ids).items():
            pipe.xack(self.streams[shard], GROUP, *raws)
            pipe.xdel(self.streams[shard], *raws)
        replies = await pipe.execute()
        return sum(int(n) for n in replies[::2])

    async def keep(self, consumer: str, entry_ids: Sequence[str]) -> None:
        """Reset the idle time of deliveries still being handled (``XCLAIM … 0 … JUSTID``),
        so ``claim_stale`` elsewhere leaves them alone while this worker lives."""
        pipe = self.client.pipeline(transaction=False)
        for shard, raws in self._by_shard(entry_ids).items():
            pipe.xclaim(self.streams[shard], GROUP, consumer, 0,
                        list[str | bytes | int | memoryview](raws), justid=True)
        if len(pipe):
            await pipe.execute()

    async def claim_stale(
        self, consumer: str, min_idle_ms: int = 60_000, count: int = 100
    ) -> list[InboundDelivery]:
        """Take over up to ``count`` deliveries another consumer read but has not acknowledged
        for ``min_idle_ms`` (it crashed or hangs); they become ``consumer``'s."""
        if not self._group_ready:
            await self.ensure_group()
        claimed: list[InboundDelivery] = []
        for shard, stream in enumerate(self.streams):
            cursor: Any = "0-0"
            while len(claimed) < count:
                try:
                    reply = await self.client.xautoclaim(
                        stream, GROUP, consumer, min_idle_ms, start_id=cursor,
                        count=count - len(claimed),
                    )
                except redis.exceptions.ResponseError as exc:
                    if "NOGROUP" not in str(exc):
                        raise
                    await self.ensure_group()  # the stream was deleted (FLUSHDB, new server)
                    return claimed
                cursor, entries = reply[0], reply[1]
                claimed += [d for e in entries if (d := self._delivery(shard, e)) is not None]
                if text(cursor) == "0-0":
                    break
        return claimed

    async def failed(self, delivery: InboundDelivery, error: str, *, max_tries: int) -> bool:
        """Count a failed attempt. Past ``max_tries`` the delivery moves to the dead-letter
        stream (with the error) and is acknowledged, so a delivery that can never be handled
        stops being retried without being lost. Returns whether it was moved."""
        shard, raw = self._where(delivery.entry_id)
        stream = self.streams[shard]
        tries = int(await self.client.hincrby(f"{stream}:tries", raw, 1))
        if tries < max_tries:
            return False
        dead, tried = f"{stream}:dead", f"{stream}:tries"  # one slot: the shard's tag
        await atomic(self.client, [stream, dead, tried],
                     ("XADD", dead, "*", "d", delivery.delivery_id, "e", delivery.event,
                      "b", delivery.body, "error", error[:2000], "tries", str(tries)),
                     ("HDEL", tried, raw), ("XACK", stream, GROUP, raw), ("XDEL", stream, raw))
        return True

    async def dead_letters(self) -> int:
        pipe = self.client.pipeline(transaction=False)
        for stream in self.streams:
            pipe.xlen(f"{stream}:dead")
        return sum(int(n) for n in await pipe.execute())

    async def backlog(self) -> int:
        """Deliveries stored and not yet acknowledged (read or not), over every shard."""
        pipe = self.client.pipeline(transaction=False)
        for stream in self.streams:
            pipe.xlen(stream)
        return sum(int(n) for n in await pipe.execute())

    def _delivery(self, shard: int, entry: tuple[Any, Any]) -> InboundDelivery | None:
        found = read_entry(entry)
        if found is None or self.shards == 1:
            return found
        return replace(found, entry_id=self._qualified(shard, found.entry_id))
