"""The policy book holds the repositories and policies of the quests moving now, not of every
quest and repository a worker ever served (the soak, ``docs/performance.md``): a worker's
memory must not grow with the quests that ended, nor with repositories that went quiet."""

from __future__ import annotations

import pytest
import redis.asyncio

from bot.core import Policy
from bot.journal import Journal
from bot.quests.policybook import ForeignQuest, PolicyBook
from bot.settings.repository.schema import Settings
from questbot_testing.journals import JournalBuilder
from tests.journal.conftest import POLICY


class EverySettings:
    """Every repository's settings file: the defaults, but a smaller attempt budget."""

    def __init__(self) -> None:
        self.read: list[str] = []

    async def settings(self, repo: str) -> Settings:
        self.read.append(repo)
        return Settings.model_validate({"max_attempts": 2})


async def test_the_book_lets_quiet_quests_and_repositories_go(
        redis_async: redis.asyncio.Redis) -> None:
    journal = Journal(redis_async, shards=4)
    now = [0.0]
    settings = EverySettings()
    book = PolicyBook(settings, journal, held_s=300.0, timer=lambda: now[0])
    for n in range(40):  # a repository each, as the soak makes
        quest = JournalBuilder(f"q-{n}", repo=f"owner/repo-{n}").sense().to_ready()
        await journal.apply_many(quest.events, POLICY)
        assert (await book.prepare(f"q-{n}")).max_attempts == 2
        now[0] += 1.0
    assert book.held() == (40, 40)
    assert book("q-39").max_attempts == 2  # prepared: its repository's policy
    now[0] = 39.0 + 299.5  # q-39 was prepared last, at 39 s
    assert book.held() == (1, 1)
    now[0] += 1.0
    assert book.held() == (0, 0)
    # a quest let go is prepared again from its snapshot: its own repository, still guarded
    with pytest.raises(ForeignQuest):
        await book.prepare("q-3", "owner/repo-4")
    assert (await book.prepare("q-3", "OWNER/repo-3")).max_attempts == 2
    assert book("q-3") != Policy() and book.held() == (1, 1)
