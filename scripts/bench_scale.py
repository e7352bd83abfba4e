"""Effects delivered per second with 1, 2, 4 and 8 worker processes, on one Redis and on a
local Redis Cluster (three masters, a replica each: ``questbot_testing/redis_cluster.py``).

    .venv/bin/python scripts/bench_scale.py                # 1, 2, 4, 8 workers, both
    .venv/bin/python scripts/bench_scale.py --quick        # 1 and 4 workers, fewer effects

Each worker is a process of its own running the production effect runner
(``EffectRunner.run``, 16 quests at a time) on a client from ``bot.journal.wire.connect``. The
work is ``--trails`` thread trails with ``--effects`` replies each, queued with
``Journal.enqueue`` once every worker is up and before any starts (the clock starts when they
are told to go: queued while they ran, the bench's own queueing — 0.2 to 0.8 s for 128 trails
on two busy cores — was the limit of a four-worker run, not the workers); a reply's adapter
takes ``--latency-ms`` (50 ms) and does nothing else: the simulated GitHub write, without the
fake's HTTP (so this measures questbot's own scaling, not the fake's). Effects of one trail
are delivered in order, one runner at a time (its lease), so a run cannot take less than
``effects x latency``.

The last line is a JSON object: ``effects_per_s`` and ``effects_per_s_cluster`` by worker
count, ``speedup_4`` and ``speedup_4_cluster`` (4 workers ÷ 1). ``--commands`` prints the
commands the masters ran per effect, by name (``INFO commandstats``, commands inside scripts
included), ``--profile DIR`` keeps each worker's cProfile statistics.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import json
import os
import statistics
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bot.core import Effect, EffectType, Policy, effect_key
from bot.journal import Journal
from bot.journal.keys import quest_keys, thread_trail
from bot.journal.wire import cluster_nodes, connect, is_cluster_url, plain_client
from bot.runner import Adapters, EffectRunner
from questbot_testing.redis_cluster import RedisCluster
from questbot_testing.redis_server import RedisServer

ROOT = Path(__file__).resolve().parents[1]

SHARDS = 16
CONCURRENCY = 16
"""Deliveries a worker runs at once (the production runner's default)."""
QUEUERS = 16
"""Enqueues at a time, before the workers start."""


def trails(count: int) -> list[str]:
    return [thread_trail("bench/scale", n + 1) for n in range(count)]


def replies(trail: str, count: int) -> list[Effect]:
    kind = EffectType.REPLY_COMMENT
    return [Effect(key=effect_key(trail, 0, kind.value, f"c-{n}", 0), type=kind,
                   quest_id=trail, revision=0, event_id=f"c-{n}", occurrence=0,
                   payload={"body": f"reply {n}"}) for n in range(count)]


async def warm(client: Any) -> None:
    """Open the connections ``CONCURRENCY`` deliveries at once use, before the clock starts:
    each costs a connect and redis-py's handshake (HELLO, CLIENT SETINFO, the package's
    version read from its metadata), about 3 ms of a busy core — start-up, not work."""
    import redis.asyncio

    if isinstance(client, redis.asyncio.RedisCluster):
        await client.initialize()
        for node in client.get_primaries():
            await asyncio.gather(*(client.execute_command("PING", target_nodes=node)
                                   for _ in range(CONCURRENCY + 4)))
    else:
        await asyncio.gather(*(client.ping() for _ in range(CONCURRENCY + 4)))


async def worker(url: str, name: str, latency_s: float, profile_to: str = "") -> None:
    """One worker process: ready once its groups exist, then the effect runner from the line
    ``go`` on stdin until stdin closes; with ``profile_to``, its cProfile statistics are
    written there."""
    client = connect(url, socket_timeout=5)
    journal = Journal(client, shards=SHARDS)

    written = 0

    async def write(_effect: Effect) -> None:
        nonlocal written
        await asyncio.sleep(latency_s)
        written += 1

    runner = EffectRunner(journal, Adapters({EffectType.REPLY_COMMENT: write}), Policy(),
                          consumer=name, concurrency=CONCURRENCY)
    await runner.setup()
    await warm(client)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()

    def closed() -> None:  # stdin at its end stays readable: without this the loop spins
        loop.remove_reader(sys.stdin.fileno())
        stop.set()

    profile = cProfile.Profile() if profile_to else None
    print("ready", flush=True)
    if os.read(sys.stdin.fileno(), 3) != b"go\n":
        return
    loop.add_reader(sys.stdin.fileno(), closed)
    before = time.process_time()
    if profile is not None:
        profile.enable()
    await runner.run(stop, block_ms=200)
    if profile is not None:
        profile.disable()
        profile.dump_stats(profile_to)
    print(f"cpu {time.process_time() - before:.4f}", flush=True)  # after start-up
    print(f"wrote {written}", flush=True)
    await client.aclose()


def masters(url: str) -> list[Any]:
    """A plain client to every master behind ``url`` (the one server, or the cluster's)."""
    import redis

    if not is_cluster_url(url):
        return [redis.Redis.from_url(url)]
    nodes = [redis.Redis(host=h, port=p) for h, p in cluster_nodes(url)]
    return [n for n in nodes if n.info("replication")["role"] == "master"]


def commandstats(nodes: list[Any]) -> tuple[Counter[str], int]:
    """Calls by command summed over ``nodes`` (commands run inside scripts included), and
    the microseconds they took."""
    calls: Counter[str] = Counter()
    usec = 0
    for node in nodes:
        for name, stat in node.info("commandstats").items():
            calls[name.removeprefix("cmdstat_")] += int(stat["calls"])
            usec += int(stat["usec"])
    return calls, usec


async def wait_done(client: Any, names: list[str], per_trail: int, start: float) -> None:
    """Until every trail's effects are all recorded delivered: one ``HLEN`` a look, on the
    first trail not yet complete (a complete one stays so) — the bench's own reads must not
    take the cores from the workers it measures."""
    at = 0
    while at < len(names):
        if int(await client.hlen(quest_keys(names[at]).done)) >= per_trail:
            at += 1
            continue
        if time.monotonic() - start > 300:
            raise RuntimeError(f"trail {names[at]} not delivered in 300 s")
        await asyncio.sleep(0.005)


@dataclass
class Run:
    rate: float
    """Effects per second."""
    cpu_ms: float
    """The workers' CPU per effect, after start-up."""
    bench_cpu_ms: float
    """The bench process's own CPU per effect (queueing and watching)."""
    commands: Counter[str]
    """Commands per effect (times the effects) the masters ran, by name."""
    redis_us: float
    """The masters' microseconds per effect running commands."""
    shares: list[int]
    """The effects each worker wrote."""
    queue_s: float
    """How long queueing the work took (before the clock starts)."""


async def one_run(url: str, workers: int, n_trails: int, n_effects: int,
                  latency_ms: int, profile: str = "") -> Run:
    cpu = 0.0
    shares: list[int] = []
    client = plain_client(url)
    nodes = masters(url)
    procs = [subprocess.Popen(
        [sys.executable, __file__, "--worker", url, f"w{n}", str(latency_ms),
         f"{profile}-{workers}w-{n}.prof" if profile else ""],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, env={**os.environ,
                                                           "PYTHONPATH": str(ROOT)})
        for n in range(workers)]
    total = n_trails * n_effects
    try:
        for p in procs:
            assert p.stdout is not None
            if p.stdout.readline().strip() != b"ready":
                raise RuntimeError("a worker did not start")
        journal = Journal(client, shards=SHARDS)
        names = trails(n_trails)
        gate = asyncio.Semaphore(QUEUERS)

        async def queue(trail: str) -> None:
            async with gate:
                await journal.enqueue(trail, replies(trail, n_effects))

        queued = time.monotonic()
        await asyncio.gather(*(queue(trail) for trail in names))
        queued = time.monotonic() - queued
        calls_before, usec_before = commandstats(nodes)
        bench_before = time.process_time()
        start = time.monotonic()
        for p in procs:
            assert p.stdin is not None
            p.stdin.write(b"go\n")
            p.stdin.flush()
        await wait_done(client, names, n_effects, start)
        rate = total / (time.monotonic() - start)
        bench_cpu = time.process_time() - bench_before
        calls_after, usec_after = commandstats(nodes)
    finally:
        for p in procs:
            try:
                out, _ = p.communicate(timeout=10)  # closes its stdin: the worker stops
                for line in out.decode().splitlines():
                    if line.startswith("cpu "):
                        cpu += float(line.split()[1])
                    elif line.startswith("wrote "):
                        shares.append(int(line.split()[1]))
            except subprocess.TimeoutExpired:
                p.kill()
        await client.aclose()
        for node in nodes:
            node.close()
    calls_after.subtract(calls_before)
    return Run(rate, cpu * 1000 / total, bench_cpu * 1000 / total,
               +calls_after, (usec_after - usec_before) / total, sorted(shares), queued)


async def series(url: str, counts: list[int], args: argparse.Namespace,
                 flush: Callable[[], object], label: str) -> dict[int, float]:
    """Effects per second by worker count (the median of ``--repeat`` runs)."""
    out: dict[int, float] = {}
    total = args.trails * args.effects
    for workers in counts:
        rates = []
        for n in range(args.repeat):
            flush()
            run = await one_run(url, workers, args.trails, args.effects, args.latency_ms,
                                f"{args.profile}/{label}-{n}" if args.profile else "")
            rates.append(run.rate)
            print(f"  {workers} worker(s): {run.rate:8.1f} effects/s (queued in "
                  f"{run.queue_s * 1000:.0f} ms), workers' CPU "
                  f"{run.cpu_ms:.2f} ms an effect (the bench's own {run.bench_cpu_ms:.2f}), "
                  f"Redis {run.redis_us:.0f} µs and "
                  f"{run.commands.total() / total:.1f} commands an effect; each wrote "
                  f"{'/'.join(map(str, run.shares))}", flush=True)
            if args.commands:
                print("    " + ", ".join(f"{name} {n / total:.2f}"
                                         for name, n in run.commands.most_common()),
                      flush=True)
        if args.repeat > 1:
            print(f"  {workers} worker(s): {min(rates):.1f} to {max(rates):.1f} effects/s over "
                  f"{args.repeat} runs", flush=True)
        out[workers] = round(statistics.median(rates), 1)
    return out


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        asyncio.run(worker(sys.argv[2], sys.argv[3], int(sys.argv[4]) / 1000,
                           sys.argv[5] if len(sys.argv) > 5 else ""))
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="1 and 4 workers, fewer effects")
    parser.add_argument("--trails", type=int, default=128)
    parser.add_argument("--effects", type=int, default=8, help="effects per trail")
    parser.add_argument("--latency-ms", type=int, default=50)
    parser.add_argument("--commands", action="store_true",
                        help="the commands the masters ran an effect, by name")
    parser.add_argument("--profile", metavar="DIR", default="",
                        help="write each worker's cProfile statistics in DIR")
    parser.add_argument("--only", choices=["single", "cluster"], default="",
                        help="one backend only")
    parser.add_argument("--workers", default="", metavar="N,N",
                        help="worker counts (default 1,2,4,8; --quick 1,4)")
    parser.add_argument("--repeat", type=int, default=1,
                        help="runs of each worker count; the JSON has their median")
    args = parser.parse_args()
    counts = [1, 4] if args.quick else [1, 2, 4, 8]
    if args.workers:
        counts = [int(n) for n in args.workers.split(",")]
    if args.quick:
        args.trails, args.effects = min(args.trails, 64), min(args.effects, 4)
    if args.profile:
        Path(args.profile).mkdir(parents=True, exist_ok=True)
    results: dict[str, object] = {"trails": args.trails, "effects_per_trail": args.effects,
                                  "latency_ms": args.latency_ms}
    suffixes = []
    if args.only != "cluster":
        server = RedisServer()
        server.start()
        try:
            import redis

            print("one Redis:", flush=True)
            single = redis.Redis.from_url(server.url)
            results["effects_per_s"] = asyncio.run(series(server.url, counts, args,
                                                          single.flushall, "single"))
            single.close()
        finally:
            server.cleanup()
        suffixes.append("")
    if args.only != "single":
        cluster = RedisCluster()
        cluster.start()
        try:
            print("Redis Cluster (3 masters, a replica each):", flush=True)
            results["effects_per_s_cluster"] = asyncio.run(series(cluster.url, counts, args,
                                                                  cluster.flush, "cluster"))
        finally:
            cluster.cleanup()
        suffixes.append("_cluster")
    for suffix in suffixes:
        rates = results[f"effects_per_s{suffix}"]
        assert isinstance(rates, dict)
        if 1 in rates and 4 in rates:
            results[f"speedup_4{suffix}"] = round(rates[4] / rates[1], 2)
    print(json.dumps(results))


if __name__ == "__main__":
    main()
