"""Which policy a quest is stepped under: its repository's settings, looked up synchronously.

``Journal.apply`` asks for a policy by quest id without awaiting, but settings come from
GitHub. ``PolicyBook.prepare(quest_id, repo)`` is awaited before any apply (by intake, and by
the adapter wrapper for outcome events) and leaves the policy where the synchronous lookup
finds it. A quest the book has not prepared gets the default policy and a warning in the log.
"""

from __future__ import annotations

import logging

from cachetools import LRUCache

from bot.adapters import SettingsSource
from bot.core import Policy
from bot.journal import Journal

log = logging.getLogger(__name__)


class PolicyBook:
    def __init__(self, settings: SettingsSource, journal: Journal) -> None:
        self._settings = settings
        self._journal = journal
        self._repo_of: LRUCache[str, str] = LRUCache(maxsize=100_000)
        self._policy_of_repo: dict[str, Policy] = {}

    async def prepare(self, quest_id: str, repo: str | None = None) -> Policy:
        if repo is None:
            repo = self._repo_of.get(quest_id)
        if repo is None:
            _v, quest = await self._journal.snapshot(quest_id)
            if quest is None:
                return Policy()
            repo = quest.repo
        self._repo_of[quest_id] = repo
        policy = (await self._settings.settings(repo)).to_policy()
        self._policy_of_repo[repo.lower()] = policy
        return policy

    def __call__(self, quest_id: str) -> Policy:
        repo = self._repo_of.get(quest_id)
        policy = self._policy_of_repo.get(repo.lower()) if repo else None
        if policy is None:
            log.warning("no prepared policy for quest %s; stepping it under the default policy",
                        quest_id)
            return Policy()
        return policy
