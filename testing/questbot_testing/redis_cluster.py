"""A real Redis Cluster for the tests: three masters with one replica each, on loopback, made
with ``redis-server --cluster-enabled yes`` and ``redis-cli --cluster create``, in a temporary
directory. Its nodes are ``RedisServer``s, so a test can kill a master and watch its replica
take over (``kill_master``)."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import redis

from questbot_testing.redis_server import free_port


@dataclass
class Node:
    port: int
    directory: Path
    bus_port: int = field(default_factory=free_port)
    """The cluster bus: its own free port (by default it would be ``port`` + 10000)."""
    process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        binary = shutil.which("redis-server")
        if binary is None:
            raise RuntimeError("redis-server is not installed; run scripts/setup to install it")
        self.directory.mkdir(parents=True, exist_ok=True)
        self.process = subprocess.Popen(
            [binary, "--port", str(self.port), "--bind", "127.0.0.1", "--dir",
             str(self.directory), "--cluster-enabled", "yes",
             "--cluster-port", str(self.bus_port), "--cluster-config-file",
             "nodes.conf", "--cluster-node-timeout", "1000", "--save", "",
             "--repl-diskless-sync-delay", "0",
             "--appendonly", "yes", "--appendfsync", "always",
             "--logfile", str(self.directory / "redis.log")],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        client = redis.Redis(port=self.port, socket_timeout=0.5)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                if client.ping():
                    return
            except redis.ConnectionError:
                time.sleep(0.02)
        raise RuntimeError(f"cluster node on port {self.port} did not answer within 10 s")

    def kill(self) -> None:
        if self.process is not None:
            self.process.kill()
            self.process.wait()
            self.process = None


@dataclass
class RedisCluster:
    masters: int = 3
    directory: Path = field(
        default_factory=lambda: Path(tempfile.mkdtemp(prefix="questbot-cluster-")))
    nodes: list[Node] = field(default_factory=list)

    @property
    def url(self) -> str:
        """A ``redis+cluster://`` URL naming every node: a client started while one is down
        starts from another."""
        nodes = ",".join(f"127.0.0.1:{n.port}" for n in self.nodes)
        return f"redis+cluster://{nodes}/0"

    def start(self) -> None:
        cli = shutil.which("redis-cli")
        if cli is None:
            raise RuntimeError("redis-cli is not installed; run scripts/setup to install it")
        for _ in range(self.masters * 2):
            port = free_port()
            node = Node(port, self.directory / str(port))
            node.start()
            self.nodes.append(node)
        subprocess.run(
            [cli, "--cluster", "create", *[f"127.0.0.1:{n.port}" for n in self.nodes],
             "--cluster-replicas", "1", "--cluster-yes"],
            check=True, capture_output=True, timeout=60)
        self.wait_ok()
        self.wait_replicas()

    def wait_replicas(self, seconds: float = 30) -> None:
        """Until every replica has synced with its master: a replica that never synced may not
        take over, and a failover test would wait for ever."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            roles = [redis.Redis(port=n.port, socket_timeout=0.5).info("replication")
                     for n in self.nodes if n.process is not None]
            replicas = [r for r in roles if r.get("role") == "slave"]
            if (len(replicas) == self.masters
                    and all(r.get("master_link_status") == "up" for r in replicas)
                    and self._everyone_knows_the_replicas()):
                return
            time.sleep(0.1)
        raise RuntimeError(f"the replicas did not sync within {seconds} s")

    def _everyone_knows_the_replicas(self) -> bool:
        """Each node's ``CLUSTER NODES`` shows as many replicas as masters: a replica's role
        spreads by gossip, so on a loaded machine a node can still list it as a master after
        the replica itself has synced — and a client asking that node would see six masters."""
        for node in self.nodes:
            if node.process is None:
                continue
            view = redis.Redis(port=node.port, socket_timeout=0.5).execute_command(
                "CLUSTER", "NODES")
            text = view.decode() if isinstance(view, bytes) else str(view)
            flags = [line.split()[2] for line in text.splitlines() if line.strip()]
            if sum("slave" in f.split(",") for f in flags) != self.masters:
                return False
        return True

    def wait_ok(self, seconds: float = 30) -> None:
        """Until every live node says the cluster is ``ok`` and every slot is served."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            try:
                infos = [redis.Redis(port=n.port, socket_timeout=0.5).cluster("info")
                         for n in self.nodes if n.process is not None]
                if all(i.get("cluster_state") == "ok"
                       and int(i.get("cluster_slots_ok", 0)) == 16384 for i in infos):
                    return
            except redis.RedisError:
                pass
            time.sleep(0.1)
        raise RuntimeError(f"the cluster was not ok within {seconds} s")

    def client(self) -> redis.RedisCluster:
        """A client starting from any live node."""
        live = [redis.cluster.ClusterNode("127.0.0.1", n.port) for n in self.nodes
                if n.process is not None]
        return redis.RedisCluster(startup_nodes=live)

    def master_of(self, key: str) -> Node:
        c = self.client()
        try:
            node = c.get_node_from_key(key)
            return next(n for n in self.nodes if n.port == node.port)
        finally:
            c.close()

    def replica_of(self, key: str) -> Node:
        """The replica of the master serving ``key``."""
        master = self.master_of(key)
        for node in self.nodes:
            if node.process is None or node is master:
                continue
            info = redis.Redis(port=node.port, socket_timeout=0.5).info("replication")
            if info.get("role") == "slave" and int(info.get("master_port", 0)) == master.port:
                return node
        raise RuntimeError(f"the master on port {master.port} has no live replica")

    def kill_master(self, key: str) -> Node:
        """SIGKILL the master serving ``key``; its replica is promoted (failover)."""
        master = self.master_of(key)
        master.kill()
        self.wait_promoted(master)
        return master

    def wait_promoted(self, dead: Node, seconds: float = 30) -> None:
        """Until the live nodes mark ``dead`` failed and a live master serves its slots."""
        deadline = time.monotonic() + seconds
        live = [n for n in self.nodes if n.process is not None]
        while time.monotonic() < deadline:
            try:
                view = redis.Redis(port=live[0].port, socket_timeout=0.5).cluster("nodes")
                dead_flags = next((v["flags"] for k, v in view.items()
                                   if k.endswith(f":{dead.port}")), "")
                if "fail" in dead_flags and "fail?" not in dead_flags:
                    self.wait_ok(seconds=max(0.1, deadline - time.monotonic()))
                    return
            except redis.RedisError:
                pass
            time.sleep(0.1)
        raise RuntimeError(f"no replica took over from port {dead.port} within {seconds} s")

    def flush(self) -> None:
        c = self.client()
        try:
            c.flushall(target_nodes=redis.RedisCluster.PRIMARIES)
        finally:
            c.close()

    def cleanup(self) -> None:
        for node in self.nodes:
            node.kill()
        shutil.rmtree(self.directory, ignore_errors=True)
