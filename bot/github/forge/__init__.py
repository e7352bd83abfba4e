"""The Forge: questbot's one way to GitHub, like gidgethub's one ``_request``.

Every write questbot makes on GitHub — git data, pull requests, merges, check runs, comments,
replies, reactions, issues, review requests — is a method of a ``Forge`` (``repository.py``),
of its ``git`` (``git.py``, refs and the few commits questbot makes through the API) or of its
``graphql`` (``graphql.py``; several edits in one request: ``batch.py``), and so are the reads
the adapters need; the agent's checkouts and pushes go over git itself
(``bot.github.gitremote``, the ``GitHost``). No module outside ``bot/github`` holds a raw client
or a token: the worker and the agent get a Forge, or a ``GitHost``, from ``Forges``, and
``refusals.py`` turns GitHub's permanent refusals into ``PermanentError`` in one place.
"""

from __future__ import annotations

from typing import Any

import gidgethub

from bot.adapters import GitHost
from bot.github.auth import InstallationTokenError
from bot.github.client import GitHubClients
from bot.github.forge.git import GitData
from bot.github.forge.logs import JobLogs
from bot.github.forge.records import (
    MERGE_METHODS,
    CheckRun,
    Comment,
    FileContent,
    Issue,
    Pull,
    RepoInfo,
)
from bot.github.forge.refusals import (
    PERMANENT_STATUSES,
    is_permanent,
    refusals,
    refused,
    status_of,
)
from bot.github.forge.repository import CHECK_NAME, Forge
from bot.github.gitremote import GitRemote, git_base_url


class Forges:
    """The Forge of each repository, through the installation that covers it."""

    def __init__(self, clients: GitHubClients) -> None:
        self.clients = clients

    async def for_repo(self, repo: str) -> Forge:
        """``repo`` (the name questbot knows it by) as it is on GitHub now: renamed or
        transferred, its Forge asks GitHub under the new name (``bot.repository.names``)."""
        return Forge(await self.clients.for_repo(repo), await self.clients.current_name(repo))

    async def git_host(self, repo: str) -> GitHost:
        """``AdapterContext.hosts``: the repository over git's smart HTTP, for the agent,
        with a fresh installation token for each git command."""
        installation = await self.clients.installation_of(repo)
        tokens = self.clients.tokens

        async def token() -> str:
            return await tokens.token(installation)

        async def renew(stale: str) -> str:
            return await tokens.renew(installation, stale)

        return GitRemote(await self.clients.current_name(repo),
                         base_url=git_base_url(self.clients.base_url), token=token,
                         renew=renew)

    async def failing_log(self, repo: str, run: str, app: str | None = None) -> str | None:
        """``AdapterContext.logs``: the log of the failed Actions job ``run`` names."""
        return await JobLogs(await self.for_repo(repo)).failing_log(run, app=app)

    async def remember_installation(self, repo: str, installation_id: int) -> None:
        await self.clients.remember_installation(repo, installation_id)

    async def forget_installation(self, repo: str) -> None:
        await self.clients.forget_installation(repo)

    async def repositories_of(self, installation_id: int) -> list[str]:
        return await self.clients.repositories_of(installation_id)

    async def known_names(self, seen: dict[int, str]) -> dict[int, str]:
        return await self.clients.known_names(seen)

    async def moved(self, known: str, now: str) -> None:
        await self.clients.moved(known, now)

    async def repository_by_id(self, installation_id: int,
                               repository_id: int) -> dict[str, Any] | None:
        """The repository of ``repository_id`` as ``installation_id`` sees it now
        (``GET /repositories/{id}``, where GitHub's redirects point: BEHAVIOUR §23), or
        ``None`` when GitHub answers 404 — deleted, or out of the installation's reach — or
        will not issue the installation a token (uninstalled: 404; suspended: 403). Anything
        else (5xx, a timeout, a rate limit) is raised: the caller asks again later."""
        try:
            gh = await self.clients.for_installation(installation_id)
        except InstallationTokenError as exc:
            if exc.status in (401, 403, 404):
                return None
            raise
        try:
            answer = await gh.getitem(f"/repositories/{int(repository_id)}")
        except gidgethub.BadRequest as exc:
            if status_of(exc) == 404:
                return None
            raise
        return answer if isinstance(answer, dict) else None


__all__ = [
    "CHECK_NAME", "MERGE_METHODS", "PERMANENT_STATUSES", "CheckRun", "Comment", "FileContent",
    "Forge", "Forges", "GitData", "Issue", "JobLogs", "Pull", "RepoInfo", "is_permanent",
    "refusals", "refused", "status_of",
]
