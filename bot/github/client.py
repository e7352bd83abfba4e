"""GitHub clients per installation: gidgethub's aiohttp client with an installation token.

``GitHubClients.for_repo(full_name)`` is what ``bot.github.forge.Forges`` builds each
repository's Forge on (adapters get a Forge, never a client): it finds the installation that
covers the repository (recorded from webhook payloads by the worker), gets a token from the
``InstallationTokens`` cache and returns a ``gidgethub.aiohttp.GitHubAPI`` bound to
``GITHUB_API_URL``, so the same code talks to github.com, a GitHub Enterprise Server or the
local fake in the tests.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

import aiohttp
import redis.asyncio
from cachetools import LRUCache
from gidgethub.aiohttp import GitHubAPI
from pydantic import SecretStr

from bot.errors import PermanentError
from bot.github.auth import InstallationTokens
from bot.github.errors import GitHubAdapterError
from bot.github.ratelimit import PacedGitHubAPI, RateLimits

USER_AGENT = "questbot"
INSTALLATIONS_KEY = "gh:installations"
"""Redis hash: repository full name → installation id, kept from webhook payloads."""


class NotInstalled(GitHubAdapterError, PermanentError):
    """No installation of the App is known to cover a repository."""


class GitHubClients:
    def __init__(self, session: aiohttp.ClientSession, redis_client: redis.asyncio.Redis, *,
                 app_id: str | int, private_key: str | bytes | SecretStr, base_url: str,
                 clock: Callable[[], datetime] | None = None,
                 limits: RateLimits | None = None) -> None:
        self.session = session
        self.redis = redis_client
        self.base_url = base_url.rstrip("/")
        self.limits = limits or RateLimits()
        self._etags: dict[int, LRUCache[Any, Any]] = {}
        """Per installation: gidgethub's cache of ETags, so repeated reads are conditional
        (a 304 does not count against the rate limit)."""
        self._app = PacedGitHubAPI(session, USER_AGENT, limits=self.limits,
                                   base_url=self.base_url)
        if clock is None:
            self.tokens = InstallationTokens(self._app, app_id=app_id, private_key=private_key)
        else:
            self.tokens = InstallationTokens(self._app, app_id=app_id, private_key=private_key,
                                             clock=clock)

    def __repr__(self) -> str:
        return f"GitHubClients(base_url={self.base_url!r})"

    async def remember_installation(self, repo: str, installation_id: int) -> None:
        await self.redis.hset(INSTALLATIONS_KEY, repo.lower(), str(installation_id))

    async def installation_of(self, repo: str) -> int:
        raw = await self.redis.hget(INSTALLATIONS_KEY, repo.lower())
        if raw is None:
            raise NotInstalled(f"no installation of questbot is known for {repo}; install the "
                               "App on it, or redeliver a webhook from it")
        return int(raw)

    async def for_installation(self, installation_id: int) -> GitHubAPI:
        token = await self.tokens.token(installation_id)
        cache = self._etags.setdefault(installation_id, LRUCache(maxsize=500))
        return PacedGitHubAPI(self.session, USER_AGENT, limits=self.limits,
                              installation_id=installation_id, oauth_token=token,
                              base_url=self.base_url, cache=cache)

    async def for_repo(self, repo: str) -> GitHubAPI:
        return await self.for_installation(await self.installation_of(repo))
