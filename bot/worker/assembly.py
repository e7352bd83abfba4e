"""The worker's runtime: connections, clients and plugins, built once from explicit parts.

``python -m bot worker`` builds it from the environment (``bot.config``); the demo and the
end-to-end tests build it against the fake GitHub with the same code, so what they exercise is
what runs in production.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
from collections.abc import Mapping
from dataclasses import dataclass

import aiohttp
import redis.asyncio
from aiohttp import web
from pydantic import SecretStr

from bot.adapters import AdapterContext
from bot.agent.evidence_store import EvidenceStore
from bot.agent.model import ModelEndpoint
from bot.agent.runs import agent_adapters
from bot.agent.scripted import ScriptedSpec
from bot.config import Config
from bot.core import EffectType
from bot.github.client import GitHubClients
from bot.github.effects import GitHubEffects
from bot.github.forge import Forges
from bot.github.ratelimit import RateLimits
from bot.github.repo_settings import RepoSettings
from bot.journal import Leases
from bot.journal.outbox import Adapter
from bot.journal.wire import connect
from bot.observe.logs import configure_logging
from bot.observe.metrics import Metrics
from bot.worker.http import make_worker_app
from bot.worker.process import Plugin, Sync, Worker, build_worker

log = logging.getLogger(__name__)


@dataclass
class Runtime:
    redis: redis.asyncio.Redis
    session: aiohttp.ClientSession
    clients: GitHubClients
    settings: RepoSettings
    worker: Worker
    metrics: Metrics

    async def close(self) -> None:
        await self.session.close()
        await self.redis.aclose()


def redis_client(url: str, metrics: Metrics | None = None) -> redis.asyncio.Redis:
    """The worker's Redis client (``bot.journal.wire.connect``): a command that meets a closed
    connection — a Redis that restarted, failed over or is still loading its AOF — is sent
    again on a new one with exponential back-off, for about 2.5 s, before its error reaches the
    loop that sent it, which then waits for Redis itself (``bot.journal.outage``).

    Resending is safe for what the worker sends: the scripts answer a second copy of
    themselves as a duplicate, the lease script finds its own token, and doorbells and index
    writes are harmless twice. ``socket_timeout`` exceeds the longest blocking read (1 s)."""
    on_error, on_reconnect = metrics.redis_hooks("worker") if metrics else (None, None)
    return connect(url, socket_timeout=5, health_check_interval=10, on_error=on_error,
                   on_reconnect=on_reconnect)


def github_plugin(forges: Forges, *, draft_pulls: bool) -> Plugin:
    """GitHub's adapters and projection; the projection shows what the agent and the proof
    established, read from the ``EvidenceStore`` the agent adapters write to."""

    def plug(ctx: AdapterContext) -> tuple[dict[EffectType, Adapter], Sync | None]:
        evidence = EvidenceStore(ctx.journal.client)
        effects = GitHubEffects(ctx, forges, draft_pulls=draft_pulls, evidence=evidence.lookup)
        return effects.adapters(), effects.sync

    return plug


def agent_plugin(scripted_specs: Mapping[str, ScriptedSpec] | None, poll_seconds: float,
                 model: ModelEndpoint | None = None) -> Plugin:
    def plug(ctx: AdapterContext) -> tuple[dict[EffectType, Adapter], Sync | None]:
        return agent_adapters(ctx, scripted_specs=scripted_specs, model=model,
                              poll_seconds=poll_seconds), None

    return plug


async def start_runtime(*, redis_url: str, github_api_url: str, app_id: str | int,
                        private_key: str | bytes | SecretStr, durable: bool = True,
                        scripted_specs: Mapping[str, ScriptedSpec] | None = None,
                        model: ModelEndpoint | None = None,
                        draft_pulls: bool = True, poll_seconds: float = 2.0,
                        leases: Leases | None = None,
                        limits: RateLimits | None = None) -> Runtime:
    """``draft_pulls``: quest PRs open as drafts and are marked ready for review at
    checkpoint C (``bot.github.projection``). ``leases`` default to ``Leases()``
    (``bot.journal.lease`` says why those figures). ``model`` is the model agent's endpoint
    (``None``: quests that would use it park saying what to set); ``scripted_specs`` is the
    test tool that answers in its place for the repositories it names."""
    metrics = Metrics()
    client = redis_client(redis_url, metrics)
    session = aiohttp.ClientSession()
    clients = GitHubClients(session, client, app_id=app_id, private_key=private_key,
                            base_url=github_api_url, limits=limits)
    settings = RepoSettings(clients, client)
    forges = Forges(clients)
    worker = build_worker(client, forges, settings,
                          [github_plugin(forges, draft_pulls=draft_pulls),
                           agent_plugin(scripted_specs, poll_seconds, model)],
                          durable=durable, leases=leases, metrics=metrics)
    return Runtime(client, session, clients, settings, worker, metrics)


async def _serve(config: Config) -> None:
    runtime = await start_runtime(
        redis_url=config.redis_url, github_api_url=config.github_api_url,
        app_id=config.github_app_id, private_key=config.github_private_key,
        durable=config.durable_acks, model=config.model_endpoint)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError):
            loop.add_signal_handler(sig, stop.set)
    site_runner = web.AppRunner(make_worker_app(runtime.metrics, runtime.worker.journal,
                                                runtime.clients.limits, runtime.worker.outage),
                                access_log=None)
    await site_runner.setup()
    await web.TCPSite(site_runner, "0.0.0.0", config.metrics_port).start()  # noqa: S104
    log.info("questbot worker started (%s); /metrics and /healthz on port %d",
             runtime.worker.consumer, config.metrics_port)
    endpoint = config.model_endpoint
    if endpoint is None:
        log.warning("no model is configured (QUESTBOT_MODEL is not set): quests whose "
                    "repository uses the model agent park and say what to set")
    else:
        log.info("the model agent uses %s over the %s protocol at %s", endpoint.model,
                 endpoint.wire.value, endpoint.base_url)
    try:
        await runtime.worker.run(stop)
    finally:
        await site_runner.cleanup()
        await runtime.close()


def run_worker(config: Config) -> None:
    """``python -m bot worker``: deliveries, effects, timers and projections until SIGTERM."""
    model_key = config.model_api_key.get_secret_value() if config.model_api_key else None
    configure_logging(secrets=[config.github_webhook_secret.get_secret_value(),
                               config.github_private_key.get_secret_value(),
                               *([model_key] if model_key else [])])
    asyncio.run(_serve(config))
