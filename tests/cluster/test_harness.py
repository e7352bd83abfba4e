"""The local Redis Cluster the tests start (``questbot_testing/redis_cluster.py``): three masters
with a replica each, and a master killed is replaced by its replica with the data it had synced."""

from __future__ import annotations

from questbot_testing.redis_cluster import RedisCluster


def test_three_masters_with_a_replica_each_and_a_failover() -> None:
    cluster = RedisCluster()
    cluster.start()
    try:
        client = cluster.client()
        roles = sorted(n["flags"] for n in client.cluster_nodes().values())
        assert [r.split(",")[-1] for r in roles].count("master") == 3
        assert [r.split(",")[-1] for r in roles].count("slave") == 3
        for n in range(30):  # keys over every master; each quest's keys share one slot
            client.set(f"q:{{q-{n}}}:snap", n)
            client.set(f"q:{{q-{n}}}:events", n)
            assert client.keyslot(f"q:{{q-{n}}}:snap") == client.keyslot(f"q:{{q-{n}}}:events")
        assert client.wait(1, 1000) >= 0
        before = cluster.master_of("q:{q-7}:snap")
        client.close()
        cluster.kill_master("q:{q-7}:snap")
        again = cluster.client()
        after = cluster.master_of("q:{q-7}:snap")
        assert after.port != before.port
        assert [int(again.get(f"q:{{q-{n}}}:snap") or -1) for n in range(30)] == list(range(30))
        again.close()
    finally:
        cluster.cleanup()
