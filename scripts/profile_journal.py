"""Where one journal apply's costs go, beside raw pipelined XADD of the same bytes: CPU time of
this process (the client) and of redis-server (``INFO cpu``) per event, bytes sent per event,
round trips per event, and Redis's own per-command time (``INFO commandstats``; commands a
script calls are counted inside ``evalsha`` and again on their own line). With ``--profile``,
a cProfile of the client side of the applies (sorted by own time).

CPU time, unlike ``bench_journal.py``'s wall-clock rates, holds roughly still when other work
shares the machine, so this is the figure to compare two versions of the apply path by (run
it in each tree, alternating).

    .venv/bin/python scripts/profile_journal.py [--quests 600] [--profile]
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import pstats
import time
from typing import Any

import redis.asyncio
from bench_journal import bench_apply, bench_xadd, workload  # scripts/, run as a script

from bot.journal import wire
from questbot_testing.redis_server import RedisServer


async def server_stats(client: redis.asyncio.Redis) -> dict[str, Any]:
    stats = dict(await client.info("commandstats"))
    cpu = await client.info("cpu")
    net = await client.info("stats")
    stats["_cpu"] = float(cpu["used_cpu_sys"]) + float(cpu["used_cpu_user"])
    stats["_in"] = int(net["total_net_input_bytes"])
    return stats


def report(name: str, rate: float, n: int, cpu: float, trips: int, a: dict[str, Any],
           b: dict[str, Any]) -> dict[str, float]:
    server = (b["_cpu"] - a["_cpu"]) / n * 1e6
    figures = {"per_s": round(rate), "client_us": round(cpu / n * 1e6, 1),
               "server_us": round(server, 1), "bytes_in": round((b["_in"] - a["_in"]) / n),
               "trips": round(trips / n, 4)}
    print(f"{name:6}: {rate:8.0f}/s  client {figures['client_us']:6.1f} µs  server "
          f"{figures['server_us']:6.1f} µs  sent {figures['bytes_in']:5d} B  round trips "
          f"{figures['trips']:.4f}  (per event)")
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
        profile = cProfile.Profile() if args.profile else None
        t = time.process_time()
        if profile:
            profile.enable()
        rate = await bench_apply(server.url, events, args.batch, args.tasks)
        if profile:
            profile.disable()
        cpu = time.process_time() - t
        applied = report("apply", rate, n, cpu, trips[0], a, await server_stats(client))
        a, trips[0] = await server_stats(client), 0
        t = time.process_time()
        rate = await bench_xadd(server.url, events, args.batch, args.tasks)
        raw = report("xadd", rate, n, time.process_time() - t, 0, a, await server_stats(client))
        total = (raw["client_us"] + raw["server_us"]) / (applied["client_us"]
                                                         + applied["server_us"])
        print(f"CPU ratio (xadd's client + server CPU / apply's): {total:.3f}")
        if profile:
            pstats.Stats(profile).sort_stats("tottime").print_stats(args.top)
    finally:
        wire.Batch.execute = execute  # type: ignore[method-assign]
        await client.aclose()
        server.cleanup()


def cli() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quests", type=int, default=600, help="12 events each")
    p.add_argument("--batch", type=int, default=500)
    p.add_argument("--tasks", type=int, default=4)
    p.add_argument("--profile", action="store_true", help="cProfile the client side")
    p.add_argument("--top", type=int, default=25)
    asyncio.run(main(p.parse_args()))


if __name__ == "__main__":
    cli()
