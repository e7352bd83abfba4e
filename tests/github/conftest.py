"""Fixtures: the fake GitHub with one repository, a real Redis and an ``AdapterContext``."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import aiohttp
import pytest
import redis.asyncio

from bot.adapters import AdapterContext
from bot.core import Effect, EffectType
from bot.github.client import GitHubClients
from bot.github.forge import Forges
from bot.journal import Journal
from bot.settings.repository.schema import Settings
from bot.worker.github_effects import GitHubEffects
from questbot_testing.fakegithub import FakeGitHub
from questbot_testing.journals import JournalBuilder

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


class Died(Exception):
    """The worker died right after GitHub did a write: the write happened, its answer was
    never read and nothing after it ran."""


def dies_after(monkeypatch: pytest.MonkeyPatch, owner: type, name: str, *,
               times: int = 1) -> list[Any]:
    """Make ``owner.name`` (an async method) do its real work and then raise ``Died``, the
    first ``times`` calls; returns what those calls had made, for the test to look at."""
    real = getattr(owner, name)
    made: list[Any] = []

    async def then_die(self: object, *args: Any, **kwargs: Any) -> Any:
        result = await real(self, *args, **kwargs)
        if len(made) < times:
            made.append(result)
            raise Died(f"the worker died right after {owner.__name__}.{name}")
        return result

    monkeypatch.setattr(owner, name, then_die)
    return made


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
                             settings=StaticSettings(Settings(reviewers=("alice", "octo"))),
                             app=await clients.identity())
        yield World(fake, ctx, GitHubEffects(ctx, forges), redis_async, clients)


def meet_at(monkeypatch: pytest.MonkeyPatch, owner: type, name: str, *,
            within: float = 0.3) -> list[object]:
    """Make each call of ``owner.name`` (an async method) wait, up to ``within`` seconds, for
    another call of it to arrive before doing its work: two paths that both decided to create
    an object meet at the create, however the event loop would have ordered them. A path that
    comes alone (the other still waits for a lease) goes on after ``within``. Returns the
    callers' ``self``, one per call."""
    real = getattr(owner, name)
    callers: list[object] = []
    met = asyncio.Event()

    async def meet(self: object, *args: Any, **kwargs: Any) -> Any:
        callers.append(self)
        if len(callers) >= 2:
            met.set()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(met.wait(), within)
        return await real(self, *args, **kwargs)

    monkeypatch.setattr(owner, name, meet)
    return callers
