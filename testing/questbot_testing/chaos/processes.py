"""The processes of a chaos run and the supervisor that keeps them alive.

Each questbot process is a real OS process with its own log file (appended to across
respawns, each incarnation introduced by a ``=== spawn N`` line). The supervisor respawns a
process the harness killed at once, and one that exited on its own after 0.2 s (systemd's
``RestartSec``); the second kind is a crash, recorded with the last lines it logged, because a
questbot process should never exit on its own.

Redis is killed with SIGKILL and restarted on the same port and data directory, so it comes
back from its AOF; the harness records when it was away.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from questbot_testing.redis_cluster import RedisCluster
from questbot_testing.redis_server import RedisServer

CRASH_RESTART_S = 0.2


@dataclass
class Exit:
    """One incarnation of a process ended: killed by the harness, or on its own."""

    at: float
    returncode: int
    killed: bool
    last_lines: list[str]

    def cause(self) -> str:
        """The last error the process logged (JSON log lines or a bare traceback)."""
        for line in reversed(self.last_lines):
            try:
                record = json.loads(line)
            except ValueError:
                if line and not line.startswith((" ", "===")) and ("Error" in line
                                                                   or "Exception" in line):
                    return line
                continue
            if isinstance(record, dict) and record.get("level") in ("error", "critical"):
                exc = str(record.get("exc_info") or record.get("exception") or "")
                tail = exc.strip().splitlines()[-1] if exc.strip() else ""
                return f"{record.get('message', '')} {tail}".strip()
        return self.last_lines[-1] if self.last_lines else "(nothing logged)"


@dataclass
class Proc:
    name: str
    kind: str
    argv: list[str]
    env: dict[str, str]
    log: Path
    popen: subprocess.Popen[bytes] | None = None
    spawns: int = 0
    kills: int = 0
    exits: list[Exit] = field(default_factory=list)
    _killing: bool = False
    _offset: int = 0

    def spawn(self) -> None:
        self.spawns += 1
        with self.log.open("ab") as out:
            out.write(f"=== spawn {self.spawns} at {time.time():.3f}\n".encode())
            self._offset = out.tell()
        handle = self.log.open("ab")
        try:
            self.popen = subprocess.Popen(self.argv, env=self.env, stdout=handle,
                                          stderr=subprocess.STDOUT, start_new_session=True)
        finally:
            handle.close()
        self._killing = False

    def kill(self) -> bool:
        """SIGKILL the current incarnation; False if it was not running."""
        if self.popen is None or self.popen.poll() is not None:
            return False
        self._killing = True
        self.kills += 1
        self.popen.send_signal(signal.SIGKILL)
        return True

    def signal(self, signum: int) -> None:
        if self.popen is not None and self.popen.poll() is None:
            self.popen.send_signal(signum)

    def reap(self) -> Exit | None:
        """The incarnation's exit, once, if it has ended."""
        if self.popen is None:
            return None
        code = self.popen.poll()
        if code is None:
            return None
        self.popen = None
        exit_ = Exit(time.time(), code, self._killing, self._tail())
        self.exits.append(exit_)
        return exit_

    def incarnations(self, marker: str) -> dict[str, int]:
        """Words following ``marker`` in the log → the spawn (1-based) that logged them: which
        incarnation an effect runner's id belonged to."""
        found: dict[str, int] = {}
        spawn = 0
        try:
            lines = self.log.read_text(errors="replace").splitlines()
        except OSError:
            return found
        for line in lines:
            if line.startswith("=== spawn "):
                spawn = int(line.split()[2])
            elif marker in line:
                word = line.split(marker, 1)[1].split(")")[0].split()[0].strip('",')
                found[word] = spawn
        return found

    def fate(self, spawn: int, t0: float) -> str:
        """How incarnation ``spawn`` ended, relative to ``t0``."""
        if spawn - 1 < len(self.exits):
            e = self.exits[spawn - 1]
            how = "killed" if e.killed else f"exited {e.returncode}"
            return f"{self.name} spawn {spawn}, {how} at +{e.at - t0:.1f} s"
        return f"{self.name} spawn {spawn}, alive to the end"

    def lines_with(self, needles: Sequence[str]) -> list[str]:
        """Every line of every incarnation's log holding one of ``needles``."""
        try:
            lines = self.log.read_text(errors="replace").splitlines()
        except OSError:
            return []
        return [line for line in lines if any(n in line for n in needles)]

    def crashes(self) -> list[Exit]:
        return [e for e in self.exits if not e.killed]

    def stop(self) -> None:
        if self.popen is None:
            return
        with contextlib.suppress(ProcessLookupError):
            self.popen.send_signal(signal.SIGTERM)
        try:
            self.popen.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.popen.kill()
            self.popen.wait()
        self.popen = None

    def _tail(self, lines: int = 40) -> list[str]:
        try:
            with self.log.open("rb") as handle:
                handle.seek(self._offset)
                text = handle.read()[-20_000:].decode(errors="replace")
        except OSError:
            return []
        return text.splitlines()[-lines:]


@dataclass
class Supervisor:
    procs: list[Proc]
    running: bool = True

    def start(self) -> None:
        for proc in self.procs:
            proc.spawn()

    async def watch(self) -> None:
        """Respawn whatever ended, until ``running`` is False."""
        while self.running:
            for proc in self.procs:
                exit_ = proc.reap()
                if exit_ is None:
                    continue
                if not exit_.killed:
                    await asyncio.sleep(CRASH_RESTART_S)
                if self.running:
                    proc.spawn()
            await asyncio.sleep(0.05)

    def stop(self) -> None:
        self.running = False
        for proc in self.procs:
            proc.stop()
            proc.reap()


@dataclass
class Outage:
    down: float
    up: float | None = None


@dataclass
class Redis:
    """The run's redis-server: AOF with ``appendfsync always``, killed and restarted in place."""

    server: RedisServer
    outages: list[Outage] = field(default_factory=list)

    @classmethod
    def start(cls, directory: Path) -> Redis:
        directory.mkdir(parents=True, exist_ok=True)
        server = RedisServer(directory=directory, appendonly=True)
        server.start()
        return cls(server)

    @property
    def url(self) -> str:
        return self.server.url

    async def crash(self, away_s: float) -> Outage:
        """SIGKILL, stay away ``away_s`` seconds, start again on the same AOF."""
        outage = Outage(time.time())
        self.outages.append(outage)
        self.server.kill()
        await asyncio.sleep(away_s)
        await asyncio.to_thread(self.server.start)
        outage.up = time.time()
        return outage

    def was_down(self, start: float, end: float) -> bool:
        return was_down(self.outages, start, end)

    def stop(self) -> None:
        self.server.stop()

    async def bring_back(self) -> None:
        """Start it again if the run ended while it was away."""
        if self.outages and self.outages[-1].up is None:
            await asyncio.to_thread(self.server.start)
            self.outages[-1].up = time.time()


@dataclass
class ClusterRedis:
    """The run's Redis Cluster (``--cluster``): three masters with a replica each. A crash is
    a master failover: SIGKILL of a master (chosen by a key), its replica promoted — the
    outage lasts until every slot is served again — and the old master started again on its
    own directory, where it rejoins as the new master's replica."""

    cluster: RedisCluster
    outages: list[Outage] = field(default_factory=list)
    failovers: list[tuple[int, int]] = field(default_factory=list)
    """(killed port, promoted port) of each failover."""

    @classmethod
    def start(cls, directory: Path) -> ClusterRedis:
        cluster = RedisCluster(directory=directory)
        cluster.start()
        return cls(cluster)

    @property
    def url(self) -> str:
        return self.cluster.url

    async def crash(self, away_s: float, key: str = "q:{chaos}:snap") -> Outage:
        outage = Outage(time.time())
        self.outages.append(outage)
        dead = await asyncio.to_thread(self.cluster.kill_master, key)
        outage.up = time.time()
        promoted = await asyncio.to_thread(self.cluster.master_of, key)
        self.failovers.append((dead.port, promoted.port))
        await asyncio.sleep(away_s)
        await asyncio.to_thread(dead.start)  # rejoins as a replica
        await asyncio.to_thread(self.cluster.wait_replicas)
        return outage

    def was_down(self, start: float, end: float) -> bool:
        return was_down(self.outages, start, end)

    def stop(self) -> None:
        self.cluster.cleanup()

    async def bring_back(self) -> None:
        """A failover ends with its node back; nothing is left away."""


def was_down(outages: Sequence[Outage], start: float, end: float) -> bool:
    """Whether Redis was away at any moment of ``[start, end]``."""
    return any(o.down <= end and (o.up is None or o.up >= start) for o in outages)


def python_env(root: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "QUESTBOT_"))}
    env.pop("REDIS_URL", None)
    env["PYTHONPATH"] = str(root)
    env["PYTHONUNBUFFERED"] = "1"
    env.update(extra)
    return env
