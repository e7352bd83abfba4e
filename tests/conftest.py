"""Shared fixtures: a real Redis for every test that needs one, and the inbound store on it.

A test module marked ``pytestmark = pytest.mark.cluster_too`` runs each of its tests that use
``redis_async`` twice: on one Redis and on the local Redis Cluster
(``questbot_testing/redis_cluster.py``,
started once a session, flushed before each test). ``QUESTBOT_TEST_REDIS=cluster`` runs every
``redis_async`` test on the cluster instead, ``QUESTBOT_TEST_REDIS=single`` only on one Redis
(the cluster variants skipped, for a quick run)."""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import AsyncIterator, Iterator

import pytest
import redis
import redis.asyncio
from hypothesis import settings

from bot.journal.wire import RedisClient, plain_client
from bot.runner.inbound import Inbound
from questbot_testing.redis_cluster import RedisCluster
from questbot_testing.redis_server import RedisServer, external_url

# No per-example deadline anywhere: an example's time is not its behaviour (speed is measured by
# scripts/bench_*.py), and on two shared cores a 200 ms deadline failed correct examples.
settings.register_profile("questbot", deadline=None)
settings.load_profile("questbot")


@pytest.fixture(autouse=True)
def fresh_model_endpoints() -> Iterator[None]:
    """What a model conversation learned of an endpoint is the process's, by its address
    (``bot.agent.model.adaptation.LEARNED``); a later test's server may reuse a port, so each
    test starts knowing nothing."""
    from bot.agent.model.adaptation import LEARNED

    LEARNED.clear()
    yield
    LEARNED.clear()


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


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "cluster_too: run the module's redis_async tests on "
                            "one Redis and on the local Redis Cluster")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The files that hold a ``slow`` test first, then the rest by their number of tests, each
    file's tests in their own order. scripts/test hands pytest-xdist whole files in this order
    (``--no-loadscope-reorder``); its own order, by number of tests alone, left the files of a
    test or two that take a minute (the image, the soak) to the end, where one or two of them
    ran with nothing beside them for the last minutes of the run."""
    slow = {item.path for item in items if item.get_closest_marker("slow") is not None}
    tests = Counter(item.path for item in items)
    items.sort(key=lambda item: (item.path not in slow, -tests[item.path], str(item.path)))


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if ("redis_kind" in metafunc.fixturenames
            and metafunc.definition.get_closest_marker("cluster_too") is not None
            and os.environ.get("QUESTBOT_TEST_REDIS") not in ("cluster", "single")):
        metafunc.parametrize("redis_kind", ["single", "cluster"], indirect=True)


@pytest.fixture(scope="session")
def redis_cluster() -> Iterator[RedisCluster]:
    """Three masters with a replica each, for the session (about 2 s to start)."""
    cluster = RedisCluster()
    cluster.start()
    try:
        yield cluster
    finally:
        cluster.cleanup()


@pytest.fixture
def redis_kind(request: pytest.FixtureRequest) -> str:
    """``single`` or ``cluster``: what ``redis_async`` connects to."""
    default = "cluster" if os.environ.get("QUESTBOT_TEST_REDIS") == "cluster" else "single"
    return str(getattr(request, "param", default))


@pytest.fixture
def redis_async_url(request: pytest.FixtureRequest, redis_kind: str) -> str:
    """The URL of the Redis ``redis_async`` is connected to (``redis+cluster://`` for the
    cluster): for a test that hands it to a tool of its own."""
    if redis_kind == "cluster":
        return str(request.getfixturevalue("redis_cluster").url)
    return str(request.getfixturevalue("redis_url"))


@pytest.fixture
async def redis_async(request: pytest.FixtureRequest,
                      redis_kind: str) -> AsyncIterator[RedisClient]:
    if redis_kind == "cluster":
        cluster: RedisCluster = request.getfixturevalue("redis_cluster")
        cluster.flush()
        client = plain_client(cluster.url)
    else:
        client = plain_client(request.getfixturevalue("redis_url"))
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
def inbound(redis_async: RedisClient, batches: list[int]) -> Inbound:
    return Inbound(redis_async, durable=True, on_batch=batches.append)
