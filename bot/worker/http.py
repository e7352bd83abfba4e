"""The worker's own small HTTP endpoint: ``/metrics`` and ``/healthz``.

Prometheus scrapes both processes: the web process counts deliveries; the worker knows the
quests, the effects it delivers and the rate limit GitHub reports. Quest counts are read at
scrape time from the live-quest indexes (a repository holds at most ``max_live_quests`` working
quests, so this stays small), so they are right whichever worker applied what.
"""

from __future__ import annotations

from collections import Counter

import redis.asyncio
import redis.exceptions
from aiohttp import web

from bot.github.ratelimit import RateLimits
from bot.journal import Journal
from bot.observe.metrics import Metrics

_METRICS = web.AppKey("metrics", Metrics)
_JOURNAL = web.AppKey("journal", Journal)
_LIMITS = web.AppKey("limits", RateLimits)


async def live_counts(journal: Journal) -> dict[str, int]:
    """Live quests by state, across every repository questbot has seen."""
    client: redis.asyncio.Redis = journal.client
    counts: Counter[str] = Counter()
    async for key in client.scan_iter(match="repo:{*}:live", count=500):
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
    try:
        await request.app[_JOURNAL].client.ping()
    except (redis.exceptions.RedisError, OSError) as exc:
        return web.json_response({"status": "redis unavailable", "error": str(exc)},
                                 status=503)
    return web.json_response({"status": "ok"})


def make_worker_app(metrics: Metrics, journal: Journal, limits: RateLimits) -> web.Application:
    app = web.Application()
    app[_METRICS] = metrics
    app[_JOURNAL] = journal
    app[_LIMITS] = limits
    app.router.add_get("/metrics", metrics_view)
    app.router.add_get("/healthz", healthz)
    return app
