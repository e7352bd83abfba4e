"""Connections that come back: the worker's loops wait out a Redis that is away, loading its
AOF or emptied, log that once, count the reconnect, and say so on ``/healthz`` meanwhile."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterator

import pytest
import redis.asyncio
import redis.exceptions
from aiohttp.test_utils import TestClient, TestServer

from bot.core import EffectType
from bot.github.ratelimit import RateLimits
from bot.journal import Journal
from bot.observe.metrics import Metrics
from bot.runner import Adapters, EffectRunner, Leases, Outage, Timers
from bot.runner.inbound import Inbound, Stored
from bot.worker.assembly import redis_client
from bot.worker.http import make_worker_app
from questbot_testing.journals import EPOCH, JournalBuilder
from questbot_testing.redis_server import RedisServer
from tests.journal.conftest import POLICY, Recorder
from tests.web.test_health_metrics import samples
from tests.worker.conftest import until

QUICK = Leases(lease_s=0.5, heartbeat_s=0.1, claim_idle_s=0.6)


@pytest.fixture
def recorder() -> Recorder:
    return Recorder()


@pytest.fixture
def server() -> Iterator[RedisServer]:
    s = RedisServer(appendonly=True)
    s.start()
    try:
        yield s
    finally:
        s.cleanup()


async def test_a_loop_waits_out_every_kind_of_absence_and_says_so_once(
        caplog: pytest.LogCaptureFixture) -> None:
    outage = Outage(base_s=0.001, cap_s=0.002)
    stop = asyncio.Event()
    errors: list[Exception] = [
        redis.exceptions.ConnectionError("Error 111 connecting to 127.0.0.1:6379"),
        redis.exceptions.BusyLoadingError("Redis is loading the dataset in memory"),
        redis.exceptions.TimeoutError("Timeout reading from socket"),
        ConnectionResetError(104, "Connection reset by peer"),
    ]
    seen: list[bool] = []

    async def step() -> None:
        seen.append(outage.away)
        if errors:
            raise errors.pop(0)
        if len(seen) == 8:
            stop.set()

    with caplog.at_level(logging.INFO, logger="bot.runner.outage"):
        await asyncio.wait_for(outage.guard("inbound", step, stop), timeout=5)
    assert seen[:5] == [False, True, True, True, True] and not outage.away
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 2, warnings  # it went away, and it came back
    assert "inbound: redis cannot be reached" in warnings[0]
    assert "redis is back" in warnings[1]
    assert outage.reconnects == 1


async def test_a_bug_in_a_step_is_logged_and_the_loop_goes_on(
        caplog: pytest.LogCaptureFixture) -> None:
    outage = Outage()
    outage.bug_cap_s = 0.001
    stop = asyncio.Event()
    calls: list[int] = []

    async def step() -> None:
        calls.append(1)
        if len(calls) == 1:
            raise KeyError("q")
        stop.set()

    with caplog.at_level(logging.ERROR, logger="bot.runner.outage"):
        await asyncio.wait_for(outage.guard("timers", step, stop), timeout=5)
    assert len(calls) == 2
    assert any(r.exc_info for r in caplog.records), "the bug is logged with its traceback"


async def test_a_redis_that_lost_its_data_gets_its_groups_back(
        redis_async: redis.asyncio.Redis, recorder: Recorder) -> None:
    journal = Journal(redis_async, shards=4)
    runner = EffectRunner(journal, recorder.adapters(), POLICY, leases=QUICK)
    stop = asyncio.Event()
    loop = asyncio.create_task(runner.run(stop, block_ms=50))
    first = JournalBuilder("q-1").sense()
    await journal.apply_many(first.events, POLICY)
    await until(lambda: _called(recorder, first), within=5)
    await redis_async.flushall()  # a Redis that came back without its data: no groups
    again = JournalBuilder("q-2").sense()
    await journal.apply_many(again.events, POLICY)
    await until(lambda: _called(recorder, again), within=5)
    stop.set()
    await loop
    # the inbound consumer too: the take-over of stale deliveries recreates its group
    inbound = Inbound(redis_async, durable=False)
    await inbound.ensure_group()
    await redis_async.flushall()
    assert await inbound.claim_stale("w1", min_idle_ms=0) == []
    assert isinstance(await inbound.store("d-1", "issues", b"{}", EPOCH), Stored)
    assert [d.delivery_id for d in await inbound.read("w1", block_ms=None)] == ["d-1"]


async def _called(recorder: Recorder, b: JournalBuilder) -> bool:
    return set(recorder.calls) >= {e.key for e in b.effects}


@pytest.mark.slow
async def test_while_redis_is_away_healthz_is_degraded_and_the_reconnect_is_counted(
        server: RedisServer, recorder: Recorder) -> None:
    metrics = Metrics()
    client = redis_client(server.url, metrics)
    journal = Journal(client, shards=4)
    outage = Outage()
    runner = EffectRunner(journal, Adapters(dict.fromkeys(EffectType, recorder)), POLICY,
                          leases=QUICK, outage=outage)
    timers = Timers(journal, POLICY, outage=outage)
    stop = asyncio.Event()
    loops = asyncio.gather(runner.run(stop, block_ms=100), timers.run(stop, interval_s=0.1))
    app = make_worker_app(metrics, journal, RateLimits(), outage)
    try:
        async with TestClient(TestServer(app)) as http:
            assert await (await http.get("/healthz")).json() == {"status": "ok", "redis": "ok"}
            server.kill()
            await until(lambda: _away(outage), within=15)
            away = await http.get("/healthz")
            body = await away.json()
            assert away.status == 503 and body["status"] == "degraded", body
            assert body["redis"] == "unreachable" and "since" in body
            server.start()
            await until(lambda: _back(outage), within=15)
            assert (await http.get("/healthz")).status == 200
            b = JournalBuilder("q-1").sense()
            await journal.apply_many(b.events, POLICY)  # the loops carry on
            await until(lambda: _called(recorder, b), within=10)
            text = (await (await http.get("/metrics")).text())
            assert outage.reconnects == 1
            reconnects = samples(text)[("questbot_redis_reconnects_total",
                                        (("process", "worker"),))]
            assert reconnects >= 1
    finally:
        stop.set()
        await loops
        await client.aclose()


async def _away(outage: Outage) -> bool:
    return outage.away


async def _back(outage: Outage) -> bool:
    return not outage.away
