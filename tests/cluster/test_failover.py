"""A durable write on a client whose slot map is stale — its master failed over and came back
as a replica at the same address — is redirected, and its ``WAIT`` sent again where it
covers the write, instead of being refused ("WAIT cannot be used with replica instances",
found by ``scripts/chaos.py --cluster --seed 2``)."""

from __future__ import annotations

import redis

from bot.journal import Journal, quest_keys
from bot.journal.cluster import _marker
from bot.journal.wire import plain_client
from bot.runner.inbound import Inbound, Stored
from questbot_testing.journals import JournalBuilder
from questbot_testing.redis_cluster import RedisCluster
from tests.journal.conftest import POLICY


def test_the_marker_key_shares_the_slot() -> None:
    from redis.crc import key_slot

    for key in ("q:{q-1}:snap", "inbound:{inbound-3}", "plain", "x{y}z{w}", "repo:{o/n}:live"):
        assert key_slot(_marker(key).encode()) == key_slot(key.encode())


async def test_durable_writes_after_a_failover_the_client_did_not_see() -> None:
    cluster = RedisCluster()
    cluster.start()
    client = plain_client(cluster.url)
    try:
        journal = Journal(client, shards=4, durable=True)
        inbound = Inbound(client, durable=True)
        b = JournalBuilder("q-stale").sense()
        await journal.apply(b.events[0], POLICY)  # the client now caches the slot map
        snap = quest_keys("q-stale").snap
        dead = cluster.kill_master(snap)
        dead.start()  # back at its address, as the new master's replica
        cluster.wait_replicas()
        assert cluster.master_of(snap).port != dead.port
        assert (await journal.apply(b.events[1], POLICY)).version >= 2
        stored = await inbound.store("d-after", "push", b"{}", b.events[0].at)
        assert isinstance(stored, Stored)
        replica = redis.Redis(port=cluster.replica_of(snap).port)
        replica.execute_command("READONLY")
        assert int(replica.hget(snap, "v") or 0) >= 2
    finally:
        await client.aclose()
        cluster.cleanup()


async def test_reconnects_on_a_cluster_are_counted_as_on_one_redis() -> None:
    """redis-py gives a cluster's node connections no retries of their own, so the hooks of
    ``wire.connect`` would never hear of a failover: the cluster client counts instead — a
    command and a pipeline, each across its master's failover."""
    from bot.journal.wire import connect

    cluster = RedisCluster()
    cluster.start()
    errors: list[int] = []
    reconnects: list[int] = []
    client = connect(cluster.url, socket_timeout=5, on_error=lambda: errors.append(1),
                     on_reconnect=lambda: reconnects.append(1))
    try:
        await client.set("{one}:k", 1)
        pipe = client.pipeline(transaction=False)
        pipe.set("{two}:k", 1)
        await pipe.execute()
        assert (errors, reconnects) == ([], [])
        cluster.kill_master("{one}:k")
        await client.set("{one}:k", 2)
        assert len(errors) >= 1 and len(reconnects) == 1
        seen = len(errors)
        if cluster.master_of("{two}:k").port == cluster.master_of("{one}:k").port:
            await client.set("{two}:k", 1)  # its old master was the one killed: reconnected
            seen = len(errors)
        cluster.kill_master("{two}:k")
        pipe = client.pipeline(transaction=False)
        pipe.set("{two}:k", 2)
        pipe.get("{two}:k")
        assert (await pipe.execute())[1] == b"2"
        assert len(errors) > seen and len(reconnects) == 2
    finally:
        await client.aclose()
        cluster.cleanup()
