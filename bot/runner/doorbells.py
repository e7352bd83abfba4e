"""The doorbell streams: "quest X has effects in its outbox", read by the effect runners.

Each shard's doorbell stream (``outbox:{shard-N}``) has one consumer group, ``runners``. A
doorbell a runner read stays pending for it until the runner saw the quest's outbox empty
(``ack``, which also deletes it: the streams hold only doorbells still to be answered). While
the runner works, it resets its doorbells' idle time (``refresh``); doorbells idle longer than
``Leases.claim_idle_s`` belong to a runner that is gone, and ``claim`` takes them over.

A doorbell is rung after the atomic apply, not in it (the stream lives in the shard's slot,
the outbox in the quest's), so a crash between the two leaves effects nobody was told of. The
next apply on that quest rings again, and so does a redelivered event; for a quest that hears
of nothing more, ``sweep`` — run every ``Leases.sweep_s`` — finds outboxes that hold effects
while no lease is held and no doorbell waits for them, and rings them.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence

import redis.asyncio

from bot.journal.keys import (
    OUTBOX_PATTERN,
    RUNNERS_GROUP,
    doorbell_key,
    quest_keys,
    quest_of_outbox,
    shard_of,
)
from bot.journal.wire import RedisClient, stream_rows, text
from bot.runner.streams import read_group

log = logging.getLogger(__name__)

Bell = tuple[int, str]
"""(shard, doorbell entry id)."""

_PAGE = 1000


class Waiting:
    """Doorbells a runner keeps pending while their quest waits — for an effect's backoff, a
    lease another runner holds, this runner's own delivery of the quest, or Redis — each with
    the time to look again. ``busy`` quests (being delivered now) wait whatever the time."""

    def __init__(self) -> None:
        self.bells: dict[Bell, tuple[str, float]] = {}
        self.unkept: set[Bell] = set()
        """Doorbells left for a newer release: not refreshed, so another runner may claim
        them once they are idle ``claim_idle_s`` (``kept``)."""

    def __bool__(self) -> bool:
        return bool(self.bells)

    def __contains__(self, bell: object) -> bool:
        return bell in self.bells

    def __len__(self) -> int:
        return len(self.bells)

    def add(self, bells: Iterable[Bell], quest_id: str, when: float, *,
            keep: bool = True) -> None:
        for bell in bells:
            self.bells[bell] = (quest_id, when)
            if keep:
                self.unkept.discard(bell)
            else:
                self.unkept.add(bell)

    def kept(self) -> list[Bell]:
        """The doorbells this runner keeps to itself while they wait (refreshed)."""
        return [bell for bell in self.bells if bell not in self.unkept]

    def due(self, now: float, busy: set[str], limit: int) -> list[tuple[str, Bell]]:
        """Take the doorbells whose time has come, of at most ``limit`` quests."""
        out: list[tuple[str, Bell]] = []
        quests: set[str] = set()
        for bell, (qid, when) in list(self.bells.items()):
            if when > now or qid in busy or (qid not in quests and len(quests) >= limit):
                continue
            del self.bells[bell]
            self.unkept.discard(bell)
            quests.add(qid)
            out.append((qid, bell))
        return out

    def block_ms(self, now: float, busy: set[str], block_ms: int) -> int | None:
        """How long a read of new doorbells may wait: not past the next one due."""
        if not block_ms:
            return None
        waiting = [when for qid, when in self.bells.values() if qid not in busy]
        if not waiting:
            return block_ms
        wait = int((min(waiting) - now) * 1000)
        return max(1, min(block_ms, wait)) if wait > 0 else None


async def create_groups(client: RedisClient, shards: Iterable[int]) -> None:
    """The ``runners`` group of each shard's doorbell stream (idempotent)."""
    for shard in shards:
        try:
            await client.xgroup_create(doorbell_key(shard), RUNNERS_GROUP, id="0",
                                       mkstream=True)
        except redis.exceptions.ResponseError as exc:
            if "BUSYGROUP" not in str(exc):
                raise


async def claim(client: RedisClient, shards: Sequence[int], consumer: str,
                min_idle_ms: int, count: int) -> list[tuple[str, Bell]]:
    """Take over doorbells idle for ``min_idle_ms``: (quest id, bell), one round trip."""
    if count <= 0:
        return []
    pipe = client.pipeline(transaction=False)
    for shard in shards:
        pipe.xautoclaim(doorbell_key(shard), RUNNERS_GROUP, consumer, min_idle_ms,
                        start_id="0-0", count=count)
    out: list[tuple[str, Bell]] = []
    for shard, reply in zip(shards, await pipe.execute(), strict=True):
        for entry_id, fields in stream_rows(reply[1] if reply else ()):
            if fields:  # an entry deleted after it was read comes back empty
                out.append((text(fields["q"]), (shard, entry_id)))
    return out


async def read(client: RedisClient, shards: Sequence[int], consumer: str,
               count: int, block_ms: int | None, *, own: bool = False
               ) -> list[tuple[str, Bell]]:
    """New doorbells, waiting up to ``block_ms`` for one (``None``: do not wait). With
    ``own``, the doorbells already pending for ``consumer`` instead: after an outage, a read
    whose reply was lost left doorbells there that the runner never saw."""
    if count <= 0:
        return []
    streams = {doorbell_key(s): "0" if own else ">" for s in shards}
    found = await read_group(client, RUNNERS_GROUP, consumer, streams, count=count,
                             block_ms=None if own else block_ms)
    by_key = {doorbell_key(s): s for s in shards}
    return [(text(fields["q"]), (by_key[name], entry_id))
            for name, rows in found
            for entry_id, fields in stream_rows(rows) if fields]


async def refresh(client: RedisClient, consumer: str, bells: Iterable[Bell]) -> None:
    """Reset the idle time of doorbells still being worked on (``XCLAIM … 0 … JUSTID``), so
    nobody takes them over while this runner lives. A doorbell acknowledged meanwhile is not
    brought back: ``XCLAIM`` without ``FORCE`` claims only pending entries."""
    by_shard: dict[int, list[str | bytes | int | memoryview]] = {}
    for shard, entry_id in bells:
        by_shard.setdefault(shard, []).append(entry_id)
    if not by_shard:
        return
    pipe = client.pipeline(transaction=False)
    for shard, ids in by_shard.items():
        pipe.xclaim(doorbell_key(shard), RUNNERS_GROUP, consumer, 0, ids, justid=True)
    await pipe.execute()


async def ack(client: RedisClient, bells: Iterable[Bell]) -> None:
    """Answer doorbells: acknowledge and delete them."""
    pipe = client.pipeline(transaction=False)
    for shard, entry_id in bells:
        pipe.xack(doorbell_key(shard), RUNNERS_GROUP, entry_id)
        pipe.xdel(doorbell_key(shard), entry_id)
    if len(pipe):
        await pipe.execute()


async def hand_back(client: RedisClient, bells: Sequence[tuple[str, Bell]],
                    shards: int) -> None:
    """Leave doorbells read new to other runners: ring their quests again, then answer the
    doorbells read. In that order a crash between the two leaves a doorbell too many (it
    finds the outbox drained), never none."""
    await ring(client, {qid for qid, _ in bells}, shards)
    await ack(client, [bell for _, bell in bells])


async def ring(client: RedisClient, quest_ids: Iterable[str], shards: int) -> None:
    pipe = client.pipeline(transaction=False)
    for qid in quest_ids:
        pipe.xadd(doorbell_key(shard_of(qid, shards)), {"q": qid})
    if len(pipe):
        await pipe.execute()


async def sweep(client: RedisClient, shards: int, mine: Iterable[int]) -> list[str]:
    """Ring every quest of the shards ``mine`` whose outbox holds effects while no runner
    holds its lease and no doorbell waits for it; the quests rung. Racing an apply costs at
    most a second doorbell, which finds the outbox drained."""
    mine = set(mine)
    belled: set[str] = set()
    for shard in mine:
        start = "-"
        while True:
            rows = stream_rows(await client.xrange(doorbell_key(shard), min=start, max="+",
                                                   count=_PAGE))
            belled |= {text(f["q"]) for _, f in rows if "q" in f}
            if len(rows) < _PAGE:
                break
            start = "(" + rows[-1][0]
    orphans: list[str] = []
    page: list[str] = []
    async for key in client.scan_iter(match=OUTBOX_PATTERN, count=_PAGE):
        qid = quest_of_outbox(text(key))
        if qid is not None and qid not in belled and shard_of(qid, shards) in mine:
            page.append(qid)
        if len(page) >= _PAGE:
            orphans += await _unattended(client, page)
            page = []
    orphans += await _unattended(client, page)
    if orphans:
        log.warning("effects wait in the outboxes of %d quest(s) and no runner was told (a "
                    "crash between an apply and its doorbell?); ringing: %s", len(orphans),
                    ", ".join(orphans[:20]))
        await ring(client, orphans, shards)
    return orphans


async def _unattended(client: RedisClient, quest_ids: list[str]) -> list[str]:
    if not quest_ids:
        return []
    pipe = client.pipeline(transaction=False)
    for qid in quest_ids:
        k = quest_keys(qid)
        pipe.xlen(k.outbox)
        pipe.exists(k.lease)
    replies = await pipe.execute()
    return [qid for qid, waiting, leased in zip(quest_ids, replies[::2], replies[1::2],
                                                strict=True) if waiting and not leased]

