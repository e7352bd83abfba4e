"""Per-repository settings from ``.github/questbot.yml`` on the default branch.

``RepoSettings`` implements ``bot.adapters.SettingsSource``. It reads the file through the
contents API, keeps the parsed settings for ``ttl`` seconds (a quest steps many times a
minute; a settings change can wait a few minutes, and ``forget(repo)`` applies it at once
when the worker sees a push that touches the file), and never applies a file it cannot use:

* no file → the defaults;
* a good file → those settings, and its text is kept in Redis as the last good settings so
  they survive a restart;
* a malformed file → the last good settings (or the defaults) stay in force, and the problem
  is reported where the maintainer will see it: a ``questbot/settings`` check run on the
  default branch's head, with ``render_settings_problem``'s text. Each distinct file (by blob
  SHA) is reported once; a good file afterwards reports the fix on the same check name.

A GitHub outage while reading keeps whatever was last known rather than failing the quest.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Protocol

import gidgethub
from cachetools import TTLCache
from gidgethub.abc import GitHubAPI

from bot.github.forge import Forge
from bot.journal.memory import ForgeMemory
from bot.journal.wire import RedisClient
from bot.settings.repository.schema import (
    SETTINGS_PATH,
    Settings,
    SettingsError,
    parse_settings,
    render_settings_problem,
)

log = logging.getLogger(__name__)

SETTINGS_CHECK = "questbot/settings"
DEFAULT_TTL = 180.0


class RepoClients(Protocol):
    async def for_repo(self, repo: str) -> GitHubAPI: ...


class RepoSettings:
    def __init__(self, clients: RepoClients, redis_client: RedisClient, *,
                 ttl: float = DEFAULT_TTL, timer: Callable[[], float] = time.monotonic,
                 maxsize: int = 4096) -> None:
        self.clients = clients
        self.memory = ForgeMemory(redis_client)
        self._cache: TTLCache[str, Settings] = TTLCache(maxsize=maxsize, ttl=ttl, timer=timer)

    async def settings(self, repo: str) -> Settings:
        key = repo.lower()
        cached = self._cache.get(key)
        if cached is not None:
            return cached
        settings = await self._load(repo)
        self._cache[key] = settings
        return settings

    def forget(self, repo: str | None = None) -> None:
        """Read the file again on next use (all repositories, or one)."""
        if repo is None:
            self._cache.clear()
        else:
            self._cache.pop(repo.lower(), None)

    async def last_good(self, repo: str) -> Settings:
        raw = await self.memory.repo(repo, "settings_raw")
        if not raw:
            return Settings()
        try:
            return parse_settings(raw)
        except SettingsError:  # a parser change made old text invalid: defaults, not a crash
            return Settings()

    async def _load(self, repo: str) -> Settings:
        branch = await self.memory.default_branch(repo)
        try:
            forge = Forge(await self.clients.for_repo(repo), repo)
            found = await forge.file(SETTINGS_PATH, branch)
        except (gidgethub.GitHubException, OSError) as exc:
            log.warning("could not read %s of %s, keeping the last good settings: %s",
                        SETTINGS_PATH, repo, exc)
            return await self.last_good(repo)
        if found is None:
            await self.memory.set_repo(repo, "settings_raw", "")
            await self._resolve(repo, forge, branch)
            return Settings()
        try:
            settings = parse_settings(found.text)
        except SettingsError as exc:
            await self._report(repo, forge, branch, exc, found.sha)
            return await self.last_good(repo)
        await self.memory.set_repo(repo, "settings_raw", found.text)
        await self._resolve(repo, forge, branch)
        return settings

    async def _report(self, repo: str, forge: Forge, branch: str, error: SettingsError,
                      blob: str) -> None:
        if await self.memory.repo(repo, "settings_problem") == blob:
            return  # this very file was reported already
        head = await forge.git.branch_head(branch)
        if head is None:
            return
        in_force = ("the last good settings" if await self.memory.repo(repo, "settings_raw")
                    else "the defaults")
        text = render_settings_problem(error, in_force=in_force)
        try:
            await forge.create_check_run({
                "name": SETTINGS_CHECK, "head_sha": head, "external_id": f"settings:{blob}",
                "conclusion": "failure",
                "output": {"title": f"questbot cannot use {SETTINGS_PATH}",
                           "summary": text[:65000]}})
        except Exception as exc:  # reporting must not stop quests from using good settings
            log.warning("could not report the settings problem of %s: %s", repo, exc)
            return
        await self.memory.set_repo(repo, "settings_problem", blob)

    async def _resolve(self, repo: str, forge: Forge, branch: str) -> None:
        """Say the problem is fixed, once, where it was reported."""
        if not await self.memory.repo(repo, "settings_problem"):
            return
        head = await forge.git.branch_head(branch)
        if head is not None:
            try:
                await forge.create_check_run({
                    "name": SETTINGS_CHECK, "head_sha": head, "external_id": "settings:ok",
                    "conclusion": "success",
                    "output": {"title": f"{SETTINGS_PATH} is in force",
                               "summary": f"questbot reads `{SETTINGS_PATH}` again."}})
            except Exception as exc:
                log.warning("could not report the settings fix of %s: %s", repo, exc)
                return
        await self.memory.set_repo(repo, "settings_problem", "")
