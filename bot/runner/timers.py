"""Durable timers: events that are due at a time (the end of a watch window, a retry backoff,
an expiring capability), kept in Redis so they survive restarts.

Each shard has a sorted set of timer ids scored by due time (epoch milliseconds) and a hash of
the event to apply, both under the shard's hash tag. A timer's id is its event's id, which the
scheduler makes deterministic (``timer_event_id``), so scheduling twice is one timer and firing
twice is one journal entry: the poller applies the event through ``Journal.apply`` — a second
firing, by another poller or after a crash, is absorbed as a duplicate — and only then removes
the timer, unless it was rescheduled meanwhile. The clock is injected, so tests drive time.
``run`` polls through Redis outages (``bot.runner.outage``): a timer due while Redis is away
fires once it is back.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from datetime import datetime
from typing import Any

from bot.core import Event, InvalidTransition
from bot.journal.keys import shard_of, timer_events_key, timers_key
from bot.journal.records import NewerRecord, RecordError, dump_event, load_event
from bot.journal.store import Applied, Journal, PolicySource, utcnow
from bot.journal.wire import RedisClient, atomic, text
from bot.runner.outage import Outage, pause

log = logging.getLogger(__name__)


def timer_event_id(quest_id: str, name: str, due: datetime) -> str:
    """A deterministic event id for the timer ``name`` of a quest, due at ``due``."""
    return f"timer:{name}:{quest_id}:{_ms(due)}"


def _ms(when: datetime) -> int:
    return int(when.timestamp() * 1000)


class Timers:
    def __init__(self, journal: Journal, policy: PolicySource, *,
                 clock: Callable[[], datetime] = utcnow, outage: Outage | None = None) -> None:
        self.journal = journal
        self.client: RedisClient = journal.client
        self.policy = policy
        self.clock = clock
        self.outage = outage or Outage()

    async def schedule(self, event: Event, due: datetime) -> None:
        """Apply ``event`` once ``due`` has passed. Scheduling the same event id again moves
        its due time."""
        shard = shard_of(event.quest_id, self.journal.shards)
        events, due_at = timer_events_key(shard), timers_key(shard)  # one slot: the shard's
        await atomic(self.client, [events, due_at],
                     ("HSET", events, event.id, dump_event(event)),
                     ("ZADD", due_at, _ms(due), event.id))

    async def cancel(self, quest_id: str, event_id: str) -> bool:
        shard = shard_of(quest_id, self.journal.shards)
        events, due_at = timer_events_key(shard), timers_key(shard)
        removed, _ = await atomic(self.client, [events, due_at], ("ZREM", due_at, event_id),
                                  ("HDEL", events, event_id))
        return bool(removed)

    async def pending(self, quest_id: str | None = None) -> list[tuple[str, int]]:
        """Scheduled timers as ``(event id, due ms)``, of one quest's shard or of all."""
        shards = (range(self.journal.shards) if quest_id is None
                  else [shard_of(quest_id, self.journal.shards)])
        out: list[tuple[str, int]] = []
        for shard in shards:
            rows: Any = await self.client.zrange(timers_key(shard), 0, -1, withscores=True)
            out += [(text(member), int(score)) for member, score in rows]
        return out

    async def fire_due(self, *, limit: int = 500) -> list[Applied | InvalidTransition]:
        """Apply every timer due by the clock's now; each fires once whatever happens."""
        now = _ms(self.clock())
        fired: list[tuple[int, str, int]] = []
        events: list[Event] = []
        for shard in range(self.journal.shards):
            rows: Any = await self.client.zrangebyscore(timers_key(shard), "-inf", now,
                                                   start=0, num=limit, withscores=True)
            if not rows:
                continue
            ids = [text(member) for member, _ in rows]
            raw = await self.client.hmget(timer_events_key(shard), ids)
            for (member, score), stored in zip(rows, raw, strict=True):
                timer_id = text(member)
                if stored is None:  # half-written schedule: nothing to fire
                    fired.append((shard, timer_id, int(score)))
                    continue
                try:
                    events.append(load_event(stored))
                except NewerRecord as exc:  # kept for a worker of the newer release
                    log.error("timer %s is left for a newer questbot: %s", timer_id, exc)
                    continue
                except (RecordError, ValueError) as exc:
                    log.error("timer %s holds an unreadable event, dropping it: %s",
                              timer_id, exc)
                fired.append((shard, timer_id, int(score)))
        results: list[Applied | InvalidTransition] = []
        if events:
            try:
                results = await self.journal.apply_many(events, self.policy)
            except NewerRecord:  # one quest is a newer release's: the others fire, one by one
                results, left = await self._one_by_one(events)
                fired = [f for f in fired if f[1] not in left]
        for result in results:
            if isinstance(result, InvalidTransition):
                log.info("a due timer was refused by its quest (it moved on): %s", result)
        for shard, timer_id, score in fired:
            await self.journal.scripts.call(
                self.client, "fire_done", [timers_key(shard), timer_events_key(shard)],
                [timer_id, score])
        return results

    async def _one_by_one(self, events: list[Event]
                          ) -> tuple[list[Applied | InvalidTransition], set[str]]:
        """Apply each timer's event alone; those whose quest a newer release wrote are left
        (their ids returned), kept in the set for a worker that reads it."""
        results: list[Applied | InvalidTransition] = []
        left: set[str] = set()
        for event in events:
            try:
                results += await self.journal.apply_many([event], self.policy)
            except NewerRecord as exc:
                log.error("timer %s is left for a newer questbot: %s", event.id, exc)
                left.add(event.id)
        return results, left

    async def run(self, stop: asyncio.Event, *, interval_s: float = 1.0) -> None:
        async def tick() -> None:
            await self.fire_due()
            await pause(stop, interval_s)

        await self.outage.guard("timers", tick, stop)
