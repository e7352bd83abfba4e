"""The Forge: questbot's one way to GitHub, like gidgethub's one ``_request``.

Every write questbot makes on GitHub — git data, pull requests, merges, check runs, comments,
replies, reactions, issues, review requests — is a method of a ``Forge`` (``repository.py``) or
of its ``git`` (``git.py``, the ``GitHost`` the agent pushes through), and so are the reads the
adapters need. No module outside ``bot/github`` holds a raw client: the worker and the agent get
a Forge, or a ``GitHost``, from ``Forges``, and ``refusals.py`` turns GitHub's permanent
refusals into ``PermanentError`` in one place.
"""

from __future__ import annotations

from bot.adapters import GitHost
from bot.github.client import GitHubClients
from bot.github.forge.git import GitData
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


class Forges:
    """The Forge of each repository, through the installation that covers it."""

    def __init__(self, clients: GitHubClients) -> None:
        self.clients = clients

    async def for_repo(self, repo: str) -> Forge:
        return Forge(await self.clients.for_repo(repo), repo)

    async def git_host(self, repo: str) -> GitHost:
        """``AdapterContext.hosts``: the repository's git data, for the agent."""
        return (await self.for_repo(repo)).git

    async def remember_installation(self, repo: str, installation_id: int) -> None:
        await self.clients.remember_installation(repo, installation_id)


__all__ = [
    "CHECK_NAME", "MERGE_METHODS", "PERMANENT_STATUSES", "CheckRun", "Comment", "FileContent",
    "Forge", "Forges", "GitData", "Issue", "Pull", "RepoInfo", "is_permanent", "refusals",
    "refused", "status_of",
]
