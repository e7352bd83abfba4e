"""What effect adapters share: the journal, GitHub clients, repository settings and a clock.

The worker builds one ``AdapterContext`` and hands it to each adapter factory. Adapters turn an
effect into I/O and report outcomes as events, whose ids they derive from the effect key
(``outcome_id``) so a redelivered effect reports the same event and the journal absorbs it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Protocol

from bot.core import Effect, Quest
from bot.github.client import GitHubClients
from bot.journal import Journal
from bot.settings.schema import Settings


class SettingsSource(Protocol):
    async def settings(self, repo: str) -> Settings: ...


class QuestNotFound(LookupError):
    """An effect names a quest that has no snapshot (its journal was lost or never written)."""


def utcnow() -> datetime:
    return datetime.now(UTC)


def outcome_id(effect: Effect, name: str) -> str:
    """The id of the event an adapter reports for ``effect``: stable across redeliveries."""
    return f"{effect.key}/{name}"


@dataclass
class AdapterContext:
    journal: Journal
    clients: GitHubClients
    settings: SettingsSource
    clock: Callable[[], datetime] = utcnow
    bot_login: str = "questbot[bot]"
    extra: dict[str, object] = field(default_factory=dict)

    async def quest(self, quest_id: str) -> Quest:
        _version, quest = await self.journal.snapshot(quest_id)
        if quest is None:
            raise QuestNotFound(f"quest {quest_id} has no snapshot in Redis; rebuild it with "
                                f"`python -m bot replay --redis URL {quest_id}`")
        return quest
