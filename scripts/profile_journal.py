"""Where one journal apply's costs go, beside raw pipelined XADD of the same bytes: CPU time of
this process (the client) and of redis-server (``INFO cpu``) per event, bytes sent per event,
round trips per event, and Redis's own per-command time (``INFO commandstats``; commands a
script calls are counted inside ``evalsha`` and again on their own line). With ``--profile``,
a cProfile of the client side of the applies (sorted by own time).

CPU time, unlike ``bench_journal.py``'s wall-clock rates, holds roughly still when other work
shares the machine, so this is the figure to compare two versions of the apply path by (run
it in each tree, alternating). Steadier still, ``--instructions`` counts instructions with
valgrind's callgrind (Debian's ``valgrind``), which no other load changes: redis-server's per
event (run under callgrind, its ``serverCron`` left out, as it runs by the clock and valgrind
slows the clock's work down), and this process's per event (the difference between two runs of
different sizes under callgrind, so start-up and imports cancel out, less the same difference
for building the workload alone). Several minutes.

    .venv/bin/python scripts/profile_journal.py [--quests 600] [--profile]
    .venv/bin/python scripts/profile_journal.py --instructions [--quests 150]
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import gc
import glob
import os
import pstats
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import redis.asyncio
from bench_journal import bench_apply, bench_xadd, workload  # scripts/, run as a script

from bot.journal import wire
from bot.worker import collector
from questbot_testing.redis_server import RedisServer, free_port


async def server_stats(client: redis.asyncio.Redis) -> dict[str, Any]:
    stats = dict(await client.info("commandstats"))
    cpu = await client.info("cpu")
    net = await client.info("stats")
    stats["_cpu"] = float(cpu["used_cpu_sys"]) + float(cpu["used_cpu_user"])
    stats["_in"] = int(net["total_net_input_bytes"])
    return stats


class Collections:
    """CPU time in the garbage collector, by generation (``gc.callbacks``)."""

    def __init__(self) -> None:
        self.seconds = [0.0, 0.0, 0.0]
        self.counts = [0, 0, 0]
        self._start = 0.0
        gc.callbacks.append(self._note)

    def _note(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._start = time.process_time()
        else:
            self.seconds[info["generation"]] += time.process_time() - self._start
            self.counts[info["generation"]] += 1

    def reset(self) -> None:
        self.seconds, self.counts = [0.0, 0.0, 0.0], [0, 0, 0]


def report(name: str, rate: float, n: int, cpu: float, trips: int, a: dict[str, Any],
           b: dict[str, Any], collections: Collections) -> dict[str, float]:
    server = (b["_cpu"] - a["_cpu"]) / n * 1e6
    figures = {"per_s": round(rate), "client_us": round(cpu / n * 1e6, 1),
               "server_us": round(server, 1), "bytes_in": round((b["_in"] - a["_in"]) / n),
               "trips": round(trips / n, 4),
               "gc_us": round(sum(collections.seconds) / n * 1e6, 1)}
    print(f"{name:6}: {rate:8.0f}/s  client {figures['client_us']:6.1f} µs  server "
          f"{figures['server_us']:6.1f} µs  sent {figures['bytes_in']:5d} B  round trips "
          f"{figures['trips']:.4f}  (per event)")
    print(f"        of the client's: garbage collection {figures['gc_us']:.1f} µs (young, middle, "
          f"full: {collections.counts} collections, "
          f"{', '.join(f'{s / n * 1e6:.1f}' for s in collections.seconds)} µs)")
    for key, row in sorted(b.items(), key=lambda kv: str(kv[0])):
        if str(key).startswith("_") or not isinstance(row, dict):
            continue
        before = a.get(key, {})
        calls = row["calls"] - before.get("calls", 0)
        if calls and calls / n >= 0.01:
            usec = row["usec"] - before.get("usec", 0)
            print(f"        {key.removeprefix('cmdstat_'):10} {calls / n:6.3f} calls "
                  f"{usec / n:6.1f} µs")
    return figures


async def main(args: argparse.Namespace) -> None:
    collector.settle()  # as a worker's start-up does
    collections = Collections()
    server = RedisServer()
    server.start()
    client = redis.asyncio.Redis.from_url(server.url)
    trips = [0]
    execute = wire.Batch.execute

    async def counted(self: wire.Batch, c: Any) -> list[Any]:
        trips[0] += 1
        return await execute(self, c)

    wire.Batch.execute = counted  # type: ignore[method-assign]
    try:
        await bench_apply(server.url, workload(50, "warm"), args.batch, args.tasks)  # scripts
        events = workload(args.quests, "p")
        n = len(events)
        a, trips[0] = await server_stats(client), 0
        collections.reset()
        profile = cProfile.Profile() if args.profile else None
        t = time.process_time()
        if profile:
            profile.enable()
        rate = await bench_apply(server.url, events, args.batch, args.tasks)
        if profile:
            profile.disable()
        cpu = time.process_time() - t
        applied = report("apply", rate, n, cpu, trips[0], a, await server_stats(client),
                         collections)
        a, trips[0] = await server_stats(client), 0
        collections.reset()
        t = time.process_time()
        rate = await bench_xadd(server.url, events, args.batch, args.tasks)
        raw = report("xadd", rate, n, time.process_time() - t, 0, a, await server_stats(client),
                     collections)
        total = (raw["client_us"] + raw["server_us"]) / (applied["client_us"]
                                                         + applied["server_us"])
        print(f"CPU ratio (xadd's client + server CPU / apply's): {total:.3f}")
        if profile:
            pstats.Stats(profile).sort_stats("tottime").print_stats(args.top)
    finally:
        wire.Batch.execute = execute  # type: ignore[method-assign]
        await client.aclose()
        server.cleanup()


def _total(dump: str) -> int:
    for line in Path(dump).read_text().splitlines():
        if line.startswith(("summary:", "totals:")):
            return int(line.split()[1])
    raise RuntimeError(f"{dump} holds no total")


def _inclusive(dump: str, function: str) -> int:
    out = subprocess.run(["callgrind_annotate", "--inclusive=yes", "--threshold=100", dump],
                         capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        if f":{function} " in line and line.rstrip().endswith("]"):
            return int(line.split()[0].replace(",", ""))
    return 0


async def _run(url: str, mode: str, quests: int, prefix: str, batch: int, tasks: int) -> None:
    collector.settle()
    events = workload(quests, prefix)  # built by stepping each quest's journal: "none" counts it
    if mode == "apply":
        await bench_apply(url, events, batch, tasks)
    elif mode == "xadd":
        await bench_xadd(url, events, batch, tasks)


def _ping(port: int) -> None:
    deadline = time.monotonic() + 120  # valgrind starts slowly
    while time.monotonic() < deadline:
        done = subprocess.run(["redis-cli", "-p", str(port), "ping"], capture_output=True)
        if done.stdout.strip() == b"PONG":
            return
        time.sleep(0.2)
    raise RuntimeError(f"redis-server did not answer on port {port}")


def instructions(args: argparse.Namespace) -> None:
    for tool in ("valgrind", "callgrind_control", "callgrind_annotate", "redis-cli"):
        if shutil.which(tool) is None:
            raise SystemExit(f"{tool} is not installed (Debian: apt-get install valgrind)")
    work = tempfile.mkdtemp(prefix="questbot-callgrind-")
    n = args.quests * 12
    server: dict[str, float] = {}
    for mode in ("apply", "xadd"):
        port = free_port()
        url = f"redis://127.0.0.1:{port}/0"
        proc = subprocess.Popen(
            ["valgrind", "--tool=callgrind", f"--callgrind-out-file={work}/server.{mode}.%p",
             "redis-server", "--port", str(port), "--bind", "127.0.0.1", "--dir", work,
             "--save", "", "--appendonly", "no"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            _ping(port)
            asyncio.run(_run(url, "apply", 20, "warm", args.batch, args.tasks))  # scripts
            subprocess.run(["callgrind_control", "-z", str(proc.pid)], capture_output=True,
                           check=True)
            asyncio.run(_run(url, mode, args.quests, "p", args.batch, args.tasks))
            subprocess.run(["callgrind_control", "-d", str(proc.pid)], capture_output=True,
                           check=True)
            (dump,) = glob.glob(f"{work}/server.{mode}.{proc.pid}.*")
            server[mode] = (_total(dump) - _inclusive(dump, "serverCron")) / n
        finally:
            subprocess.run(["redis-cli", "-p", str(port), "shutdown", "nosave"],
                           capture_output=True)
            proc.wait()
    redis_server = RedisServer(appendonly=False)
    redis_server.start()
    client: dict[str, float] = {}
    try:
        small = args.quests // 3
        for mode in ("none", "apply", "xadd"):
            totals = []
            for quests in (small, args.quests):
                dump = f"{work}/client.{mode}.{quests}"
                subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={dump}",
                                sys.executable, __file__, "--client-run", mode, redis_server.url,
                                str(quests)], check=True, stderr=subprocess.DEVNULL,
                               env={**os.environ, "PYTHONHASHSEED": "0"})
                totals.append(_total(dump))
            client[mode] = (totals[1] - totals[0]) / ((args.quests - small) * 12)
    finally:
        redis_server.cleanup()
    for mode in ("apply", "xadd"):
        client[mode] -= client["none"]  # what building the workload cost
    for mode in ("apply", "xadd"):
        print(f"{mode:6}: instructions per event: client {client[mode]:9.0f}  "
              f"server {server[mode]:9.0f}  total {client[mode] + server[mode]:9.0f}")
    ratio = (client["xadd"] + server["xadd"]) / (client["apply"] + server["apply"])
    print(f"instruction ratio (xadd's client + server / apply's): {ratio:.3f}")
    shutil.rmtree(work, ignore_errors=True)


def cli() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quests", type=int, default=None, help="12 events each (600; 150 with "
                   "--instructions)")
    p.add_argument("--batch", type=int, default=500)
    p.add_argument("--tasks", type=int, default=4)
    p.add_argument("--profile", action="store_true", help="cProfile the client side")
    p.add_argument("--top", type=int, default=25)
    p.add_argument("--instructions", action="store_true",
                   help="count instructions with callgrind (valgrind) instead of timing")
    p.add_argument("--client-run", nargs=3, metavar=("MODE", "URL", "QUESTS"),
                   help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.client_run:  # one side of --instructions' client count, run under callgrind
        mode, url, quests = args.client_run
        asyncio.run(_run(url, mode, int(quests), f"c{quests}", args.batch, args.tasks))
        return
    if args.instructions:
        args.quests = args.quests or 150
        instructions(args)
        return
    args.quests = args.quests or 600
    asyncio.run(main(args))


if __name__ == "__main__":
    cli()
