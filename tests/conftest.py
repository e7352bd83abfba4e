"""Shared fixtures: a real Redis for every test that needs one, and the inbound store on it."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest
import redis
import redis.asyncio
from hypothesis import settings

from bot.journal.inbound import Inbound
from tests.redis_server import RedisServer, external_url

# No per-example deadline anywhere: an example's time is not its behaviour (speed is measured by
# scripts/bench_*.py), and on two shared cores a 200 ms deadline failed correct examples.
settings.register_profile("questbot", deadline=None)
settings.load_profile("questbot")


@pytest.fixture(scope="session")
def redis_url() -> Iterator[str]:
    """The URL of a real Redis: ``REDIS_URL`` if set, else a ``redis-server`` of our own."""
    url = external_url()
    if url is not None:
        yield url
        return
    server = RedisServer()
    server.start()
    try:
        yield server.url
    finally:
        server.cleanup()


@pytest.fixture
def redis_sync(redis_url: str) -> Iterator[redis.Redis]:
    client = redis.Redis.from_url(redis_url)
    client.flushdb()
    try:
        yield client
    finally:
        client.close()


@pytest.fixture
async def redis_async(redis_url: str) -> AsyncIterator[redis.asyncio.Redis]:
    client = redis.asyncio.Redis.from_url(redis_url)
    await client.flushdb()
    try:
        yield client
    finally:
        await client.aclose()


@pytest.fixture
def batches() -> list[int]:
    """The size of every batch the inbound store flushed (group commit)."""
    return []


@pytest.fixture
def inbound(redis_async: redis.asyncio.Redis, batches: list[int]) -> Inbound:
    return Inbound(redis_async, durable=True, on_batch=batches.append)
