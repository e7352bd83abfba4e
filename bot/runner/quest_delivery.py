"""Delivering one quest's outbox, in order, under its delivery lease — the half of the effect
runner (``bot.runner.outbox``) that talks to adapters; the other half reads doorbells and
decides which quests to serve.

For each outbox entry whose key is not in the quest's delivered record: the adapter registered
for its type is called under the lease (``Lease.guard``: a lost lease stops it), its follow-up
events go through ``Journal.apply_many``, and one script records the key as delivered, deletes
the entry and keeps the lease for the next. An adapter that raises is retried with exponential
backoff (``retry_later``); after ``Backoff.max_tries``, or at once for ``PermanentError``, the
failure is recorded in the quest's failures stream (``failed``) and handed to ``on_failure``.

An effect record, or a record an adapter reads, written by a newer release (``NewerRecord``,
met during a rolling upgrade) is neither failed nor counted as a try: the effect stays in the
outbox, looked at again ``NEWER_WAIT_S`` later, and its doorbells are no longer kept fresh,
so another runner claims them once idle (``Leases.claim_idle_s``) and a worker of the newer
release delivers it (``docs/operations.md``, *Upgrades*).
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

from bot.core import InvalidTransition
from bot.journal.errors import LeaseLost, PermanentError
from bot.journal.keys import quest_keys
from bot.journal.records import NewerRecord, RecordError, load_effect
from bot.journal.store import Journal, PolicySource
from bot.journal.wire import RedisClient, stream_rows, text
from bot.runner import doorbells
from bot.runner.delivery import Adapters, Backoff, Failure, RunStats, error_text
from bot.runner.doorbells import Bell
from bot.runner.lease import Lease, Leases

log = logging.getLogger(__name__)

NEWER_WAIT_S = 30.0
"""How long a runner leaves an effect a newer release wrote (or needs) before looking again."""


class _Left(float):
    """When to look again at an effect left for a newer release (``_newer``)."""


@dataclass(frozen=True, slots=True)
class _Outcome:
    drained: bool = False
    """The outbox was seen empty after the lease was released: answer the doorbells."""
    busy: bool = False
    """Another runner holds the lease; it looks at the outbox again once it lets go."""
    wait_until: float = 0.0
    """Otherwise: look again then (an effect waits for its backoff, or the lease was lost)."""
    newer: bool = False
    """The wait is for a worker of a newer release (``NewerRecord``): let another claim it."""


class QuestDelivery:
    def __init__(self, journal: Journal, adapters: Adapters, policy: PolicySource, *,
                 consumer: str, leases: Leases | None = None, backoff: Backoff | None = None,
                 clock: Callable[[], float] = time.time,
                 on_failure: Callable[[Failure], Awaitable[None]] | None = None,
                 batch: int = 64) -> None:
        self.journal = journal
        self.client: RedisClient = journal.client
        self.adapters = adapters
        self.policy = policy
        self.consumer = consumer
        self.leases = leases or Leases()
        self.backoff = backoff or Backoff()
        self.clock = clock
        self.on_failure = on_failure
        self.batch = batch
        self._holder = f"{consumer}:{uuid.uuid4().hex[:8]}"
        """Names this runner in the leases it holds (``Lease.token``)."""

    async def deliver(self, quest_id: str, stats: RunStats | None = None, *,
                      bells: Sequence[Bell] = ()) -> _Outcome:
        """Deliver the quest's pending effects in order, holding its lease; ``bells`` are the
        doorbells that brought us, kept fresh meanwhile. Not drained when another runner
        holds the lease, an effect waits for its backoff, or the lease was lost."""
        stats = stats if stats is not None else RunStats()
        outbox = quest_keys(quest_id).outbox
        while True:
            lease = Lease(self.client, self.journal.scripts, quest_id, self._holder,
                          self.leases)
            if not await lease.hold():
                return _Outcome(busy=True)
            try:
                async with lease.heartbeat(lambda: doorbells.refresh(self.client,
                                                                     self.consumer, bells)):
                    outcome = await self._drain(quest_id, lease, stats)
            finally:
                await lease.release()
            # effects may have arrived after the last read and before the release, from an
            # apply whose runner found the lease taken and dropped its doorbell: look again
            if not outcome.drained or not await self.client.xlen(outbox):
                return outcome

    async def _drain(self, quest_id: str, lease: Lease, stats: RunStats) -> _Outcome:
        k = quest_keys(quest_id)
        fresh = True  # the lease runs afresh before every adapter call
        while True:
            rows = stream_rows(await self.client.xrange(k.outbox, "-", "+", count=self.batch))
            if not rows:
                return _Outcome(drained=True)
            keys = [text(f["k"]) for _, f in rows]
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
                    return _Outcome(wait_until=int(due) / 1000)
                if not fresh and not await lease.hold():
                    return self._lost(quest_id, key, stats)
                try:
                    wait, fresh = await self._deliver_one(quest_id, entry_id, key,
                                                          fields["e"], lease, stats)
                except LeaseLost:
                    return self._lost(quest_id, key, stats)
                if wait is not None:
                    return _Outcome(wait_until=wait, newer=isinstance(wait, _Left))

    def _lost(self, quest_id: str, key: str, stats: RunStats) -> _Outcome:
        log.warning("stopped delivering %s of quest %s: another runner holds its lease now",
                    key, quest_id)
        stats.lost += 1
        return _Outcome(wait_until=self.clock() + self.leases.heartbeat_s)

    async def _deliver_one(self, quest_id: str, entry_id: str, key: str, raw: object,
                           lease: Lease, stats: RunStats) -> tuple[float | None, bool]:
        """Deliver one effect. Returns when to try again if it must wait for a backoff, and
        whether the lease was renewed by recording the delivery. Raises ``LeaseLost``."""
        k = quest_keys(quest_id)
        try:
            effect = load_effect(raw)  # type: ignore[arg-type]
        except NewerRecord as exc:
            return self._newer(quest_id, key, exc), False
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
            follow_up = await lease.guard(adapter(effect))
        except LeaseLost:
            raise
        except NewerRecord as exc:
            return self._newer(quest_id, key, exc), False
        except PermanentError as exc:
            tries = int(await self.client.hget(k.tries, key) or 0) + 1
            await self._fail(quest_id, entry_id, key, effect.type.value, error_text(exc),
                             tries, stats)
            return None, False
        except Exception as exc:
            now = self.clock()
            tries = int(await self.journal.scripts.call(  # type: ignore[call-overload]
                self.client, "retry_later", [k.tries, k.retry_at],
                [key, int(self.backoff.base_s * 1000), int(self.backoff.cap_s * 1000),
                 int(now * 1000)]))
            if tries >= self.backoff.max_tries:
                await self._fail(quest_id, entry_id, key, effect.type.value, error_text(exc),
                                 tries, stats)
                return None, False
            log.info("effect %s failed (try %d of %d), retrying: %s", key, tries,
                     self.backoff.max_tries, error_text(exc))
            stats.retried += 1
            due = await self.client.hget(k.retry_at, key)
            return (int(due) / 1000 if due is not None else now), False
        if follow_up:
            try:
                results = await self.journal.apply_many(list(follow_up), self.policy)
            except NewerRecord as exc:  # delivered again by a newer worker: adapters find
                return self._newer(quest_id, key, exc), False  # their own writes
            for result in results:
                if isinstance(result, InvalidTransition):
                    log.warning("outcome of effect %s was refused by the quest: %s", key,
                                result)
        held = await self.journal.scripts.call(
            self.client, "delivered", [k.done, k.outbox, k.tries, k.retry_at, k.lease],
            [key, entry_id, "ok", lease.token, self.leases.lease_ms])
        stats.delivered += 1
        if not held:
            lease.lost.set()
            raise LeaseLost
        return None, True

    def _newer(self, quest_id: str, key: str, exc: NewerRecord) -> float:
        log.error("effect %s of quest %s is left for a newer questbot: %s", key, quest_id, exc)
        return _Left(self.clock() + NEWER_WAIT_S)

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
