"""The worker's runtime: connections, clients and plugins, built once from explicit parts.

``python -m bot worker`` builds it from the environment (``bot.settings.process``); the demo and the
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
from datetime import UTC, datetime

import aiohttp
from aiohttp import web
from pydantic import SecretStr

from bot.adapters import AdapterContext, Plugin, Sync
from bot.agent import sandbox
from bot.agent.evidence_store import EvidenceStore
from bot.agent.model import ModelEndpoint
from bot.agent.model.endpoint import endpoint_from
from bot.agent.runs import agent_adapters
from bot.agent.scripted import ScriptedSpec
from bot.core import EffectType
from bot.github.auth import app_jwt, load_private_key
from bot.github.client import USER_AGENT, GitHubClients
from bot.github.forge import Forges
from bot.github.hook_deliveries import AppHooks
from bot.github.identity import wait_for_identity
from bot.github.ratelimit import PacedGitHubAPI, RateLimits
from bot.github.repo_settings import RepoSettings
from bot.journal.pacing import SharedSchedule
from bot.journal.wire import RedisClient, connect
from bot.lessons.runs import lessons
from bot.observe.logs import configure_logging
from bot.observe.metrics import Metrics
from bot.reflection.runs import model_runs
from bot.runner import Leases
from bot.runner.outbox import Adapter
from bot.settings.process import Config
from bot.worker import collector
from bot.worker.compaction_sweep import CompactionSweep
from bot.worker.github_effects import GitHubEffects
from bot.worker.http import make_worker_app
from bot.worker.model_start import load_model_libraries, probed, watched
from bot.worker.process import Worker, build_worker
from bot.worker.redelivery import Redeliverer, RedeliveryPolicy
from bot.worker.reviewing import reviewing

log = logging.getLogger(__name__)


@dataclass
class Runtime:
    redis: RedisClient
    session: aiohttp.ClientSession
    clients: GitHubClients
    settings: RepoSettings
    worker: Worker
    metrics: Metrics
    redelivery: Redeliverer | None = None
    """The redelivery reconciler, unless turned off (``QUESTBOT_REDELIVERY=false``)."""

    async def close(self) -> None:
        await self.session.close()
        await self.redis.aclose()


def redis_client(url: str, metrics: Metrics | None = None) -> RedisClient:
    """The worker's Redis client (``bot.journal.wire.connect``): a command that meets a closed
    connection — a Redis that restarted, failed over or is still loading its AOF — is sent
    again on a new one with exponential back-off, for about 2.5 s, before its error reaches the
    loop that sent it, which then waits for Redis itself (``bot.runner.outage``).

    Resending is safe for what the worker sends: the scripts answer a second copy of
    themselves as a duplicate, the lease script finds its own token, and doorbells and index
    writes are harmless twice. ``socket_timeout`` exceeds the longest blocking read (1 s)."""
    on_error, on_reconnect = metrics.redis_hooks("worker") if metrics else (None, None)
    return connect(url, socket_timeout=5, health_check_interval=10, on_error=on_error,
                   on_reconnect=on_reconnect)


def redeliverer(session: aiohttp.ClientSession, client: RedisClient, *,
                app_id: str | int, private_key: str | bytes | SecretStr, base_url: str,
                limits: RateLimits, metrics: Metrics, policy: RedeliveryPolicy,
                owner: str) -> Redeliverer:
    """The reconciler, reading GitHub's delivery log as the App (a JWT per request)."""
    key = load_private_key(private_key)
    gh = PacedGitHubAPI(session, USER_AGENT, limits=limits, base_url=base_url.rstrip("/"))
    hooks = AppHooks(gh, lambda: app_jwt(app_id, key, datetime.now(UTC)))
    return Redeliverer(hooks, client, policy=policy, metrics=metrics, owner=owner)


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
                        limits: RateLimits | None = None, shared_pacing: bool = True,
                        redelivery: RedeliveryPolicy | None = None,
                        app_slug: str | None = None,
                        identity_patience: float | None = None,
                        probe_model: bool = False) -> Runtime:
    """``draft_pulls``: quest PRs open as drafts and are marked ready for review at
    checkpoint C (``bot.views.projection``). ``leases`` default to ``Leases()``
    (``bot.runner.lease`` says why those figures). ``limits`` pace GitHub writes
    (``RateLimits()``: GitHub's figures); with ``shared_pacing`` their schedule is kept in
    Redis, so the installation's budget is shared by every worker rather than taken whole by
    each. ``redelivery``: run the redelivery reconciler with this policy (``None``: none).
    Waits until GitHub says who the App is (``GET /app``), and raises if it refuses the
    App's key; ``app_slug`` (``GITHUB_APP_SLUG``, which ``register`` writes) is only checked
    against that answer. ``identity_patience`` bounds that wait in seconds (``None``: the
    worker's, for ever; a command passes a bound and reports ``IdentityUnavailable``).
    ``model`` is the model agent's endpoint (``None``: quests that would use it park saying
    what to set); ``scripted_specs`` is the test tool that answers in its place for the
    repositories it names. ``probe_model``: ask the endpoint what it can do first and adapt
    to it (``bot.worker.model_start``)."""
    metrics = Metrics()
    if model is not None:
        log.info("loaded the model agent's libraries in %.1f s", load_model_libraries())
        model = watched(await probed(model) if probe_model else model, metrics)
    client = redis_client(redis_url, metrics)
    limits = limits or RateLimits()
    if shared_pacing:
        limits.schedule = SharedSchedule(client)
    session = aiohttp.ClientSession()
    clients = GitHubClients(session, client, app_id=app_id, private_key=private_key,
                            base_url=github_api_url, limits=limits)
    settings = RepoSettings(clients, client)
    forges = Forges(clients)
    try:
        app = await wait_for_identity(clients.identity, patience=identity_patience)
    except BaseException:
        await session.close()
        await client.aclose()
        raise
    log.info("questbot runs as the GitHub App %s (id %d, account %s)", app.slug, app.id,
             app.bot_login)
    worker = build_worker(client, forges, settings,
                          [reviewing(github_plugin(forges, draft_pulls=draft_pulls), model,
                                     metrics),
                           agent_plugin(scripted_specs, poll_seconds, model), lessons(model)],
                          app=app, durable=durable, leases=leases, metrics=metrics,
                          reflection_model=model_runs(model) if model is not None else None)
    if app_slug and app_slug != app.slug:
        log.warning("GITHUB_APP_SLUG is %r but GitHub says this App is %r; questbot goes by "
                    "GitHub's answer — correct or unset GITHUB_APP_SLUG", app_slug, app.slug)
    reconciler = None if redelivery is None else redeliverer(
        session, client, app_id=app_id, private_key=private_key, base_url=github_api_url,
        limits=clients.limits, metrics=metrics, policy=redelivery, owner=worker.consumer)
    return Runtime(client, session, clients, settings, worker, metrics, reconciler)


async def _serve(config: Config) -> None:
    runtime = await start_runtime(
        redis_url=config.redis_url, github_api_url=config.github_api_url,
        app_id=config.github_app_id, private_key=config.github_private_key,
        durable=config.durable_acks, redelivery=redelivery_policy(config),
        app_slug=config.github_app_slug, model=endpoint_from(config),
        probe_model=config.model_probe)
    if runtime.worker.restorable is not None:  # ``bot.repository.restorable``
        runtime.worker.restorable.days = config.restorable_days
        runtime.worker.restorable.check_s = config.restored_check_s
    if config.compact_after_hours:  # ended quests compacted (``bot.worker.compaction_sweep``)
        runtime.worker.compaction = CompactionSweep(
            runtime.redis, config.compact_after_hours * 3600.0, export_dir=config.export_dir,
            export_after_s=config.export_after_days * 86_400.0)
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
    endpoint = endpoint_from(config)
    if endpoint is None:
        log.warning("no model is configured (QUESTBOT_MODEL is not set): quests whose "
                    "repository uses the model agent park and say what to set")
    else:
        log.info("the model agent uses %s over the %s protocol at %s", endpoint.model,
                 endpoint.wire.value, endpoint.base_url)
    collector.settle()  # started: what start-up made is frozen (``bot.worker.collector``)
    loops = [runtime.worker.run(stop)]
    if runtime.redelivery is not None:
        loops.append(runtime.redelivery.run(stop, runtime.worker.outage))
        log.info("redelivery reconciler on: a pass every %d s over the last %d h, at most %d "
                 "redeliveries a pass", config.redelivery_interval_s, config.redelivery_hours,
                 config.redelivery_max)
    try:
        await asyncio.gather(*loops)
    finally:
        await site_runner.cleanup()
        await runtime.close()


def start_sandbox(config: Config) -> sandbox.SandboxStatus:
    """Install the sandbox policy ``config`` describes and say in the log how repository code
    will run: confined, refused (bubblewrap cannot run here), or unconfined by the operator's
    explicit ``QUESTBOT_SANDBOX=unsafe-off``. The worker starts either way — it still has
    GitHub's side of every quest to keep — but without a usable sandbox every proof, check and
    agent run fails with ``SandboxUnavailable`` instead of running."""
    return sandbox.announce(sandbox.install(config.sandbox_policy()), log)


def redelivery_policy(config: Config) -> RedeliveryPolicy | None:
    """The reconciler's policy from ``QUESTBOT_REDELIVERY*``; ``None`` when it is off."""
    if not config.redelivery:
        return None
    return RedeliveryPolicy(interval_s=config.redelivery_interval_s,
                            window_h=config.redelivery_hours, max_per_pass=config.redelivery_max)


def run_worker(config: Config) -> None:
    """``python -m bot worker``: deliveries, effects, timers and projections until SIGTERM."""
    model_key = config.model_api_key.get_secret_value() if config.model_api_key else None
    configure_logging(secrets=[config.github_webhook_secret.get_secret_value(),
                               config.github_private_key.get_secret_value(),
                               *([model_key] if model_key else [])])
    start_sandbox(config)
    asyncio.run(_serve(config))
