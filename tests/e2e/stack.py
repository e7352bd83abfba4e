"""questbot as it runs in production, on loopback: the real web process and worker, a real
Redis, and the fake GitHub sending signed webhooks. Shared by the end-to-end tests and
``scripts/demo``.

Time is driven, not waited for: ``settle()`` runs the worker until nothing is left to do, and
``advance(minutes)`` moves the worker's clock so a watch window can end in a test.
"""

from __future__ import annotations

import socket
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import redis.asyncio
from aiohttp import web

from bot.agent.model import ModelEndpoint
from bot.agent.scripted import ScriptedSpec
from bot.core import Quest
from bot.github.ratelimit import RateLimits
from bot.journal.inbound import Inbound
from bot.observe.metrics import Metrics
from bot.web.app import make_app
from bot.worker.assembly import Runtime, start_runtime
from tests.fakegithub import FakeGitHub

SECRET = "demo-webhook-secret"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class Clock:
    """The worker's clock: real time plus whatever the scenario has skipped ahead."""

    skipped: timedelta = field(default_factory=timedelta)

    def __call__(self) -> datetime:
        return datetime.now(UTC) + self.skipped


@dataclass
class Stack:
    redis_url: str
    scripted_specs: Mapping[str, ScriptedSpec] | None = None
    model: ModelEndpoint | None = None
    """The model agent's endpoint (``tests.modelserver`` in the demo); ``None``: no model."""
    limits: RateLimits = field(default_factory=RateLimits)
    """GitHub pacing as in production (80 writes a minute per installation after a burst of
    20); tests that are not about pacing pass a faster one."""
    fake: FakeGitHub = field(init=False)
    runtime: Runtime = field(init=False)
    web_runner: web.AppRunner = field(init=False)
    web_client: redis.asyncio.Redis = field(init=False)
    metrics: Metrics = field(default_factory=Metrics)
    clock: Clock = field(default_factory=Clock)

    async def start(self) -> Stack:
        port = free_port()
        self.fake = FakeGitHub(webhook_url=f"http://127.0.0.1:{port}/webhook",
                               webhook_secret=SECRET)
        await self.fake.start()
        self.web_client = redis.asyncio.Redis.from_url(self.redis_url)
        app = make_app(secret=SECRET, inbound=Inbound(self.web_client, durable=False),
                       redis=self.web_client, metrics=self.metrics)
        self.web_runner = web.AppRunner(app, access_log=None)
        await self.web_runner.setup()
        await web.TCPSite(self.web_runner, "127.0.0.1", port).start()
        self.runtime = await start_runtime(
            redis_url=self.redis_url, github_api_url=self.fake.url,
            app_id=self.fake.world.app_id, private_key=self.fake.keys.private_pem,
            durable=False, scripted_specs=self.scripted_specs, model=self.model,
            poll_seconds=0.05, limits=self.limits)
        worker = self.runtime.worker
        worker.journal.clock = self.clock
        worker.timers.clock = self.clock
        worker.intake.ctx.clock = self.clock
        return self

    async def stop(self) -> None:
        await self.runtime.close()
        await self.web_runner.cleanup()
        await self.web_client.aclose()
        await self.fake.stop()

    async def settle(self) -> None:
        await self.runtime.worker.settle()

    async def advance(self, minutes: float) -> None:
        self.clock.skipped += timedelta(minutes=minutes)
        await self.settle()

    async def quest(self, quest_id: str) -> Quest:
        _v, quest = await self.runtime.worker.journal.snapshot(quest_id)
        assert quest is not None, f"no quest {quest_id}"
        return quest

    async def quests(self, repo: str) -> list[Quest]:
        found = []
        for qid in sorted(await self.runtime.worker.intake.indexes.quests_of_repo(repo)):
            found.append(await self.quest(qid))
        return found

    def calls(self, operation_id: str) -> list[Any]:
        return self.fake.calls(operation_id)


def unpaced() -> RateLimits:
    """For tests that are not about pacing: GitHub's secondary limit would only slow them."""
    return RateLimits(per_minute=60_000, burst=1_000)
