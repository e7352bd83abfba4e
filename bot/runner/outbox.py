"""The effect runner: deliver every effect in the outboxes once, through adapters by type.

Theory of operation. An apply leaves effects in the quest's own outbox stream (same slot as
the journal, so it is written atomically with it) and rings its shard's doorbell stream
(``bot.runner.doorbells``). A runner reads doorbells, takes the quest's delivery lease
(``bot.runner.lease``: short, renewed by a heartbeat while it works) and, for each outbox
entry whose key is not in the quest's delivered record:

* calls the adapter registered for the effect type; the adapter returns follow-up events
  (outcomes), which go through the same ``Journal.apply`` path;
* then, in one script, records the key as delivered, deletes the outbox entry and keeps the
  lease for the next effect.

Who is woken, and when. Every apply that adds effects rings, even when the outbox already
held some. A runner that finds the lease held by another drops a doorbell it read new — safe
because a holder, after releasing the lease, looks at the outbox once more and delivers again
if it is not empty: the effect behind the dropped doorbell was written before the failed take,
which came before the release. A runner that dies leaves its doorbells pending; the heartbeat
no longer refreshes them, and another runner takes them over ``Leases.claim_idle_s`` after its
last heartbeat, when its lease has lapsed too. A doorbell taken over is never dropped (it may
be the dead holder's own, the one that stands for the dropped ones): while the lease is still
held it waits a heartbeat and tries again. A heartbeat that finds another runner holding the
lease (this one stalled) stops the adapter and records nothing.

The one write that can repeat is an adapter call whose record was not written before the
crash (or whose runner lost its lease), so adapters must be idempotent by effect key where
the world allows (a hidden marker in a comment, a check run's ``external_id``, a trailer in a
pushed commit).

An adapter that raises is retried with exponential backoff; after ``Backoff.max_tries``, or at
once for ``PermanentError``, the failure is recorded in the quest's failures stream, logged,
and passed to ``on_failure`` (the worker turns it into something people see) — never dropped.

Delivering one quest's outbox is ``bot.runner.quest_delivery`` (``QuestDelivery``, which the
runner extends); reading doorbells, choosing quests and deferring them is here.

Two ways to drive it: ``run(stop)``, the worker's loop, serves quests concurrently (each in a
task of its own, up to ``concurrency``) while it goes on reading doorbells, and survives Redis
going away (``bot.runner.outage``); ``run_once()`` serves what it finds and returns when that
is done, for tests and the demo, which drive time themselves.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import time
import uuid
from collections.abc import Awaitable, Callable, Sequence

import redis.asyncio

from bot.journal.store import Journal, PolicySource
from bot.runner import doorbells
from bot.runner.delivery import (
    Adapter,
    Adapters,
    Backoff,
    Failure,
    RunStats,
    delivered,
    failures,
)
from bot.runner.doorbells import Bell
from bot.runner.lease import Leases
from bot.runner.outage import REDIS_AWAY, Outage, nogroup
from bot.runner.quest_delivery import QuestDelivery

__all__ = ["Adapter", "Adapters", "Backoff", "EffectRunner", "Failure", "RunStats",
           "delivered", "failures"]

log = logging.getLogger(__name__)

SHUTDOWN_GRACE_S = 15.0
"""How long a stopping runner waits for its cancelled deliveries (an agent killed and reaped)."""


class EffectRunner(QuestDelivery):
    """One consumer of the doorbell streams of ``shards`` (all by default)."""

    def __init__(self, journal: Journal, adapters: Adapters, policy: PolicySource, *,
                 consumer: str | None = None, shards: Sequence[int] | None = None,
                 leases: Leases | None = None, backoff: Backoff | None = None,
                 clock: Callable[[], float] = time.time,
                 on_failure: Callable[[Failure], Awaitable[None]] | None = None,
                 outage: Outage | None = None, batch: int = 64,
                 concurrency: int = 16) -> None:
        super().__init__(journal, adapters, policy,
                         consumer=consumer or f"runner-{uuid.uuid4().hex[:8]}",
                         leases=leases, backoff=backoff, clock=clock, on_failure=on_failure,
                         batch=batch)
        self.shards = list(range(journal.shards) if shards is None else shards)
        self.outage = outage or Outage()
        self.concurrency = concurrency
        self._limit = asyncio.Semaphore(concurrency)
        self._deferred = doorbells.Waiting()
        self._tasks: dict[asyncio.Task[None], str] = {}
        self._serving: dict[Bell, str] = {}
        """The doorbells of the quests being served now (``run``)."""
        self._recover = False
        """Redis went away: look for doorbells read for us whose reply was lost."""
        self._fresh: set[Bell] = set()
        """Doorbells read new (not taken over, not deferred): dropped when the lease is held."""
        self._ready = False
        self._turn = 0
        """Where the next read of new doorbells starts among the shards (``_read_share``)."""
        self._next: dict[str, float] = {"sweep": time.monotonic() + self.leases.sweep_s}
        """When the periodic chores (claim, refresh, sweep) are due next, monotonic."""

    async def setup(self) -> None:
        """Create the consumer groups (idempotent)."""
        await doorbells.create_groups(self.client, self.shards)
        self._ready = True

    # -- the worker's loop -------------------------------------------------------------------

    async def run(self, stop: asyncio.Event, *, block_ms: int = 1000) -> None:
        """Serve doorbells until ``stop`` is set, whatever Redis does meanwhile. On the way
        out, running deliveries are stopped and their quests rung, so another runner takes
        them over at once instead of after ``claim_idle_s``."""
        self._next["sweep"] = 0.0  # at the first turn: heal what a crash of the last process left
        try:
            await self.outage.guard("effects", lambda: self.poll(block_ms=block_ms), stop)
        finally:
            await self._shut_down()

    async def poll(self, *, block_ms: int = 1000) -> int:
        """One turn of ``run``: start serving the doorbells that are due, claimed or new.
        Returns how many doorbells it took."""
        try:
            taken = await self._gather(block_ms)
        except REDIS_AWAY:
            self._recover = True
            raise
        except redis.exceptions.ResponseError as exc:
            if not nogroup(exc):
                raise
            log.warning("the doorbell groups are gone (redis lost its data?); creating them "
                        "again")
            self._ready = False
            return 0
        busy = set(self._tasks.values())
        by_quest: dict[str, list[Bell]] = {}
        for qid, bell in taken:
            if bell in self._serving or bell in self._deferred:
                continue
            if qid in busy:  # one delivery of a quest per runner: this one waits its turn
                self._deferred.add([bell], qid, self.clock())
                continue
            by_quest.setdefault(qid, []).append(bell)
        for qid, bells in by_quest.items():
            task = asyncio.create_task(self._serve_guarded(qid, bells), name=f"serve:{qid}")
            self._tasks[task] = qid
            self._serving.update(dict.fromkeys(bells, qid))
            task.add_done_callback(functools.partial(self._served, bells=bells))
        # after the deliveries are under way: a worker started on a backlog serves it first
        await self._sweep_chore()
        return len(taken)

    def _served(self, task: asyncio.Task[None], bells: list[Bell]) -> None:
        self._tasks.pop(task, None)
        for bell in bells:
            self._serving.pop(bell, None)

    async def _gather(self, block_ms: int) -> list[tuple[str, Bell]]:
        if not self._ready:
            await self.setup()
        await self._refresh_chore()
        free = self.concurrency - len(self._tasks)
        busy = set(self._tasks.values())
        taken = self._deferred.due(self.clock(), busy, free)
        if self._recover:
            taken += await doorbells.read(self.client, self.shards, self.consumer,
                                          self.batch, None, own=True)
            self._recover = False
        free -= len({q for q, _ in taken})
        if free > 0 and self._chore_due("claim", self.leases.heartbeat_s / 2):
            claimed = await doorbells.claim(self.client, self.shards, self.consumer,
                                            self.leases.claim_idle_ms, free)
            taken += claimed
            free -= len(claimed)
        if free > 0:
            block = None if taken else self._deferred.block_ms(self.clock(), busy, block_ms)
            taken += self._new(await self._read_share(min(free, self.batch), busy, block))
        elif not taken and self._tasks:
            await asyncio.wait(list(self._tasks), timeout=block_ms / 1000,
                               return_when=asyncio.FIRST_COMPLETED)
        return taken

    async def _read_share(self, room: int, busy: set[str], block_ms: int | None
                          ) -> list[tuple[str, Bell]]:
        """New doorbells of at most ``room`` quests (besides those served here already): a
        runner takes what it can serve now and leaves the rest to runners with room.

        ``XREADGROUP``'s ``COUNT`` holds per stream, so a read of every shard could take
        ``room`` doorbells of each: one runner of four took a whole backlog of 128 quests
        while the others idled. Each stream is asked for ``room // shards`` (at least one),
        the shards in a turning order; with less room than shards, the first ``room`` of
        that order are read first, without waiting. What a read still brings beyond ``room``
        is handed back — rung again, then answered — for another runner."""
        n = len(self.shards)
        if not n:
            return []
        self._turn = (self._turn + 1) % n
        order = self.shards[self._turn:] + self.shards[:self._turn]
        if room < n:
            found = await doorbells.read(self.client, order[:room], self.consumer, 1, None)
            if found:
                return found
        found = await doorbells.read(self.client, order, self.consumer, max(1, room // n),
                                     block_ms)
        keep: list[tuple[str, Bell]] = []
        back: list[tuple[str, Bell]] = []
        quests: set[str] = set()
        for qid, bell in found:
            if qid in busy or qid in quests or len(quests) < room:
                if qid not in busy:  # served here already: it waits its turn, no new room
                    quests.add(qid)
                keep.append((qid, bell))
            else:
                back.append((qid, bell))
        if back:
            await doorbells.hand_back(self.client, back, self.journal.shards)
        return keep

    def _chore_due(self, name: str, every_s: float) -> bool:
        now = time.monotonic()
        if now < self._next.get(name, 0.0):
            return False
        self._next[name] = now + every_s
        return True

    async def _chores(self) -> None:
        await self._refresh_chore()
        await self._sweep_chore()

    async def _refresh_chore(self) -> None:
        if self._deferred and self._chore_due("refresh", self.leases.heartbeat_s):
            await doorbells.refresh(self.client, self.consumer, self._deferred.kept())

    async def _sweep_chore(self) -> None:
        if self._chore_due("sweep", self.leases.sweep_s):
            await doorbells.sweep(self.client, self.journal.shards, self.shards)

    async def _serve_guarded(self, quest_id: str, bells: list[Bell]) -> None:
        """``_serve`` for ``run``: an error defers the doorbells instead of ending the loop."""
        try:
            async with self._limit:
                await self._serve(quest_id, bells, RunStats())
        except REDIS_AWAY as exc:
            self._recover = True
            wait = self.outage.failed("effects", exc)
            self._deferred.add(bells, quest_id, self.clock() + wait)
        except Exception:
            log.exception("delivering the effects of quest %s failed; trying again later",
                          quest_id)
            wait = self.outage.bug(f"quest {quest_id}")
            self._deferred.add(bells, quest_id, self.clock() + wait)

    async def _shut_down(self) -> None:
        running = list(self._tasks.items())
        for task, _qid in running:
            task.cancel()
        if running:  # bounded: a cancellation lost inside a library call must not hang us
            await asyncio.wait([task for task, _ in running], timeout=SHUTDOWN_GRACE_S)
        waiting = {qid for qid, _ in self._deferred.bells.values()}  # e.g. left for a newer
        with contextlib.suppress(*REDIS_AWAY):  # release: the next runner takes them at once
            await doorbells.ring(self.client, {qid for _, qid in running} | waiting,
                                 self.journal.shards)

    # -- one pass, for tests and the demo ------------------------------------------------

    async def run_once(self, *, block_ms: int = 0) -> RunStats:
        """Claim stale doorbells, read new ones, deliver the quests they name; return when
        that is done. Errors are raised, not deferred."""
        stats = RunStats()
        if not self._ready:
            await self.setup()
        await self._chores()
        taken = self._deferred.due(self.clock(), set(), len(self._deferred))
        claimed = await doorbells.claim(self.client, self.shards, self.consumer,
                                        self.leases.claim_idle_ms, self.batch)
        claimed = [(q, b) for q, b in claimed if b not in self._deferred]
        stats.claimed += len(claimed)
        taken += claimed
        block = block_ms if block_ms and not taken and not self._deferred else None
        taken += self._new(await doorbells.read(self.client, self.shards, self.consumer,
                                                self.batch, block))
        if not taken:
            if self._deferred and block_ms:
                await asyncio.sleep(min(block_ms / 1000, 0.05))
            return stats
        by_quest: dict[str, list[Bell]] = {}
        for qid, bell in taken:
            by_quest.setdefault(qid, []).append(bell)

        async def serve(qid: str, bells: list[Bell]) -> None:
            async with self._limit:
                await self._serve(qid, bells, stats)

        await asyncio.gather(*(serve(qid, bells) for qid, bells in by_quest.items()))
        return stats

    # -- delivering one quest ------------------------------------------------------------

    def _new(self, read: list[tuple[str, Bell]]) -> list[tuple[str, Bell]]:
        self._fresh.update(bell for _, bell in read)
        return read

    async def _serve(self, quest_id: str, bells: list[Bell], stats: RunStats) -> None:
        fresh = [b for b in bells if b in self._fresh]
        self._fresh.difference_update(bells)
        outcome = await self.deliver(quest_id, stats, bells=bells)
        if outcome.drained:
            await doorbells.ack(self.client, bells)
        elif outcome.busy:
            # only a doorbell rung since the holder took the lease may be dropped: the holder
            # looks again after it lets go, or — if it died — its own doorbells, taken over by
            # someone, bring a runner. Doorbells taken over may be those very ones: they wait.
            await doorbells.ack(self.client, fresh)
            self._deferred.add([b for b in bells if b not in fresh], quest_id,
                        self.clock() + self.leases.heartbeat_s)
        else:  # left for a newer release: unrefreshed, so another runner claims them
            self._deferred.add(bells, quest_id, outcome.wait_until, keep=not outcome.newer)
