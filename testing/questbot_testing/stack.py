"""questbot as it runs in production, on loopback: the real web process and worker, a real
Redis, and the fake GitHub sending signed webhooks. Shared by the end-to-end tests and
``scripts/demo``.

Time is driven, not waited for: ``settle()`` runs the worker until nothing is left to do, and
``advance(minutes)`` moves the worker's clock so a watch window can end in a test.
"""

from __future__ import annotations

import asyncio
import socket
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from aiohttp import web

from bot.agent.model import ModelEndpoint
from bot.agent.scripted import ScriptedSpec
from bot.core import Quest
from bot.github.ratelimit import RateLimits
from bot.journal.pacing import Pace
from bot.journal.wire import RedisClient, plain_client
from bot.observe.metrics import Metrics
from bot.runner.inbound import Inbound
from bot.web.app import make_app
from bot.worker.assembly import Runtime, start_runtime
from questbot_testing import PROJECT
from questbot_testing.fakegithub import FakeGitHub
from questbot_testing.fakegithub.manifest import load_manifest, register

SECRET = "demo-webhook-secret"
MANIFEST = PROJECT / "app.yml"


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
class PaceTime:
    """GitHub pacing's time in tests: real time plus what pacing slept, which costs nothing.
    The fake GitHub counts its secondary limits on the same clock, so a flow is paced with
    GitHub's real figures, held to GitHub's real limits, and waits for neither."""

    skipped: float = 0.0

    def wall(self) -> float:
        return time.time() + self.skipped

    async def sleep(self, seconds: float) -> None:
        self.skipped += max(0.0, seconds)
        await asyncio.sleep(0)


@dataclass
class Stack:
    redis_url: str
    scripted_specs: Mapping[str, ScriptedSpec] | None = None
    model: ModelEndpoint | None = None
    """The model agent's endpoint (``questbot_testing.modelserver`` in the demo); ``None``: no
    model."""
    limits: RateLimits = field(default_factory=RateLimits)
    """GitHub pacing as in production (``bot.journal.pacing``: a burst, then a write a
    second, shared through Redis); ``virtual_pacing()`` keeps the figures and skips the
    waits."""
    pace_time: PaceTime | None = None
    """When pacing's waits are skipped, their time: the fake GitHub's clock too."""
    fake: FakeGitHub = field(init=False)
    runtime: Runtime = field(init=False)
    web_runner: web.AppRunner = field(init=False)
    web_client: RedisClient = field(init=False)
    metrics: Metrics = field(default_factory=Metrics)
    clock: Clock = field(default_factory=Clock)
    app_slug: str = "questbot"
    """The App's slug on the fake GitHub: questbot learns it from ``GET /app``."""
    probe_model: bool = False
    """Ask the model endpoint what it can do at start, as ``python -m bot worker`` does
    (``bot.worker.model_start``): the model server must then hold the probe's conversations."""

    async def start(self) -> Stack:
        port = free_port()
        self.fake = FakeGitHub(webhook_url=f"http://127.0.0.1:{port}/webhook",
                               webhook_secret=SECRET, app_slug=self.app_slug,
                               clock=self.pace_time.wall if self.pace_time else time.time)
        register(self.fake.world, load_manifest(MANIFEST))  # the App as app.yml registers it
        await self.fake.start()
        self.web_client = plain_client(self.redis_url)
        app = make_app(secret=SECRET, inbound=Inbound(self.web_client, durable=False),
                       redis=self.web_client, metrics=self.metrics)
        self.web_runner = web.AppRunner(app, access_log=None)
        await self.web_runner.setup()
        await web.TCPSite(self.web_runner, "127.0.0.1", port).start()
        self.runtime = await start_runtime(
            redis_url=self.redis_url, github_api_url=self.fake.url,
            app_id=self.fake.world.app_id, private_key=self.fake.keys.private_pem,
            durable=False, scripted_specs=self.scripted_specs, model=self.model,
            poll_seconds=0.05, limits=self.limits, probe_model=self.probe_model)
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
        """The exchanges of one REST operation, the GraphQL mutations that stand for it
        among them (``FakeGitHub.as_rest``): questbot batches a transition's edits."""
        return self.fake.as_rest(operation_id)


def virtual_pacing() -> tuple[RateLimits, PaceTime]:
    """GitHub's pacing figures on a clock whose waits cost nothing (``PaceTime``); give both
    to the ``Stack``."""
    pace_time = PaceTime()
    return RateLimits(wall=pace_time.wall, sleeper=pace_time.sleep), pace_time


def unpaced() -> RateLimits:
    """No pacing at all, for a second runtime beside a stack's (its writes are few)."""
    return RateLimits(pace=Pace(spacing=0.0, hourly_spacing=0.0))
