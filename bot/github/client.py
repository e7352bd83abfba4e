"""GitHub clients per installation: gidgethub's aiohttp client with an installation token.

``GitHubClients.for_repo(full_name)`` is what ``bot.github.forge.Forges`` builds each
repository's Forge on (adapters get a Forge, never a client): it finds the installation that
covers the repository (recorded from webhook payloads by the worker), gets a token from the
``InstallationTokens`` cache and returns a ``gidgethub.aiohttp.GitHubAPI`` bound to
``GITHUB_API_URL``, so the same code talks to github.com, a GitHub Enterprise Server or the
local fake in the tests.

An installation token GitHub answers 401 to — revoked, expired before its ``expires_at``, the
App reinstalled — is dropped and fetched again, and the request sent once more with the new
one (``InstallationAPI``); a 401 means GitHub did nothing, so a write is safe to resend. Who
the App is (``identity``, from ``GET /app``) is read once per process (``bot.github.identity``
says why there).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any

import aiohttp
from gidgethub.aiohttp import GitHubAPI
from pydantic import SecretStr

from bot.adapters import AppIdentity
from bot.errors import PermanentError
from bot.github.auth import InstallationTokens
from bot.github.errors import GitHubAdapterError
from bot.github.etags import Etags
from bot.github.identity import read_identity
from bot.github.ratelimit import PacedGitHubAPI, RateLimits
from bot.journal.keys import REPOSITORY_IDS_KEY, REPOSITORY_NAMES_KEY
from bot.journal.wire import RedisClient

log = logging.getLogger(__name__)

USER_AGENT = "questbot"
INSTALLATIONS_KEY = "gh:installations"
"""Redis hash: repository full name → installation id, kept from webhook payloads."""


def _str(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


class NotInstalled(GitHubAdapterError, PermanentError):
    """No installation of the App is known to cover a repository."""


class InstallationAPI(PacedGitHubAPI):
    """An installation's client: paced (``PacedGitHubAPI``), and a request GitHub answers 401
    to with this client's token is sent once more with a token fetched anew."""

    def __init__(self, session: aiohttp.ClientSession, *args: Any, tokens: InstallationTokens,
                 installation_id: int, **kwargs: Any) -> None:
        super().__init__(session, *args, installation_id=installation_id, **kwargs)
        self.tokens = tokens

    async def _request(self, method: str, url: str, headers: Mapping[str, str],
                       body: bytes = b"") -> tuple[int, Mapping[str, str], bytes]:
        status, reply_headers, data = await super()._request(method, url, headers, body)
        stale = self.oauth_token
        if (status != 401 or stale is None or self.installation_id is None
                or headers.get("authorization") != f"token {stale}"):
            return status, reply_headers, data
        fresh = await self.tokens.renew(self.installation_id, stale)
        self.oauth_token = fresh
        log.info("GitHub answered 401 to %s %s; sending it again with a new token", method,
                 url.split("?", 1)[0])
        return await super()._request(method, url, {**headers, "authorization": f"token {fresh}"},
                                      body)


class GitHubClients:
    def __init__(self, session: aiohttp.ClientSession, redis_client: RedisClient, *,
                 app_id: str | int, private_key: str | bytes | SecretStr, base_url: str,
                 clock: Callable[[], datetime] | None = None,
                 limits: RateLimits | None = None) -> None:
        self.session = session
        self.redis = redis_client
        self.base_url = base_url.rstrip("/")
        self.limits = limits or RateLimits()
        self.etags = Etags()
        """gidgethub's cache of answers with an ETag, so repeated reads are conditional (a
        304 does not count against the rate limit): kept per installation, bounded in all
        (``bot.github.etags``)."""
        self._app = PacedGitHubAPI(session, USER_AGENT, limits=self.limits,
                                   base_url=self.base_url)
        if clock is None:
            self.tokens = InstallationTokens(self._app, app_id=app_id, private_key=private_key)
        else:
            self.tokens = InstallationTokens(self._app, app_id=app_id, private_key=private_key,
                                             clock=clock)
        self._identity: AppIdentity | None = None
        self._identity_lock = asyncio.Lock()

    def __repr__(self) -> str:
        return f"GitHubClients(base_url={self.base_url!r})"

    async def identity(self) -> AppIdentity:
        """Who the App is (``GET /app`` with its JWT), read once per process."""
        if self._identity is None:
            async with self._identity_lock:
                if self._identity is None:
                    self._identity = await read_identity(self._app, self.tokens.app_jwt())
        return self._identity

    async def remember_installation(self, repo: str, installation_id: int) -> None:
        await self.redis.hset(INSTALLATIONS_KEY, repo.lower(), str(installation_id))

    async def forget_installation(self, repo: str) -> None:
        """The App no longer covers ``repo`` (removed from its installation, or uninstalled):
        what questbot asks there fails at once as ``NotInstalled``, for good, rather than
        with a token GitHub no longer accepts for it."""
        await self.redis.hdel(INSTALLATIONS_KEY, repo.lower())

    async def known_names(self, seen: dict[int, str]) -> dict[int, str]:
        """The name questbot knows each repository of ``seen`` (id → its name in a webhook)
        by: the first name it saw for that id, recorded now for an id it had not seen. GitHub
        keeps a repository's id through renames and transfers; its name changes."""
        async with self.redis.pipeline(transaction=False) as pipe:
            for repo_id, name in seen.items():
                pipe.hsetnx(REPOSITORY_IDS_KEY, str(repo_id), name)
            pipe.hmget(REPOSITORY_IDS_KEY, [str(repo_id) for repo_id in seen])
            *_set, known = await pipe.execute()
        return {repo_id: _str(name) if name is not None else seen[repo_id]
                for repo_id, name in zip(seen, known, strict=True)}

    async def moved(self, known: str, now: str) -> None:
        """The repository questbot knows as ``known`` is ``now`` on GitHub (renamed or
        transferred): its requests go there from now on, as GitHub asks of a 301."""
        await self.redis.hset(REPOSITORY_NAMES_KEY, known.lower(), now)

    async def current_name(self, repo: str) -> str:
        """``repo``'s name on GitHub now: itself, unless it was renamed or transferred."""
        now = await self.redis.hget(REPOSITORY_NAMES_KEY, repo.lower())
        return _str(now) if now is not None else repo

    async def repositories_of(self, installation_id: int) -> list[str]:
        """The repositories questbot has seen ``installation_id`` cover, each as questbot
        knows it (its case too: the installations are kept lowercased). Read on the rare
        installation-wide event only: it reads every repository questbot knows."""
        found = await self.redis.hgetall(INSTALLATIONS_KEY)
        cased = {_str(name).lower(): _str(name)
                 for name in await self.redis.hvals(REPOSITORY_IDS_KEY)}
        return sorted(cased.get(_str(name), _str(name)) for name, inst in found.items()
                      if _str(inst) == str(installation_id))

    async def installation_of(self, repo: str) -> int:
        raw = await self.redis.hget(INSTALLATIONS_KEY, repo.lower())
        if raw is None:
            raise NotInstalled(f"no installation of questbot is known for {repo}; install the "
                               "App on it, or redeliver a webhook from it")
        return int(raw)

    async def for_installation(self, installation_id: int) -> GitHubAPI:
        token = await self.tokens.token(installation_id)
        cache = self.etags.of(installation_id)
        return InstallationAPI(self.session, USER_AGENT, limits=self.limits,
                               tokens=self.tokens, installation_id=installation_id,
                               oauth_token=token, base_url=self.base_url, cache=cache)

    async def for_repo(self, repo: str) -> GitHubAPI:
        return await self.for_installation(await self.installation_of(repo))
