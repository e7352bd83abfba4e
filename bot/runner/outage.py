"""Redis going away and coming back, as the loops that use it live through it.

A deploy restarts Redis, a failover moves it, a server that lost its disk comes back empty.
None of that may stop a worker: the client retries a command a few times with back-off
(``bot.worker.assembly`` builds it so), and when Redis stays away longer than those retries a
loop's step raises a connection error. ``Outage.guard`` runs a loop's steps and, on such an
error, waits with exponential back-off and tries again, for as long as it takes. Each loop
says once that it lost Redis, not once a step; the outage ends at the first step that
completes in a loop that had failed, which is logged once. (The client counts its own
reconnects, for the metrics: ``bot.journal.wire.connect``.)

What counts as "Redis is away" (``REDIS_AWAY``): redis-py's ``ConnectionError`` — which
includes ``BusyLoadingError``, the answer of a Redis still loading its AOF — and its
``TimeoutError``, and the operating system's connection errors. Two more answers of a Redis
that restarted are handled where they arise, not here: ``NOSCRIPT`` (its script cache is
empty: ``ScriptSet`` loads the script and calls again) and ``NOGROUP`` (it lost its data and
with it the consumer groups: the loop that reads the stream creates the group again).

Any other exception out of a step is a bug: it is logged with its traceback, and the loop
goes on after a longer pause rather than taking the process's other loops down with it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import time
from collections.abc import Awaitable, Callable

import redis.exceptions

log = logging.getLogger(__name__)

REDIS_AWAY: tuple[type[BaseException], ...] = (
    redis.exceptions.ConnectionError, redis.exceptions.TimeoutError, ConnectionError,
    redis.exceptions.ClusterDownError, redis.exceptions.TryAgainError)
"""Errors that mean Redis cannot be reached now (``BusyLoadingError`` is a redis-py
``ConnectionError``; on a cluster, ``CLUSTERDOWN`` while a failover is under way and
``TRYAGAIN`` while a slot moves)."""


def nogroup(exc: BaseException) -> bool:
    """Whether ``exc`` is Redis saying a stream or its consumer group does not exist — as
    itself, inside a pipeline's error, or as the ``UNBLOCKED`` answer of a blocked read whose
    stream was deleted."""
    text = str(exc)
    return isinstance(exc, redis.exceptions.ResponseError) and (
        "NOGROUP" in text or text.startswith("UNBLOCKED"))


def describe(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"[:300] if str(exc) else type(exc).__name__


class Outage:
    """Whether Redis answers, as the process's loops last found it, and their back-off."""

    def __init__(self, *, base_s: float = 0.1, cap_s: float = 2.0,
                 bug_cap_s: float = 30.0) -> None:
        self.base_s = base_s
        self.cap_s = cap_s
        """The longest wait between two attempts while Redis is away: Redis is usually back
        within seconds, and the worker should notice within about this long."""
        self.bug_cap_s = bug_cap_s
        self.since: float | None = None
        """Epoch seconds when the current outage began; ``None`` while Redis answers."""
        self.detail = ""
        """The last error of the current outage, for ``/healthz``."""
        self.reconnects = 0
        """Outages lived through."""
        self._failing: dict[str, int] = {}
        self._bugs: dict[str, int] = {}

    @property
    def away(self) -> bool:
        return self.since is not None

    def failed(self, loop: str, exc: BaseException) -> float:
        """Count a failed step of ``loop``; how long it should wait before the next one."""
        tries = self._failing.get(loop, 0) + 1
        self._failing[loop] = tries
        self.detail = describe(exc)
        if self.since is None:
            self.since = time.time()
        if tries == 1:
            log.warning("%s: redis cannot be reached (%s); retrying with back-off until it "
                        "answers", loop, self.detail)
        delay = min(self.cap_s, self.base_s * 2.0 ** (tries - 1))
        return delay * random.uniform(0.5, 1.0)  # noqa: S311 - jitter, not crypto

    def ok(self, loop: str) -> None:
        """A step of ``loop`` completed: Redis answers."""
        tries = self._failing.pop(loop, 0)
        self._bugs.pop(loop, None)
        if not tries:
            return
        log.info("%s: redis answers again (after %d failed attempts)", loop, tries)
        if self.since is not None:
            log.warning("redis is back after %.1f s away", time.time() - self.since)
            self.since, self.detail = None, ""
            self.reconnects += 1

    def bug(self, loop: str) -> float:
        """Count a step that failed for another reason; how long to wait (longer and longer,
        so a bug that fails every step does not fill the log)."""
        n = self._bugs.get(loop, 0) + 1
        self._bugs[loop] = n
        return min(self.bug_cap_s, 0.5 * 2.0 ** (n - 1))

    async def guard(self, loop: str, step: Callable[[], Awaitable[object]],
                    stop: asyncio.Event) -> None:
        """Run ``step`` until ``stop`` is set, through every outage (see the module docs)."""
        while not stop.is_set():
            try:
                await step()
            except REDIS_AWAY as exc:
                await pause(stop, self.failed(loop, exc))
                continue
            except Exception:
                log.exception("%s: a step failed; trying again", loop)
                await pause(stop, self.bug(loop))
                continue
            self.ok(loop)


async def pause(stop: asyncio.Event, seconds: float) -> None:
    """Sleep ``seconds``, or until ``stop`` is set."""
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(stop.wait(), timeout=seconds)
