"""Fixtures for the web tests: the real app on the test Redis, behind aiohttp's test client."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import pytest
import redis.asyncio
from aiohttp import ClientResponse
from aiohttp.test_utils import TestClient

from bot.observe.metrics import Metrics
from bot.runner.inbound import STREAM, Inbound
from bot.web.app import make_app
from questbot_testing.fakegithub.webhooks import Delivery, build_delivery, build_payload

SECRET = "questbot-test-webhook-secret"
MAX_BODY = 1024 * 1024

Client = TestClient[Any, Any]
MakeClient = Callable[..., Awaitable[Client]]


@pytest.fixture
def metrics() -> Metrics:
    return Metrics()


@pytest.fixture
def make_client(
    aiohttp_client: Callable[..., Awaitable[Client]],
    redis_async: redis.asyncio.Redis,
    inbound: Inbound,
    metrics: Metrics,
) -> MakeClient:
    """A test client for an app built with the fixtures' parts, ``overrides`` replacing any."""

    async def make(**overrides: Any) -> Client:
        parts: dict[str, Any] = {
            "secret": SECRET, "inbound": inbound, "redis": redis_async, "metrics": metrics,
            "max_body": MAX_BODY,
        }
        parts.update(overrides)
        return await aiohttp_client(make_app(**parts))

    return make


@pytest.fixture
async def client(make_client: MakeClient) -> Client:
    return await make_client()


def delivery(event: str = "issues", example: str = "opened", *, secret: str = SECRET,
             delivery_id: str | None = None, **kwargs: Any) -> Delivery:
    """A signed delivery built from GitHub's example payload."""
    return build_delivery(event, build_payload(event, example, **kwargs), secret,
                          delivery_id=delivery_id)


async def post(client: Client, body: bytes, headers: Mapping[str, str]) -> ClientResponse:
    return await client.post("/webhook", data=body, headers=dict(headers))


async def send(client: Client, d: Delivery) -> ClientResponse:
    return await post(client, d.body, d.headers)


async def stream_length(r: redis.asyncio.Redis) -> int:
    return int(await r.xlen(STREAM))
