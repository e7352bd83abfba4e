"""Which policy a quest is stepped under: its repository's settings, looked up synchronously.

``Journal.apply`` asks for a policy by quest id without awaiting, but settings come from
GitHub. ``PolicyBook.prepare(quest_id, repo)`` is awaited before any apply (by intake, and by
the adapter wrapper for outcome events) and leaves the policy where the synchronous lookup
finds it. A quest the book has not prepared gets the default policy and a warning in the log.

A quest is stepped under its own repository's policy, always: the repository is the quest's
(from its snapshot), and the one an event came from is used only for a quest the event makes.
An event from another repository for an existing quest raises ``ForeignQuest`` rather than be
applied — ``bot.quests.quest_of`` never hands such a quest out, so this is the last guard,
not a path (issue 22: an attacker's repository once lent its policy to another's quest).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from cachetools import TTLCache

from bot.adapters import SettingsSource
from bot.core import Policy
from bot.errors import PermanentError
from bot.journal import Journal

log = logging.getLogger(__name__)


class ForeignQuest(PermanentError):
    """An event would act on a quest of another repository. The lookups of
    ``bot.quests.quest_of`` never hand one out, so this is a bug to see, not a case to
    handle: the delivery is dropped with this error in the log."""


HELD_S = 300.0
"""How long the book holds a quest's repository, and a repository's policy, after it last
prepared them: every ``prepare`` renews both, and ``__call__`` follows its ``prepare`` within
the same apply."""


class PolicyBook:
    """What it holds is what the quests moving now need, not every quest or repository it
    ever served: whatever was not prepared for ``held_s`` leaves — an ended quest, a quest
    another worker is moving, a repository whose quests are all quiet; the next event reads
    the quest's snapshot once. Not forgotten at the moment a quest ends: a concurrent event's
    ``prepare`` may stand between that and its own apply, which would then step it under the
    default policy. Before, a quest's repository stayed until 100,000 others had come
    (~35 MB at the bound) and a repository's policy (~3 KB) for good."""

    def __init__(self, settings: SettingsSource, journal: Journal, *,
                 held_s: float = HELD_S, timer: Callable[[], float] = time.monotonic) -> None:
        self._settings = settings
        self._journal = journal
        self._repo_of: TTLCache[str, str] = TTLCache(maxsize=10_000, ttl=held_s, timer=timer)
        self._policy_of_repo: TTLCache[str, Policy] = TTLCache(maxsize=4_096, ttl=held_s,
                                                               timer=timer)

    def held(self) -> tuple[int, int]:
        """How many quests' repositories and repositories' policies the book holds."""
        self._repo_of.expire()
        self._policy_of_repo.expire()
        return len(self._repo_of), len(self._policy_of_repo)

    async def prepare(self, quest_id: str, repo: str | None = None) -> Policy:
        """Load the policy ``quest_id`` is stepped under: its own repository's. ``repo``, the
        repository an event came from, names it only for a quest not made yet; for one that
        exists it must be the quest's (``ForeignQuest``)."""
        own = self._repo_of.get(quest_id)
        if own is None:
            _v, quest = await self._journal.snapshot(quest_id)
            own = quest.repo if quest is not None else repo
        if own is None:
            return Policy()
        if repo is not None and repo.lower() != own.lower():
            raise ForeignQuest(f"an event of {repo} for quest {quest_id} of {own}: not "
                               "applied")
        self._repo_of[quest_id] = own
        policy = (await self._settings.settings(own)).to_policy()
        self._policy_of_repo[own.lower()] = policy
        return policy

    def __call__(self, quest_id: str) -> Policy:
        repo = self._repo_of.get(quest_id)
        policy = self._policy_of_repo.get(repo.lower()) if repo else None
        if policy is None:
            log.warning("no prepared policy for quest %s; stepping it under the default policy",
                        quest_id)
            return Policy()
        return policy
