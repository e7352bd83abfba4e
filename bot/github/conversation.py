"""Talking with the people who comment: who may act, and replies to them.

Authorization is by the repository permission GitHub reports for the commenter (write, maintain
or admin), or by being one of the configured reviewers — never by ``author_association``, which
says how someone relates to the repository, not what they may do. Answers are cached briefly:
a burst of commands costs one request per person.

A reply is posted once per (delivery, command): the subset of the REST API questbot may use
cannot list comments, so the record that a reply was made is a Redis key set before posting;
a crash between the two loses that reply rather than doubling it.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any

import gidgethub
import redis.asyncio
from cachetools import TTLCache
from gidgethub.abc import GitHubAPI

log = logging.getLogger(__name__)

WRITE_OR_ABOVE = frozenset({"admin", "maintain", "write"})
REPLY_TTL_S = 7 * 24 * 3600


class Permissions:
    def __init__(self, ttl_s: float = 60.0) -> None:
        self._cache: TTLCache[tuple[str, str], str] = TTLCache(maxsize=4096, ttl=ttl_s)

    async def permission(self, gh: GitHubAPI, repo: str, login: str) -> str:
        key = (repo.lower(), login.lower())
        cached = self._cache.get(key)
        if cached is not None:
            return cached
        try:
            answer = await gh.getitem(f"/repos/{repo}/collaborators/{login}/permission")
            level = str(answer.get("permission") or "none")
        except gidgethub.BadRequest as exc:
            if exc.status_code != 404:  # 404: not a collaborator at all
                raise
            level = "none"
        self._cache[key] = level
        return level

    async def may_act(self, gh: GitHubAPI, repo: str, login: str,
                      reviewers: Iterable[str]) -> bool:
        if login.lower() in {r.lower() for r in reviewers}:
            return True
        return await self.permission(gh, repo, login) in WRITE_OR_ABOVE


async def reply_once(gh: GitHubAPI, client: redis.asyncio.Redis, repo: str, number: int,
                     key: str, body: str) -> bool:
    """Post ``body`` on issue/PR ``number`` unless a reply with ``key`` was already made."""
    first = await client.set(f"gh:replied:{key}", "1", nx=True, ex=REPLY_TTL_S)
    if not first:
        return False
    await gh.post(f"/repos/{repo}/issues/{number}/comments",
                  data={"body": f"{body}\n\n<!-- questbot:reply={key} -->"})
    return True


async def pull_head_ref(gh: GitHubAPI, repo: str, number: int) -> dict[str, Any]:
    answer: dict[str, Any] = await gh.getitem(f"/repos/{repo}/pulls/{number}")
    return answer
