"""The web process as ``python -m bot serve`` builds it, while its redis-server is killed and
restarted: 503 only while Redis is away, never once it is back; ``/healthz`` says which."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Iterator

import pytest
import redis.asyncio

from bot.runner.inbound import STREAM
from bot.settings.process import load_config
from bot.web.app import app_from_config
from questbot_testing.fakegithub.keys import shared_key_pair
from questbot_testing.redis_server import RedisServer
from tests.web.conftest import SECRET, Client, delivery, send
from tests.web.test_health_metrics import samples

MakeClient = Callable[..., Awaitable[Client]]


@pytest.fixture
def server() -> Iterator[RedisServer]:
    s = RedisServer(appendonly=True)
    s.start()
    try:
        yield s
    finally:
        s.cleanup()


@pytest.fixture
async def web(aiohttp_client: MakeClient, server: RedisServer) -> Client:
    config = load_config({"GITHUB_APP_ID": "12345",
                          "GITHUB_PRIVATE_KEY": shared_key_pair().private_pem,
                          "GITHUB_WEBHOOK_SECRET": SECRET, "REDIS_URL": server.url})
    return await aiohttp_client(app_from_config(config))


async def stored(server: RedisServer) -> int:
    client = redis.asyncio.Redis.from_url(server.url)
    try:
        return int(await client.xlen(STREAM))
    finally:
        await client.aclose()


async def test_the_first_delivery_after_redis_restarts_is_stored_not_refused(
    web: Client, server: RedisServer,
) -> None:
    assert (await send(web, delivery(delivery_id="before"))).status == 202
    server.restart()  # SIGKILL, then up again on its AOF: the pooled connection is dead
    response = await send(web, delivery(delivery_id="after"))
    assert response.status == 202, await response.text()
    assert await stored(server) == 2


async def test_while_redis_is_away_a_delivery_is_503_in_githubs_time_then_stored_when_redelivered(
    web: Client, server: RedisServer,
) -> None:
    assert (await send(web, delivery(delivery_id="warm"))).status == 202
    server.kill()
    d = delivery(delivery_id="during")
    started = time.monotonic()
    response = await send(web, d)
    assert response.status == 503
    assert (await response.json())["status"] == "unavailable"
    assert time.monotonic() - started < 10, "GitHub gives up on an answer after 10 s"
    server.start()
    assert (await send(web, d)).status == 202  # the redelivery GitHub offers for a 503
    assert (await send(web, d)).status == 200
    assert await stored(server) == 2


async def test_no_delivery_is_refused_once_redis_is_back_even_many_at_once(
    web: Client, server: RedisServer,
) -> None:
    """Every pooled connection dies with the server: each must be replaced, none may fail a
    delivery; and the group commit keeps going after batches that failed while it was away."""
    warm = await asyncio.gather(*(send(web, delivery(delivery_id=f"warm-{n}"))
                                  for n in range(20)))
    assert [r.status for r in warm] == [202] * 20
    server.restart()
    after = await asyncio.gather(*(send(web, delivery(delivery_id=f"up-{n}")) for n in range(30)))
    assert [r.status for r in after] == [202] * 30
    server.kill()
    during = await asyncio.gather(*(send(web, delivery(delivery_id=f"down-{n}"))
                                    for n in range(10)))
    assert {r.status for r in during} == {503}
    server.start()
    again = await asyncio.gather(*(send(web, delivery(delivery_id=f"back-{n}"))
                                   for n in range(10)))
    assert [r.status for r in again] == [202] * 10
    assert await stored(server) == 60


async def test_healthz_is_degraded_while_redis_is_away_and_ok_at_once_after(
    web: Client, server: RedisServer,
) -> None:
    first = await web.get("/healthz")
    assert first.status == 200
    assert await first.json() == {"status": "ok", "redis": "ok"}
    server.restart()
    assert (await web.get("/healthz")).status == 200  # the first PING on a dead connection
    server.kill()
    away = await web.get("/healthz")
    body = await away.json()
    assert away.status == 503
    assert body["redis"] == "unreachable"
    assert "redis did not answer" in body["detail"]
    server.start()
    back = await web.get("/healthz")  # the first probe after the restart, no warm-up
    assert back.status == 200
    assert (await back.json())["redis"] == "ok"


async def test_reconnects_are_counted(web: Client, server: RedisServer) -> None:
    def count(text: str, name: str) -> float:
        return samples(text).get((name, (("process", "web"),)), 0.0)

    assert (await send(web, delivery(delivery_id="one"))).status == 202
    text = await (await web.get("/metrics")).text()
    assert count(text, "questbot_redis_reconnects_total") == 0
    assert count(text, "questbot_redis_connection_errors_total") == 0
    server.restart()
    assert (await send(web, delivery(delivery_id="two"))).status == 202
    text = await (await web.get("/metrics")).text()
    assert count(text, "questbot_redis_reconnects_total") >= 1
    assert count(text, "questbot_redis_connection_errors_total") >= 1
