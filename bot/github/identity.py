"""Who the App is: ``GET /app`` (``apps/get-authenticated``) with the App's JWT.

questbot tells its own work apart by the App's slug and its bot login, ``<slug>[bot]``
(BEHAVIOUR.md §13): its check runs carry the App, its comments and pushes are that account's.
Those names belong to the App's registration, not to questbot's code, so they are read from
GitHub once per process. *Why process memory and not Redis:* it costs one request per process
start; the slug changes only when the App is renamed, and a restart then picks the new one up,
whereas a copy in Redis would outlive the rename and be wrong for every worker at once.
*Why at start:* everything the worker does needs it, and a wrong App id or key is better
reported before the first delivery than at it.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

import aiohttp
import gidgethub
from pydantic import ValidationError

from bot.adapters import AppIdentity
from bot.errors import PermanentError, RetryLater
from bot.github.auth import AuthError

log = logging.getLogger(__name__)


class IdentityRefused(AuthError, PermanentError):
    """GitHub refused the App's JWT at ``GET /app``: the App id or key is wrong."""


class IdentityUnavailable(AuthError, RetryLater):
    """GitHub did not answer ``GET /app`` usefully (5xx, a timeout, a proxy's page)."""


class JWTRequester(Protocol):
    async def getitem(self, url: str, *, jwt: str | None = None) -> Any: ...


async def read_identity(gh: JWTRequester, bearer: str) -> AppIdentity:
    """The App's id and slug from ``GET /app`` with the App's JWT ``bearer``."""
    try:
        answer = await gh.getitem("/app", jwt=bearer)
    except gidgethub.RateLimitExceeded as exc:
        raise IdentityUnavailable(f"GET /app was rate limited ({exc}); retry later") from exc
    except gidgethub.BadRequest as exc:
        status = int(exc.status_code)
        if status in (401, 403, 404):
            raise IdentityRefused(
                f"GitHub answered {status} to GET /app: it does not accept the App's JWT; check "
                "that GITHUB_APP_ID and the private key belong to the same App and that this "
                "machine's clock is right") from exc
        raise IdentityUnavailable(f"GitHub answered {status} to GET /app; retry later") from exc
    except (gidgethub.GitHubException, aiohttp.ClientError, TimeoutError) as exc:
        raise IdentityUnavailable(f"GET /app failed ({type(exc).__name__}: {exc}); retry "
                                  "later") from exc
    try:
        return AppIdentity.model_validate(answer)
    except ValidationError as exc:
        raise IdentityUnavailable("GitHub's answer to GET /app has no App id and slug; this is "
                                  "a GitHub or proxy fault — retry later") from exc


async def wait_for_identity(read: Callable[[], Awaitable[AppIdentity]], *,
                            sleeper: Callable[[float], Awaitable[None]] = asyncio.sleep,
                            first: float = 0.5, longest: float = 30.0,
                            patience: float | None = None,
                            clock: Callable[[], float] = time.monotonic) -> AppIdentity:
    """``read()`` until GitHub answers, backing off from ``first`` to ``longest`` seconds; a
    refusal (``IdentityRefused``) is raised at once: no retry will fix a wrong key.

    ``patience`` (seconds) bounds the whole wait, requests included: past it the last
    ``IdentityUnavailable`` is raised. *Why a worker waits forever and a command does not:* a
    worker started while GitHub is down has nothing better to do than wait for it, under a
    supervisor that shows it waiting; a person running a command is owed an answer."""
    wait = first
    start = clock()
    while True:
        left = None if patience is None else patience - (clock() - start)
        try:
            if left is None:
                return await read()
            async with asyncio.timeout(max(left, 0.0)):
                return await read()
        except TimeoutError as exc:
            if left is None:  # read() let a timeout through: it is GitHub's, not ours
                raise
            raise IdentityUnavailable(
                f"GitHub did not say who the App is within {patience:g} s (GET /app at "
                "GITHUB_API_URL had no answer in time); check that GITHUB_API_URL is GitHub's "
                "API and reachable from here") from exc
        except IdentityUnavailable as exc:
            left = None if patience is None else patience - (clock() - start)
            if left is not None and left <= wait:  # the next try would start too late
                raise IdentityUnavailable(
                    f"GitHub did not say who the App is within {patience:g} s; the last try: "
                    f"{exc}") from exc
            log.warning("could not learn who the App is yet (%s); trying again in %.1f s",
                        exc, wait)
        await sleeper(wait)
        wait = min(longest, wait * 2)
