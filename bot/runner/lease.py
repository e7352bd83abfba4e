"""A quest's delivery lease: short, kept alive by a heartbeat while its holder works.

One runner at a time delivers a quest's effects, in order: the one holding the quest's lease
(``q:{id}:lease``, a string with a TTL holding the holder's token). A lease that lived as long
as the slowest adapter (an agent run: many minutes) would park a quest that long whenever its
runner died. So the lease is short (``Leases.lease_s``, 10 s) and its holder renews it every
``heartbeat_s`` (2 s) for as long as it works — an hour-long agent run keeps its lease for an
hour, and a runner that dies loses it within ``lease_s``.

Taking and keeping are one script (``scripts.HOLD``): set the lease when it is free or ours,
answer 0 when another runner holds it. So a command resent after a lost reply still finds the
lease ours, and a holder whose lease lapsed while Redis was away takes it back if nobody else
did. A heartbeat that finds another token there has lost the lease — the process stalled
longer than ``lease_s``, and another runner may already be delivering the same effect — and
sets ``lost``: the runner then stops the adapter and records nothing.

The doorbells of the work in hand stay pending in the runner's consumer group; the heartbeat
also resets their idle time (``XCLAIM … 0 … JUSTID``), so other runners take them over
(``XAUTOCLAIM`` after ``claim_idle_s``, 12 s: longer than the lease, so the lease has lapsed
by then) only when the runner is gone. Why these figures: a dead runner's work resumes about
12 s after its last heartbeat, and a live one survives an event-loop stall of up to ~8 s
(four missed heartbeats) before its lease lapses.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar

import redis.asyncio

from bot.journal.errors import LeaseLost
from bot.journal.keys import quest_keys
from bot.journal.scripts import ScriptSet
from bot.journal.wire import RedisClient
from bot.runner.outage import REDIS_AWAY, describe

log = logging.getLogger(__name__)
T = TypeVar("T")




@dataclass(frozen=True, slots=True)
class Leases:
    """The effect runner's figures (see the module docs for why these defaults)."""

    lease_s: float = 10.0
    """How long a lease lasts unless renewed: how long a dead runner's quest waits at most
    before its lease lapses, and how long a live runner may stall before it loses it."""
    heartbeat_s: float = 2.0
    """How often a holder renews its lease and refreshes its pending doorbells."""
    claim_idle_s: float = 12.0
    """Doorbells unrefreshed this long belong to a runner that is gone: others take them."""
    sweep_s: float = 60.0
    """How often a runner looks for quests with effects waiting and nobody told."""

    def __post_init__(self) -> None:
        if not 0 < self.heartbeat_s < self.lease_s:
            raise ValueError(f"heartbeat_s ({self.heartbeat_s}) must be positive and shorter "
                             f"than lease_s ({self.lease_s}), or leases lapse between beats")
        if self.claim_idle_s <= self.lease_s:
            raise ValueError(f"claim_idle_s ({self.claim_idle_s}) must exceed lease_s "
                             f"({self.lease_s}): a doorbell taken over before the dead "
                             "runner's lease lapsed finds the quest still leased")

    @property
    def lease_ms(self) -> int:
        return int(self.lease_s * 1000)

    @property
    def claim_idle_ms(self) -> int:
        return int(self.claim_idle_s * 1000)


class Lease:
    """One runner's hold on one quest's lease."""

    def __init__(self, client: RedisClient, scripts: ScriptSet, quest_id: str,
                 holder: str, leases: Leases) -> None:
        self.client = client
        self.scripts = scripts
        self.quest_id = quest_id
        self.key = quest_keys(quest_id).lease
        self.token = f"{holder}:{quest_id}"
        """The same for every attempt of one runner on one quest: a lease left behind when
        Redis went away mid-delivery is still this runner's when it tries again."""
        self.leases = leases
        self.lost = asyncio.Event()
        """Set once another runner was found holding the lease: stop, record nothing."""

    async def hold(self) -> bool:
        """Take the lease, or keep it for another ``lease_s``; False (and ``lost`` set) when
        another runner holds it."""
        held = bool(await self.scripts.call(self.client, "hold", [self.key],
                                            [self.token, self.leases.lease_ms]))
        if not held:
            self.lost.set()
        return held

    async def release(self) -> None:
        """Free the lease if it is still ours. Best effort: unreleased, it lapses anyway."""
        try:
            await self.scripts.call(self.client, "release", [self.key], [self.token])
        except REDIS_AWAY as exc:
            log.info("could not release the lease of %s (%s); it lapses within %g s",
                     self.quest_id, describe(exc), self.leases.lease_s)

    @contextlib.asynccontextmanager
    async def heartbeat(self, also: Callable[[], Awaitable[None]] | None = None
                        ) -> AsyncIterator[None]:
        """Keep the lease (and, through ``also``, the doorbells) fresh while the block runs."""
        done = asyncio.Event()
        beat = asyncio.create_task(self._beat(also, done), name=f"lease:{self.quest_id}")
        try:
            yield
        finally:
            # told twice: on Python 3.11 a cancellation that lands as a Redis command finishes
            # is lost inside redis-py's wait_for (CPython gh-86296), and the beat must end all
            # the same — at once: it waits on ``done`` and looks at it after each renewal
            done.set()
            beat.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await beat

    async def _beat(self, also: Callable[[], Awaitable[None]] | None,
                    done: asyncio.Event) -> None:
        """Renew every ``heartbeat_s`` until ``done``, which wakes it at once — between two
        beats as during one, whatever became of its cancel (``bot.journal.memory``'s
        create-once lease waits the same way): a renewal whose cancel was lost returns, and
        the beat ends there rather than refresh the doorbells of a block that is over."""
        while True:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(done.wait(), self.leases.heartbeat_s)
            if done.is_set():
                return
            try:
                if not await self.hold():
                    log.warning("the lease of quest %s was taken by another runner (this one "
                                "stalled longer than %g s?); stopping its delivery",
                                self.quest_id, self.leases.lease_s)
                    return
                if done.is_set():
                    return  # the block ended while the lease was renewed
                if also is not None:
                    await also()
            except REDIS_AWAY as exc:
                # only an answer naming another holder loses the lease; an outage does not
                log.info("heartbeat of quest %s: redis unreachable (%s); trying again",
                         self.quest_id, describe(exc))
            except redis.exceptions.ResponseError as exc:  # NOGROUP: the poll loop recreates
                log.info("heartbeat of quest %s: %s", self.quest_id, exc)

    async def guard(self, call: Awaitable[T]) -> T:
        """Await ``call`` unless the lease is lost first: then cancel it and raise
        ``LeaseLost``, so a runner that stalled past its lease neither finishes nor records
        the effect another runner now delivers."""
        work = asyncio.ensure_future(call)
        lost = asyncio.ensure_future(self.lost.wait())
        try:
            await asyncio.wait({work, lost}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            lost.cancel()
            if not work.done():
                work.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await work
        if self.lost.is_set():
            raise LeaseLost(f"another runner holds the lease of quest {self.quest_id}")
        return work.result()
