"""Who may act on a quest: the repository permission GitHub reports for a person (write,
maintain or admin), or being one of the configured reviewers — never ``author_association``,
which says how someone relates to the repository, not what they may do. Answers are cached
briefly: a burst of commands costs one request per person."""

from __future__ import annotations

from collections.abc import Iterable

from cachetools import TTLCache

from bot.github.forge import Forge

WRITE_OR_ABOVE = frozenset({"admin", "maintain", "write"})


class Permissions:
    def __init__(self, ttl_s: float = 60.0) -> None:
        self._cache: TTLCache[tuple[str, str], str] = TTLCache(maxsize=4096, ttl=ttl_s)

    async def permission(self, forge: Forge, login: str) -> str:
        key = (forge.repo.lower(), login.lower())
        cached = self._cache.get(key)
        if cached is not None:
            return cached
        level = await forge.permission(login)
        self._cache[key] = level
        return level

    async def may_act(self, forge: Forge, login: str, reviewers: Iterable[str]) -> bool:
        if login.lower() in {r.lower() for r in reviewers}:
            return True
        return await self.permission(forge, login) in WRITE_OR_ABOVE
