"""Honouring GitHub's rate limits inside the HTTP client, so no adapter has to think about them.

GitHub has two kinds of limit (BEHAVIOUR.md §15,
https://docs.github.com/en/rest/using-the-rest-api/rate-limits-for-the-rest-api):

* the primary limit: a budget per hour per installation. A response with
  ``x-ratelimit-remaining: 0`` says when it refills (``x-ratelimit-reset``, epoch seconds);
* secondary limits: among them at most 80 content-creating requests a minute and 500 an hour,
  answered with a 403 or 429 — a ``retry-after`` header if we are lucky, else only the message
  "You have exceeded a secondary rate limit". GitHub's best practices ask a client to make its
  requests one at a time and, when it makes many writes, to leave a second between them.

``PacedGitHubAPI`` is gidgethub's aiohttp client with ``_request`` wrapped. A mutating request
of an installation waits for its turn — one write at a time per installation in this process
(``RateLimits.turn``) — and then for its slot in the installation's schedule
(``bot.journal.pacing``: a burst, then one a second, and within the hour's budget), which
workers share through Redis when the runtime gives them a ``SharedSchedule``. A rate-limited
answer is waited out and the request sent again — at most ``max_retries`` times and never for
longer than ``max_wait`` seconds at once, after which gidgethub raises as usual and the effect
runner retries the effect later; a secondary limit on a write also holds back every other
write of the installation until then. Without ``retry-after`` a secondary limit waits a
minute, then twice as long each time, as GitHub advises. Sleeping goes through an injectable
sleeper and time through an injectable wall clock, so tests neither wait nor depend on timing.
``RateLimits.remaining`` is the last ``x-ratelimit-remaining`` seen, for the metrics gauge.

A 403 that is *not* a rate limit (remaining above zero, no ``retry-after``, no secondary-limit
message) is a permission refusal and is passed straight through.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
import time
import weakref
from collections.abc import Awaitable, Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import aiohttp
from gidgethub.aiohttp import GitHubAPI

from bot.journal.pacing import LocalSchedule, Pace, Schedule
from bot.observe import waits

log = logging.getLogger(__name__)

Sleeper = Callable[[float], Awaitable[None]]
MUTATING = frozenset({"POST", "PATCH", "PUT", "DELETE"})

WRITES_IN_REQUEST: contextvars.ContextVar[int] = contextvars.ContextVar("writes_in_request",
                                                                         default=1)
"""How many writes the request being sent carries: a GraphQL document of several mutations
(``bot.github.forge.batch``) is one request, but GitHub does not say whether its limit on
content creation counts it once or per mutation, so the pacing takes the stricter reading and
gives it a slot per mutation (BEHAVIOUR §15, §16)."""


@contextlib.contextmanager
def carrying(writes: int) -> Iterator[None]:
    """Requests sent inside this block carry ``writes`` writes each (``WRITES_IN_REQUEST``)."""
    token = WRITES_IN_REQUEST.set(max(1, writes))
    try:
        yield
    finally:
        WRITES_IN_REQUEST.reset(token)
SECONDARY_MESSAGE = b"secondary rate limit"
"""What GitHub's secondary-limit answers say (BEHAVIOUR.md §15), lowercased."""
SECONDARY_WAIT = 60.0
"""GitHub's advice for a secondary limit without ``retry-after``: at least a minute, then
exponentially longer."""


@dataclass
class RateLimits:
    """Shared by every client of one process: the write schedule and what GitHub last said."""

    pace: Pace = field(default_factory=Pace)
    schedule: Schedule = field(default_factory=LocalSchedule)
    """In-process by default; ``SharedSchedule`` (Redis) when several workers write."""
    max_wait: float = 120.0
    """The longest single back-off waited out in place; longer ones fail the request."""
    max_retries: int = 3
    sleeper: Sleeper = asyncio.sleep
    wall: Callable[[], float] = time.time
    """Wall-clock epoch seconds: the schedule's time (the one clock workers share) and the
    time ``x-ratelimit-reset`` is read against."""
    remaining: int | None = None
    """The last ``x-ratelimit-remaining`` any response carried (for the metrics gauge)."""
    remaining_by_installation: dict[int, int] = field(default_factory=dict)
    waited: float = 0.0
    """Seconds slept for slots and back-offs, summed over requests (for tests)."""
    held: float = 0.0
    """Real seconds during which some request was held back — waiting for its turn, its
    slot or a back-off — however many were (for the demo's split of its time)."""
    _turns: weakref.WeakValueDictionary[int, asyncio.Lock] = field(
        default_factory=weakref.WeakValueDictionary)
    """Each installation's turn while some write holds or awaits it, gone with the last: a
    worker that served many installations keeps none for those it is not writing to."""
    _holding: int = 0
    _since: float = 0.0

    def turn(self, installation_id: int) -> asyncio.Lock:
        """Held around each write of the installation: one write at a time (in this process)."""
        lock = self._turns.get(installation_id)
        if lock is None:
            lock = self._turns[installation_id] = asyncio.Lock()
        return lock

    def turns_held(self) -> int:
        """Installations with a turn in memory: those being written to now."""
        return len(self._turns)

    @contextlib.contextmanager
    def holding(self) -> Iterator[None]:
        """Around a wait of one request: counted in ``held`` and in the waits of the effect
        that made it (``bot.observe.waits``)."""
        start = time.perf_counter()
        if self._holding == 0:
            self._since = start
        self._holding += 1
        try:
            yield
        finally:
            self._holding -= 1
            now = time.perf_counter()
            if self._holding == 0:
                self.held += now - self._since
            waits.waited(now - start)

    async def pace_write(self, installation_id: int) -> None:
        """Wait for the installation's next write slot."""
        now = self.wall()
        wait = await self.schedule.slot(installation_id, now, self.pace) - now
        if wait > 0:
            self.waited += wait
            with self.holding():
                await self.sleeper(wait)

    def observe(self, installation_id: int | None, headers: Mapping[str, str]) -> None:
        raw = _header(headers, "x-ratelimit-remaining")
        if raw is not None and raw.isdigit():
            self.remaining = int(raw)
            if installation_id is not None:
                self.remaining_by_installation[installation_id] = int(raw)

    def backoff(self, status: int, headers: Mapping[str, str], body: bytes = b"",
                attempt: int = 0) -> float | None:
        """Seconds to wait before sending again, or ``None`` if this is not a rate limit.
        ``attempt``: how many times this request was rate limited before (0 the first)."""
        if status not in (403, 429):
            return None
        retry_after = _header(headers, "retry-after")
        if retry_after is not None:
            try:
                return max(0.0, float(retry_after))
            except ValueError:
                return SECONDARY_WAIT  # an HTTP date: GitHub does not send one; wait a minute
        if _header(headers, "x-ratelimit-remaining") == "0":
            reset = _header(headers, "x-ratelimit-reset")
            if reset is not None and reset.isdigit():
                return max(0.0, int(reset) - self.wall()) + 1.0
            return SECONDARY_WAIT
        if status == 429 or SECONDARY_MESSAGE in body.lower():
            return SECONDARY_WAIT * float(1 << attempt)
        return None


def _header(headers: Mapping[str, str], name: str) -> str | None:
    value = headers.get(name)
    if value is None:  # plain dicts in tests; aiohttp's CIMultiDict ignores case itself
        value = next((v for k, v in headers.items() if k.lower() == name), None)
    return value


class PacedGitHubAPI(GitHubAPI):
    """gidgethub's aiohttp ``GitHubAPI`` that paces writes and waits out rate limits.

    Construct it exactly like ``GitHubAPI`` plus ``limits`` (one ``RateLimits`` per process)
    and the ``installation_id`` the token belongs to (``None`` for the App's JWT client)."""

    def __init__(self, session: aiohttp.ClientSession, *args: Any, limits: RateLimits,
                 installation_id: int | None = None, **kwargs: Any) -> None:
        super().__init__(session, *args, **kwargs)
        self.limits = limits
        self.installation_id = installation_id

    async def _request(self, method: str, url: str, headers: Mapping[str, str],
                       body: bytes = b"") -> tuple[int, Mapping[str, str], bytes]:
        installation = self.installation_id
        if method.upper() not in MUTATING or installation is None:
            return await self._send(method, url, headers, body, None)
        turn = self.limits.turn(installation)
        with self.limits.holding():
            await turn.acquire()
        try:
            return await self._send(method, url, headers, body, installation)
        finally:
            turn.release()

    async def _send(self, method: str, url: str, headers: Mapping[str, str], body: bytes,
                    writer: int | None) -> tuple[int, Mapping[str, str], bytes]:
        """Send (a write of installation ``writer`` in its slot), waiting out rate limits."""
        limits = self.limits
        attempt = 0
        while True:
            if writer is not None:
                for _ in range(WRITES_IN_REQUEST.get()):
                    await limits.pace_write(writer)
            status, reply_headers, data = await super()._request(method, url, headers, body)
            limits.observe(self.installation_id, reply_headers)
            wait = limits.backoff(status, reply_headers, data, attempt)
            if wait is None or attempt >= limits.max_retries or wait > limits.max_wait:
                if wait is not None:
                    log.warning("github rate limit on %s %s: giving up after %d tries "
                                "(wait %.0fs)", method, url, attempt + 1, wait)
                return status, reply_headers, data
            attempt += 1
            log.info("github rate limit on %s %s: waiting %.1fs (try %d)", method, url, wait,
                     attempt)
            if writer is not None:  # every write of the installation waits, not only this one
                await limits.schedule.block(writer, limits.wall() + wait)
                continue
            limits.waited += wait
            with limits.holding():
                await limits.sleeper(wait)

    async def sleep(self, seconds: float) -> None:
        await self.limits.sleeper(seconds)
