"""What questbot remembers about its own writes on GitHub, in Redis.

GitHub is the record of what was written; this is the index into it. Rather than search
GitHub for its own pull requests, issues and comments each time (a reply's hidden marker is
the one thing looked up there, when Redis lost the record), questbot keeps the numbers and ids
of what it created here, right after each create:
the quest's pull request, its status comment, its check run, each reply by effect key, and per
repository the inbox issue and the last good settings. Digests of rendered content let ``sync``
skip writes that would change nothing.

Keys follow ``bot.journal.keys``: a quest's hash carries the quest's hash tag (``q:{id}:gh``,
the same Redis Cluster slot as its journal), a repository's carries the repository's.
"""

from __future__ import annotations

import redis.asyncio
from redis.typing import EncodableT, FieldT

from bot.journal.keys import hash_tag

QUEST_FIELDS = (
    "pr", "check_run", "check_head", "check_done", "check_digest", "status_comment",
    "status_target", "status_digest", "source_issue", "revert_pr",
)


def quest_gh_key(quest_id: str) -> str:
    return f"q:{hash_tag(quest_id)}:gh"


def repo_gh_key(repo: str) -> str:
    return f"repo:{hash_tag(repo.lower())}:gh"


def _text(value: bytes | str | None) -> str | None:
    if value is None:
        return None
    return value.decode() if isinstance(value, bytes) else value


class ForgeMemory:
    def __init__(self, client: redis.asyncio.Redis) -> None:
        self.client = client

    # -- one quest -------------------------------------------------------------------------

    async def quest(self, quest_id: str, name: str) -> str | None:
        return _text(await self.client.hget(quest_gh_key(quest_id), name))

    async def quest_int(self, quest_id: str, name: str) -> int | None:
        value = await self.quest(quest_id, name)
        return int(value) if value is not None else None

    async def set_quest(self, quest_id: str, **fields: str | int) -> None:
        mapping: dict[FieldT, EncodableT] = {name: str(value) for name, value in fields.items()}
        await self.client.hset(quest_gh_key(quest_id), mapping=mapping)

    async def set_quest_field(self, quest_id: str, name: str, value: str | int) -> None:
        await self.client.hset(quest_gh_key(quest_id), name, str(value))

    async def remember_source_issue(self, quest_id: str, number: int) -> None:
        """For the worker: the issue a quest came from, where it talks until it has a PR."""
        await self.set_quest_field(quest_id, "source_issue", number)

    # -- one repository --------------------------------------------------------------------

    async def repo(self, repo: str, name: str) -> str | None:
        return _text(await self.client.hget(repo_gh_key(repo), name))

    async def set_repo(self, repo: str, name: str, value: str | int) -> None:
        await self.client.hset(repo_gh_key(repo), name, str(value))

    async def remember_default_branch(self, repo: str, branch: str) -> None:
        """For the worker: ``repository.default_branch`` from any webhook payload. The REST
        subset has no ``repos/get``, so this is how questbot knows where to open PRs."""
        await self.set_repo(repo, "default_branch", branch)

    async def default_branch(self, repo: str) -> str:
        return await self.repo(repo, "default_branch") or "main"
