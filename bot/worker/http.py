"""The worker's own small HTTP endpoint: ``/metrics`` and ``/healthz``.

Prometheus scrapes both processes: the web process counts deliveries; the worker knows the
quests, the effects it delivers and the rate limit GitHub reports. Quest counts are read at
scrape time from the live-quest indexes (a repository holds at most ``max_live_quests`` working
quests, so this stays small), so they are right whichever worker applied what.

``/healthz`` answers within about a second whatever Redis does: 200 ``ok`` while Redis
answers a ``PING``, 503 ``degraded`` (with the error, and since when the worker's loops have
been waiting for it) while it does not. A degraded worker is not broken — its loops wait for
Redis and carry on when it is back — so restart it only if it stays degraded with Redis up.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from datetime import UTC, datetime

import redis.asyncio
import redis.exceptions
from aiohttp import web

from bot.github.ratelimit import RateLimits
from bot.journal import Journal
from bot.journal.keys import LIVE_PATTERN
from bot.journal.wire import RedisClient
from bot.observe.metrics import Metrics
from bot.runner import Outage
from bot.runner.outage import describe

_METRICS = web.AppKey("metrics", Metrics)
_JOURNAL = web.AppKey("journal", Journal)
_LIMITS = web.AppKey("limits", RateLimits)
_OUTAGE = web.AppKey("outage", Outage)
PING_TIMEOUT_S = 1.0


async def live_counts(journal: Journal) -> dict[str, int]:
    """Live quests by state, across every repository questbot has seen."""
    client: RedisClient = journal.client
    counts: Counter[str] = Counter()
    async for key in client.scan_iter(match=LIVE_PATTERN, count=500):
        for raw in await client.smembers(key):
            _v, quest = await journal.snapshot(raw.decode() if isinstance(raw, bytes) else raw)
            if quest is not None:
                counts[quest.state.value] += 1
    return dict(counts)


async def metrics_view(request: web.Request) -> web.Response:
    app = request.app
    metrics = app[_METRICS]
    metrics.set_quest_counts(await live_counts(app[_JOURNAL]))
    for installation, remaining in app[_LIMITS].remaining_by_installation.items():
        metrics.set_rate_limit(remaining, installation)
    return web.Response(body=metrics.render(),
                        headers={"Content-Type": "text/plain; version=0.0.4; charset=utf-8"})


async def healthz(request: web.Request) -> web.Response:
    outage = request.app[_OUTAGE]
    try:
        async with asyncio.timeout(PING_TIMEOUT_S):
            await request.app[_JOURNAL].client.ping()
    except (redis.exceptions.RedisError, OSError, TimeoutError) as exc:
        detail = describe(exc) if not isinstance(exc, TimeoutError) else (
            f"redis did not answer a PING within {PING_TIMEOUT_S:g} s")
        body = {"status": "degraded", "redis": "unreachable", "detail": detail}
        if outage.since is not None:
            body["since"] = datetime.fromtimestamp(outage.since, UTC).isoformat()
            body["last_error"] = outage.detail
        return web.json_response(body, status=503)
    return web.json_response({"status": "ok", "redis": "ok"})


def make_worker_app(metrics: Metrics, journal: Journal, limits: RateLimits,
                    outage: Outage | None = None) -> web.Application:
    """``outage`` is the worker's (``Worker.outage``), for when its loops lost Redis."""
    app = web.Application()
    app[_METRICS] = metrics
    app[_JOURNAL] = journal
    app[_LIMITS] = limits
    app[_OUTAGE] = outage or Outage()
    app.router.add_get("/metrics", metrics_view)
    app.router.add_get("/healthz", healthz)
    return app
