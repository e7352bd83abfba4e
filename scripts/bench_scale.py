"""Effects delivered per second with 1, 2, 4 and 8 worker processes, on one Redis and on a
local Redis Cluster (three masters, a replica each: ``tests/redis_cluster.py``).

    .venv/bin/python scripts/bench_scale.py                # 1, 2, 4, 8 workers, both
    .venv/bin/python scripts/bench_scale.py --quick        # 1 and 4 workers, fewer effects

Each worker is a process of its own running the production effect runner
(``EffectRunner.run``, 16 quests at a time) on a client from ``bot.journal.wire.connect``. The
work is ``--trails`` thread trails with ``--effects`` replies each, queued with
``Journal.enqueue`` once every worker is up; a reply's adapter takes ``--latency-ms`` (50 ms)
and does nothing else: the simulated GitHub write, without the fake's HTTP (so this measures
questbot's own scaling, not the fake's). Effects of one trail are delivered in order, one
runner at a time (its lease), so a run cannot take less than ``effects x latency``.

The last line is a JSON object: ``effects_per_s`` and ``effects_per_s_cluster`` by worker
count, ``speedup_4`` and ``speedup_4_cluster`` (4 workers ÷ 1).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bot.core import Effect, EffectType, Policy, effect_key  # noqa: E402
from bot.journal import Adapters, EffectRunner, Journal  # noqa: E402
from bot.journal.keys import quest_keys, thread_trail  # noqa: E402
from bot.journal.wire import connect, plain_client  # noqa: E402
from tests.redis_cluster import RedisCluster  # noqa: E402
from tests.redis_server import RedisServer  # noqa: E402

SHARDS = 16


def trails(count: int) -> list[str]:
    return [thread_trail("bench/scale", n + 1) for n in range(count)]


def replies(trail: str, count: int) -> list[Effect]:
    kind = EffectType.REPLY_COMMENT
    return [Effect(key=effect_key(trail, 0, kind.value, f"c-{n}", 0), type=kind,
                   quest_id=trail, revision=0, event_id=f"c-{n}", occurrence=0,
                   payload={"body": f"reply {n}"}) for n in range(count)]


async def worker(url: str, name: str, latency_s: float) -> None:
    """One worker process: the effect runner until stdin closes."""
    client = connect(url, socket_timeout=5)
    journal = Journal(client, shards=SHARDS)

    async def write(_effect: Effect) -> None:
        await asyncio.sleep(latency_s)

    runner = EffectRunner(journal, Adapters({EffectType.REPLY_COMMENT: write}), Policy(),
                          consumer=name)
    await runner.setup()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    loop.add_reader(sys.stdin.fileno(), stop.set)
    print("ready", flush=True)
    before = time.process_time()
    await runner.run(stop, block_ms=200)
    print(f"cpu {time.process_time() - before:.4f}", flush=True)  # after start-up
    await client.aclose()


async def one_run(url: str, workers: int, n_trails: int, n_effects: int,
                  latency_ms: int) -> tuple[float, float]:
    """Effects per second, and the workers' CPU milliseconds per effect (after start-up)."""
    cpu = 0.0
    client = plain_client(url)
    procs = [subprocess.Popen(
        [sys.executable, __file__, "--worker", url, f"w{n}", str(latency_ms)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, env={**os.environ,
                                                           "PYTHONPATH": str(ROOT)})
        for n in range(workers)]
    try:
        for p in procs:
            assert p.stdout is not None
            if p.stdout.readline().strip() != b"ready":
                raise RuntimeError("a worker did not start")
        journal = Journal(client, shards=SHARDS)
        names = trails(n_trails)
        start = time.monotonic()
        for trail in names:
            await journal.enqueue(trail, replies(trail, n_effects))
        total = n_trails * n_effects
        while True:
            pipe = client.pipeline(transaction=False)
            for trail in names:
                pipe.hlen(quest_keys(trail).done)
            done = sum(int(n) for n in await pipe.execute())
            if done >= total:
                break
            if time.monotonic() - start > 300:
                raise RuntimeError(f"only {done} of {total} effects delivered in 300 s")
            await asyncio.sleep(0.01)
        rate = total / (time.monotonic() - start)
    finally:
        for p in procs:
            try:
                out, _ = p.communicate(timeout=10)  # closes its stdin: the worker stops
                cpu += sum(float(line.split()[1]) for line in out.decode().splitlines()
                           if line.startswith("cpu "))
            except subprocess.TimeoutExpired:
                p.kill()
        await client.aclose()
    return rate, cpu * 1000 / (n_trails * n_effects)


async def series(url: str, counts: list[int], args: argparse.Namespace,
                 flush: Callable[[], object]) -> dict[int, float]:
    out: dict[int, float] = {}
    for workers in counts:
        flush()
        rate, cpu_ms = await one_run(url, workers, args.trails, args.effects, args.latency_ms)
        out[workers] = round(rate, 1)
        print(f"  {workers} worker(s): {rate:8.1f} effects/s, workers' CPU {cpu_ms:.2f} ms "
              "an effect", flush=True)
    return out


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        asyncio.run(worker(sys.argv[2], sys.argv[3], int(sys.argv[4]) / 1000))
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="1 and 4 workers, fewer effects")
    parser.add_argument("--trails", type=int, default=128)
    parser.add_argument("--effects", type=int, default=8, help="effects per trail")
    parser.add_argument("--latency-ms", type=int, default=50)
    args = parser.parse_args()
    counts = [1, 4] if args.quick else [1, 2, 4, 8]
    if args.quick:
        args.trails, args.effects = min(args.trails, 64), min(args.effects, 4)
    results: dict[str, object] = {"trails": args.trails, "effects_per_trail": args.effects,
                                  "latency_ms": args.latency_ms}
    server = RedisServer()
    server.start()
    try:
        import redis

        print("one Redis:", flush=True)
        single = redis.Redis.from_url(server.url)
        results["effects_per_s"] = asyncio.run(series(server.url, counts, args,
                                                      single.flushall))
        single.close()
    finally:
        server.cleanup()
    cluster = RedisCluster()
    cluster.start()
    try:
        print("Redis Cluster (3 masters, a replica each):", flush=True)
        results["effects_per_s_cluster"] = asyncio.run(series(cluster.url, counts, args,
                                                              cluster.flush))
    finally:
        cluster.cleanup()
    for suffix in ("", "_cluster"):
        rates = results[f"effects_per_s{suffix}"]
        assert isinstance(rates, dict)
        results[f"speedup_4{suffix}"] = round(rates[4] / rates[1], 2)
    print(json.dumps(results))


if __name__ == "__main__":
    main()
