"""Fixtures for the agent tests: real git repositories in a temporary directory, and for agent
runs the fake GitHub holding the sample repository, real Redis and real git.

``Quests`` drives one quest through the real journal: it applies events (the adapters'
outcomes and people's decisions) with ``Journal.apply`` and hands back the effects the core
asked for, so each test goes effect → adapter → events → journal like the worker does.
"""

from __future__ import annotations

import itertools
import subprocess
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import aiohttp
import pytest
import redis.asyncio

from bot.adapters import AdapterContext
from bot.agent import sandbox
from bot.core import EVENT_ADAPTER, Effect, EffectType, Event, Policy, Quest
from bot.github.client import GitHubClients
from bot.github.forge import Forges
from bot.journal import Journal
from bot.settings.repository.schema import Settings
from questbot_testing.fakegithub import FakeGitHub
from questbot_testing.sample import sample_files, sample_spec


def git(repo: Path, *args: str) -> str:
    """Run git in ``repo`` with a fixed identity; return its stdout."""
    completed = subprocess.run(
        ["git", "-c", "user.name=questbot tests", "-c", "user.email=tests@questbot.invalid",
         "-c", "commit.gpgsign=false", "-c", "init.defaultBranch=main", *args],
        cwd=repo, check=True, capture_output=True, text=True,
    )  # fmt: skip
    return completed.stdout.strip()


APP_PY = '''\
def add(a, b):
    """Add two numbers."""
    return a +  b


def divide(a, b):
    return a / b
'''


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    """A committed git checkout with a little code, a secret outside it and two symlinks."""
    outside = tmp_path / "outside.txt"
    outside.write_text("TOP SECRET outside the checkout\n")
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    (repo / "src").mkdir()
    (repo / "src" / "app.py").write_text(APP_PY)
    (repo / "README.md").write_text("# demo\n\nA demo repository.\n")
    (repo / "link_out").symlink_to(outside)
    (repo / "link_in").symlink_to(repo / "src" / "app.py")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "initial")
    return repo


REPO = "octo-org/sample-repo"
POLICY = Policy()
PY = sandbox.python()  # the interpreter, as the sandbox shows it
EPOCH = datetime(2026, 3, 1, tzinfo=UTC)


def settings_for(**agent: Any) -> Settings:
    return Settings.model_validate({
        "proof": {"commands": [[PY, "-m", "unittest", "-q"]]},
        "agent": agent or {"kind": "scripted"},
    })


@dataclass
class StaticSettings:
    value: Settings = field(default_factory=settings_for)

    async def settings(self, repo: str) -> Settings:
        return self.value


@pytest.fixture
async def fake() -> AsyncIterator[FakeGitHub]:
    async with FakeGitHub() as server:
        server.create_repository(REPO, dict(sample_files()))
        yield server
        server.assert_clean()


@pytest.fixture
async def clients(fake: FakeGitHub,
                  redis_async: redis.asyncio.Redis) -> AsyncIterator[GitHubClients]:
    async with aiohttp.ClientSession() as session:
        made = GitHubClients(session, redis_async, app_id=fake.world.app_id,
                             private_key=fake.keys.private_pem, base_url=fake.url)
        await made.remember_installation(REPO, fake.repo(REPO).installation_id)
        yield made


@pytest.fixture
def journal(redis_async: redis.asyncio.Redis) -> Journal:
    return Journal(redis_async, shards=4)


@pytest.fixture
def settings() -> StaticSettings:
    return StaticSettings()


@pytest.fixture
async def ctx(journal: Journal, clients: GitHubClients,
              settings: StaticSettings) -> AdapterContext:
    ticks = itertools.count()
    return AdapterContext(journal=journal, hosts=Forges(clients).git_host, settings=settings,
                          app=await clients.identity(),
                          clock=lambda: EPOCH + timedelta(seconds=next(ticks)))


@pytest.fixture
def spec() -> Any:
    return sample_spec(PY)


class Quests:
    """One quest in the real journal, stepped by events; remembers the effects it asked for."""

    def __init__(self, journal: Journal, quest_id: str = "q-1") -> None:
        self.journal = journal
        self.quest_id = quest_id
        self.effects: list[Effect] = []
        self.quest: Quest | None = None
        self._ids = itertools.count()

    def event(self, type_: str, **fields: Any) -> Event:
        n = next(self._ids)
        return EVENT_ADAPTER.validate_python({
            "type": type_, "id": f"{self.quest_id}-t{n}", "quest_id": self.quest_id,
            "at": EPOCH - timedelta(hours=1) + timedelta(seconds=n), **fields})

    async def apply(self, events: Sequence[Event] | None) -> list[Effect]:
        new: list[Effect] = []
        for event in events or ():
            applied = await self.journal.apply(event, POLICY)
            self.quest = applied.quest
            new.extend(applied.effects)
        self.effects.extend(new)
        return new

    async def add(self, type_: str, **fields: Any) -> list[Effect]:
        return await self.apply([self.event(type_, **fields)])

    async def sense(self, base: str) -> Effect:
        await self.add("signal_sensed", repo=REPO, fingerprint="fp-pager", kind="check_failure",
                       severity="high", title="tests fail on main", source="check_run:7",
                       base=base)
        return only(await self.add("triaged", route="auto_fix"), EffectType.START_AGENT)

    async def decide(self, checkpoint: str, verdict: str = "approve",
                     **fields: Any) -> list[Effect]:
        return await self.add("checkpoint_decided", checkpoint=checkpoint, verdict=verdict,
                              actor="maintainer", **fields)

    def now(self) -> Quest:
        assert self.quest is not None
        return self.quest


def only(effects: Sequence[Effect], type_: EffectType) -> Effect:
    found = [e for e in effects if e.type is type_]
    assert len(found) == 1, f"expected one {type_.value} in {[e.type.value for e in effects]}"
    return found[0]


@pytest.fixture
def quests(journal: Journal) -> Quests:
    return Quests(journal)


@pytest.fixture
def main_sha(fake: FakeGitHub) -> str:
    sha = fake.repo(REPO).branch_sha("main")
    assert sha is not None
    return sha
