"""What effect adapters share: the journal, repository settings, git hosts and a clock.

The worker builds one ``AdapterContext`` and hands it to each adapter factory. Adapters turn an
effect into I/O and report outcomes as events, whose ids they derive from the effect key
(``outcome_id``) so a redelivered effect reports the same event and the journal absorbs it.

This module is the contract between the adapters and what they talk to, so it imports only the
core, the journal and the settings: ``bot.agent`` reaches a repository through ``GitHost`` and
never sees GitHub, and ``bot.github`` supplies the implementation (``Forges.git_host``: git over
HTTPS with the installation token, ``bot.github.gitremote``), which the
worker's assembly hands in as ``AdapterContext.hosts``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Protocol

from pydantic import BaseModel, ConfigDict

from bot.core import Effect, EffectType, Quest
from bot.journal import Journal, PermanentError
from bot.runner import Adapter
from bot.settings.repository.schema import Settings

Changes = Mapping[str, bytes | None]
"""Path → new content, or ``None`` to delete the path (a symlink's content is its target)."""


class SettingsSource(Protocol):
    async def settings(self, repo: str) -> Settings: ...


class GitHost(Protocol):
    """One repository's git, as the agent needs it: commits brought into a local repository,
    where a branch points, and a local commit pushed onto a branch.

    Everything is named by git's own object ids, which are the same wherever the objects are,
    and the local side is an ordinary git repository the agent works in
    (``bot.agent.workspace``), so the transport is the host's business. Today's host
    (``bot.github.gitremote``) speaks git's smart HTTP to GitHub with the installation token;
    the token never reaches the local repository.
    """

    @property
    def repo(self) -> str:
        """The repository's full name, ``owner/name``, for messages."""
        ...

    async def fetch(self, into: Path, commits: Sequence[str]) -> None:
        """Bring each of ``commits`` — its tree and every blob, not its history — into the
        local git repository ``into``; a commit ``into`` holds already costs nothing. Raises
        ``GitHostError`` for a commit the host does not have."""
        ...

    async def branch_head(self, branch: str) -> str | None:
        """The commit ``branch`` points at, or ``None`` when there is no such branch."""
        ...

    async def push(self, into: Path, commit: str, branch: str, *,
                   replacing: str | None = None) -> None:
        """Point ``branch`` at ``commit`` of the local repository ``into`` (creating the branch
        if needed), sending the objects the host lacks: only forward — ``commit`` descends
        from the branch's head — unless ``replacing`` names the one head it may replace (a
        commit questbot pushed itself), which is then checked on the host as it moves. The
        quest branch only moves forward, so a commit a person pushed is never dropped. Raises
        ``GitHostError`` when the host refuses it (a head that moved since included)."""
        ...


GitHosts = Callable[[str], Awaitable[GitHost]]
"""Repository full name → its ``GitHost``."""


FailingLogs = Callable[[str, str, str | None], Awaitable[str | None]]
"""Repository full name, the run that reported a failure (``SignalSensed.run``) and the App
that made it when its webhook said (``ForgeMemory.run_app``) → the failed CI job's log as the
CI keeps it (untrusted text), or ``None`` when there is none to read. ``bot.github`` supplies
it (``Forges.failing_log``: GitHub Actions)."""


class GitHostError(PermanentError):
    """The host cannot give or take what was asked (a commit it does not have, a push it
    refuses), and asking again will not change that."""


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


Sweep = Callable[[str], Awaitable[bool]]
"""Given a repository, queue again the runs owed there; whether any is still owed."""


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
    logs: FailingLogs | None = None
    """Where the agent reads the failing job's log (``None``: nowhere; it works without)."""
    sweeps: list[Sweep] = field(default_factory=list)
    """Runs a part of questbot may owe a repository, asked again now and then
    (``bot.worker.owed_sweep``)."""

    @property
    def bot_login(self) -> str:
        return self.app.bot_login

    async def quest(self, quest_id: str) -> Quest:
        _version, quest = await self.journal.snapshot(quest_id)
        if quest is None:
            raise QuestNotFound(f"quest {quest_id} has no snapshot in Redis; rebuild it with "
                                f"`python -m bot replay --redis URL {quest_id}`")
        return quest


Sync = Callable[[Quest], Awaitable[None]]
"""Brings one quest's GitHub view up to date (a part's projection, ``bot.worker.projector``)."""

Plugin = Callable[[AdapterContext], "tuple[dict[EffectType, Adapter], Sync | None]"]
"""A part of questbot, as the worker is assembled from it: given the shared context, the
adapters it brings for its effect types, and its projection (``bot.worker.process``)."""
