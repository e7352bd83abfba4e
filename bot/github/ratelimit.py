"""Honouring GitHub's rate limits inside the HTTP client, so no adapter has to think about them.

GitHub has two kinds of limit (https://docs.github.com/en/rest/using-the-rest-api/rate-limits-for-the-rest-api):

* the primary limit: a budget per hour per installation. A response with
  ``x-ratelimit-remaining: 0`` says when it refills (``x-ratelimit-reset``, epoch seconds);
* secondary limits: among them at most 80 content-creating requests a minute, answered with a
  403 or 429 and usually a ``retry-after`` header when exceeded.

``PacedGitHubAPI`` is gidgethub's aiohttp client with ``_request`` wrapped: every mutating
request first takes a token from its installation's bucket (refilled at 80 a minute), and a
rate-limited answer is waited out and the request sent again — at most ``max_retries`` times
and never for longer than ``max_wait`` seconds, after which gidgethub raises as usual and the
effect runner retries the effect later. Sleeping goes through an injectable sleeper so tests
neither wait nor depend on timing. ``RateLimits.remaining`` is the last ``x-ratelimit-remaining``
seen, for the metrics gauge.

A 403 that is *not* a rate limit (remaining above zero and no ``retry-after``) is a permission
refusal and is passed straight through.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import aiohttp
from gidgethub.aiohttp import GitHubAPI

log = logging.getLogger(__name__)

Sleeper = Callable[[float], Awaitable[None]]
MUTATING = frozenset({"POST", "PATCH", "PUT", "DELETE"})
CONTENT_CREATING_PER_MINUTE = 80


@dataclass
class TokenBucket:
    """``rate`` tokens a second up to ``capacity``; ``take`` says how long to wait for one."""

    rate: float
    capacity: float
    tokens: float
    stamp: float

    def take(self, now: float) -> float:
        """Take a token (possibly on credit) and return the seconds to wait before using it.

        Taking on credit keeps concurrent callers in line: each one waits for its own token
        instead of all waking at once when one refill arrives."""
        self.tokens = min(self.capacity, self.tokens + (now - self.stamp) * self.rate)
        self.stamp = now
        self.tokens -= 1
        return 0.0 if self.tokens >= 0 else -self.tokens / self.rate


@dataclass
class RateLimits:
    """Shared by every client of one process: the pacing buckets and what GitHub last said."""

    per_minute: int = CONTENT_CREATING_PER_MINUTE
    burst: int = 20
    max_wait: float = 120.0
    """The longest single back-off waited out in place; longer ones fail the request."""
    max_retries: int = 3
    sleeper: Sleeper = asyncio.sleep
    clock: Callable[[], float] = time.monotonic
    wall: Callable[[], float] = time.time
    """Wall-clock epoch seconds, to read ``x-ratelimit-reset``."""
    remaining: int | None = None
    """The last ``x-ratelimit-remaining`` any response carried (for the metrics gauge)."""
    remaining_by_installation: dict[int, int] = field(default_factory=dict)
    waited: float = 0.0
    """Total seconds spent backing off or pacing (for tests and metrics)."""
    _buckets: dict[int, TokenBucket] = field(default_factory=dict)

    def bucket(self, installation_id: int) -> TokenBucket:
        found = self._buckets.get(installation_id)
        if found is None:
            found = TokenBucket(self.per_minute / 60.0, float(self.burst), float(self.burst),
                                self.clock())
            self._buckets[installation_id] = found
        return found

    async def pace(self, installation_id: int | None) -> None:
        """Wait for a content-creating slot of this installation (no-op for the App's JWT)."""
        if installation_id is None:
            return
        wait = self.bucket(installation_id).take(self.clock())
        if wait > 0:
            self.waited += wait
            await self.sleeper(wait)

    def observe(self, installation_id: int | None, headers: Mapping[str, str]) -> None:
        raw = _header(headers, "x-ratelimit-remaining")
        if raw is not None and raw.isdigit():
            self.remaining = int(raw)
            if installation_id is not None:
                self.remaining_by_installation[installation_id] = int(raw)

    def backoff(self, status: int, headers: Mapping[str, str]) -> float | None:
        """Seconds to wait before sending again, or ``None`` if this is not a rate limit."""
        if status not in (403, 429):
            return None
        retry_after = _header(headers, "retry-after")
        if retry_after is not None:
            try:
                return max(0.0, float(retry_after))
            except ValueError:
                return 60.0  # an HTTP date: GitHub does not send one; wait a minute
        if _header(headers, "x-ratelimit-remaining") == "0":
            reset = _header(headers, "x-ratelimit-reset")
            if reset is not None and reset.isdigit():
                return max(0.0, int(reset) - self.wall()) + 1.0
            return 60.0
        if status == 429:
            return 60.0  # GitHub's advice for a secondary limit without retry-after
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
        limits = self.limits
        if method.upper() in MUTATING:
            await limits.pace(self.installation_id)
        attempt = 0
        while True:
            status, reply_headers, data = await super()._request(method, url, headers, body)
            limits.observe(self.installation_id, reply_headers)
            wait = limits.backoff(status, reply_headers)
            if wait is None or attempt >= limits.max_retries or wait > limits.max_wait:
                if wait is not None:
                    log.warning("github rate limit on %s %s: giving up after %d tries "
                                "(wait %.0fs)", method, url, attempt + 1, wait)
                return status, reply_headers, data
            attempt += 1
            log.info("github rate limit on %s %s: waiting %.1fs (try %d)", method, url, wait,
                     attempt)
            limits.waited += wait
            await limits.sleeper(wait)

    async def sleep(self, seconds: float) -> None:
        await self.limits.sleeper(seconds)
