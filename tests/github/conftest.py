"""Fixtures: the fake GitHub with one repository, a real Redis and an ``AdapterContext``."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass

import aiohttp
import pytest
import redis.asyncio

from bot.adapters import AdapterContext
from bot.core import Effect, EffectType
from bot.github.client import GitHubClients
from bot.github.effects import GitHubEffects
from bot.github.forge import Forges
from bot.journal import Journal
from bot.settings.schema import Settings
from bot.tools.scenarios import JournalBuilder
from tests.fakegithub import FakeGitHub

REPO = "octo/demo"


class StaticSettings:
    def __init__(self, settings: Settings) -> None:
        self.value = settings

    async def settings(self, repo: str) -> Settings:
        return self.value


@dataclass
class World:
    fake: FakeGitHub
    ctx: AdapterContext
    effects: GitHubEffects
    redis: redis.asyncio.Redis
    clients: GitHubClients

    @property
    def main_sha(self) -> str:
        return self.fake.repo(REPO).refs["refs/heads/main"]

    async def push_quest(self, quest_id: str = "q-1", content: str = "x = 2\n") -> str:
        commit = await self.fake.push(REPO, f"quest/{quest_id}", {"app.py": content},
                                      user="questbot[bot]")
        return commit.sha

    async def record(self, builder: JournalBuilder) -> None:
        """Apply every event the builder made to the real journal."""
        for event in builder.events:
            await self.ctx.journal.apply(event, builder.policy)

    def calls(self, operation: str) -> int:
        return len([c for c in self.fake.calls(operation) if c.status < 300])


def last(builder: JournalBuilder, type_: EffectType) -> Effect:
    return [e for e in builder.effects if e.type is type_][-1]


@pytest.fixture
async def fake() -> AsyncIterator[FakeGitHub]:
    async with FakeGitHub() as server:
        server.create_repository(REPO, {"README.md": "hello\n", "app.py": "x = 1\n"})
        server.set_permission(REPO, "alice", "write")
        yield server
        server.assert_clean()


@pytest.fixture
async def world(fake: FakeGitHub, redis_async: redis.asyncio.Redis) -> AsyncIterator[World]:
    async with aiohttp.ClientSession() as session:
        clients = GitHubClients(session, redis_async, app_id=fake.world.app_id,
                                private_key=fake.keys.private_pem, base_url=fake.url)
        await clients.remember_installation(REPO, fake.repo(REPO).installation_id)
        forges = Forges(clients)
        ctx = AdapterContext(journal=Journal(redis_async), hosts=forges.git_host,
                             settings=StaticSettings(Settings(reviewers=("alice", "octo"))))
        yield World(fake, ctx, GitHubEffects(ctx, forges), redis_async, clients)
