"""What effect adapters share: the journal, repository settings, git hosts and a clock.

The worker builds one ``AdapterContext`` and hands it to each adapter factory. Adapters turn an
effect into I/O and report outcomes as events, whose ids they derive from the effect key
(``outcome_id``) so a redelivered effect reports the same event and the journal absorbs it.

This module is the contract between the adapters and what they talk to, so it imports only the
core, the journal and the settings: ``bot.agent`` reaches a repository through ``GitHost`` and
never sees GitHub, and ``bot.github`` supplies the implementation (``Forge.git``), which the
worker's assembly hands in as ``AdapterContext.hosts``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Protocol

from pydantic import BaseModel, ConfigDict

from bot.core import Effect, Quest
from bot.journal import Journal, PermanentError
from bot.settings.schema import Settings

Changes = Mapping[str, bytes | None]
"""Path → new content, or ``None`` to delete the path."""


class SettingsSource(Protocol):
    async def settings(self, repo: str) -> Settings: ...


class GitHost(Protocol):
    """One repository's git data, as the agent needs it: what a commit holds, where a branch
    points, and one commit of changes pushed onto a branch.

    Everything is named by git's own object ids — commit, tree and blob SHAs, which are the
    same wherever the objects are — so the transport is the host's business. Today's host
    (``bot.github.forge.git``) speaks GitHub's REST contents and Git Data APIs; one that clones
    and pushes over git's smart HTTP with the installation token fits the same methods: list
    ``files`` with ``git ls-tree``, read ``blobs`` with ``git cat-file``, ``push`` a commit made
    on ``parent`` with ``git push``. The agent's local work (``bot.agent.workspace``) stays the
    same either way.
    """

    @property
    def repo(self) -> str:
        """The repository's full name, ``owner/name``, for messages."""
        ...

    async def files(self, commit: str) -> dict[str, str]:
        """Every file of ``commit`` as path → blob SHA. Raises ``GitHostError`` for what the
        host cannot hold as a regular file (a symlink, a submodule)."""
        ...

    async def blobs(self, commit: str, files: Mapping[str, str]) -> dict[str, bytes]:
        """The content of each distinct blob of ``files`` (path → blob SHA, paths of
        ``commit``), keyed by blob SHA."""
        ...

    async def branch_head(self, branch: str) -> str | None:
        """The commit ``branch`` points at, or ``None`` when there is no such branch."""
        ...

    async def push(self, branch: str, *, parent: str, parent_tree: str, changes: Changes,
                   message: str, force: bool = False) -> str:
        """Make one commit of ``changes`` on top of commit ``parent`` (whose tree is
        ``parent_tree``), point ``branch`` at it (creating the branch if needed; ``force``
        lets it move to a commit that does not descend from its head) and return its SHA.
        Raises ``GitHostError`` when the host refuses the commit for good."""
        ...


GitHosts = Callable[[str], Awaitable[GitHost]]
"""Repository full name → its ``GitHost``."""


class GitHostError(PermanentError):
    """The host cannot give or take what was asked (a file that is not a regular file, a tree
    it does not know), and asking again will not change that."""


class QuestNotFound(PermanentError, LookupError):
    """An effect names a quest that has no snapshot (its journal was lost or never written)."""


class AppIdentity(BaseModel):
    """Who questbot is on GitHub: its App's id and slug, as ``GET /app`` answers them.

    The App acts as the account ``<slug>[bot]`` (BEHAVIOUR.md §13): that login is the author
    of every comment, issue and pull request questbot makes and the pusher of its commits, and
    the slug is on every check run and suite it creates. Read from GitHub rather than
    configured, so an App registered under another name still knows its own work — its own
    failing check is no quest, its own comments are no commands, and its status comment is
    found by that author."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    id: int
    slug: str

    @property
    def bot_login(self) -> str:
        return f"{self.slug}[bot]"


def utcnow() -> datetime:
    return datetime.now(UTC)


def outcome_id(effect: Effect, name: str) -> str:
    """The id of the event an adapter reports for ``effect``: stable across redeliveries."""
    return f"{effect.key}/{name}"


@dataclass
class AdapterContext:
    journal: Journal
    hosts: GitHosts
    settings: SettingsSource
    app: AppIdentity
    """The App questbot runs as (``GET /app``, read once per process)."""
    clock: Callable[[], datetime] = utcnow
    extra: dict[str, object] = field(default_factory=dict)

    @property
    def bot_login(self) -> str:
        return self.app.bot_login

    async def quest(self, quest_id: str) -> Quest:
        _version, quest = await self.journal.snapshot(quest_id)
        if quest is None:
            raise QuestNotFound(f"quest {quest_id} has no snapshot in Redis; rebuild it with "
                                f"`python -m bot replay --redis URL {quest_id}`")
        return quest
