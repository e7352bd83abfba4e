"""Durable writes on a Redis Cluster wait for a replica (``WAIT 1``): with the replica of the
quest's master stopped, a durable apply is refused with ``DurabilityError`` once the timeout
passes; with it running, the write is on the replica when the apply returns."""

from __future__ import annotations

import os
import signal

import pytest
import redis

from bot.journal import Journal, quest_keys
from bot.journal.errors import DurabilityError
from bot.journal.wire import RedisClient
from questbot_testing.journals import JournalBuilder
from questbot_testing.redis_cluster import RedisCluster
from tests.journal.conftest import POLICY


@pytest.fixture
def redis_kind() -> str:
    return "cluster"


async def test_a_durable_apply_is_on_the_replica_when_it_returns(
        redis_async: RedisClient, redis_cluster: RedisCluster) -> None:
    journal = Journal(redis_async, shards=4, durable=True)
    b = JournalBuilder("q-dur").sense()
    await journal.apply_many(b.events, POLICY)
    snap = quest_keys("q-dur").snap
    replica = redis.Redis(port=redis_cluster.replica_of(snap).port)
    replica.execute_command("READONLY")
    assert int(replica.hget(snap, "v") or 0) == len(b.events)


async def test_a_durable_apply_without_a_replica_is_refused(
        redis_async: RedisClient, redis_cluster: RedisCluster) -> None:
    journal = Journal(redis_async, shards=4, durable=True, durability_timeout_ms=200)
    b = JournalBuilder("q-lone").sense()
    replica = redis_cluster.replica_of(quest_keys("q-lone").snap)
    assert replica.process is not None
    os.kill(replica.process.pid, signal.SIGSTOP)
    try:
        with pytest.raises(DurabilityError, match="no replica acknowledged"):
            await journal.apply(b.events[0], POLICY)
        # not durable, not waited for: the same write goes through at once
        assert (await journal.apply(b.events[1], POLICY, durable=False)).version >= 2
    finally:
        os.kill(replica.process.pid, signal.SIGCONT)
    redis_cluster.wait_replicas()
