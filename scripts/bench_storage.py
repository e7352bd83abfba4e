"""Storage benchmark: Redis bytes per quest before and after compaction of ended quests.

Runs the demo's story once (the real web process and worker, the model agent against the
recorded model server, the fake GitHub) to a closed quest — the quest the issue measured at
42.8 KB — and copies its keys (``DUMP``/``RESTORE``, each copy under a quest id of its own,
with its index entries) to ``--quests`` quests. Then it compacts every one and reports
Redis's ``used_memory`` per quest before (what a quest holds while it lives, and after it ends
until it is compacted) and after, the bytes of the demo quest's own keys either way, and
checks that a replay of compacted quests is the replay of the originals.

    .venv/bin/python scripts/bench_storage.py               # 10,000 ended quests
    .venv/bin/python scripts/bench_storage.py --quests 200  # seconds, for tests

Starts its own redis-server (no AOF) unless REDIS_URL is set (then it must be an empty Redis
of its own: the figures are ``used_memory`` deltas). The last line printed is a JSON object:
``bytes_per_live_quest``, ``bytes_per_ended_quest``, ``redis_used_memory_ended`` (for all the
quests, compacted), ``quests``, ``replay_identical`` and the demo quest's own key bytes.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
from typing import Any

import redis.asyncio

from bot.core import Policy
from bot.journal.compaction import Outcome, _section_keys
from bot.journal.keys import (
    compaction_due_key,
    fingerprint_key,
    quest_gh_key,
    quest_keys,
    repo_quests_key,
    thread_trail,
)
from bot.journal.lessons import lesson_trail
from bot.journal.recovery import replay_recorded
from bot.worker.compaction_sweep import compact_ended
from questbot_testing.modelserver.demo import demo_model
from questbot_testing.redis_server import RedisServer
from questbot_testing.scenario import Story, main_line
from questbot_testing.stack import Stack, virtual_pacing

POLICY = Policy()


async def demo_quest(url: str) -> str:
    """The demo's story to a closed quest; its id. GitHub's pacing keeps its figures and
    skips its waits (a write a second, ~25 s of the story): what is measured is bytes."""
    server, endpoint = await demo_model()
    limits, pace_time = virtual_pacing()
    stack = await Stack(url, model=endpoint, limits=limits, pace_time=pace_time).start()
    try:
        story = Story(stack)
        await main_line(story)
        await stack.settle()
        return story.quest_id
    finally:
        await stack.stop()
        await server.close()


async def quest_bytes(client: redis.asyncio.Redis, quest_id: str) -> dict[str, int]:
    """``MEMORY USAGE`` of each of the quest's keys that exists."""
    out = {}
    for name, key in _section_keys(quest_id).items():
        used = await client.memory_usage(key, samples=0)
        if used:
            out[name] = int(used)
    return out


async def used_memory(client: redis.asyncio.Redis) -> int:
    await client.execute_command("MEMORY", "PURGE")
    return int((await client.info("memory"))["used_memory"])


def trail_keys(trail: str) -> list[str]:
    k = quest_keys(trail)
    return [k.outbox, k.done, k.tries, k.retry_at, k.failures, k.lease, quest_gh_key(trail)]


async def copies(client: redis.asyncio.Redis, template: str, count: int) -> list[str]:
    """``count`` quests holding the template's keys, each under an id of the same length, with
    its entries in the repository, fingerprint and due-for-compaction indexes, and the trails
    it leaves in other slots: its lesson runs' and its pull request's thread's (a number of
    its own)."""
    _v, raw = await client.hmget(_section_keys(template)["snap"], ["v", "quest"])
    quest = json.loads(raw)["data"] if raw else {}
    repo, fp = quest.get("repo", "octo/sample"), quest.get("fingerprint", "fp")
    dumps = {name: await client.dump(key) for name, key in _section_keys(template).items()}
    dumps = {name: blob for name, blob in dumps.items() if blob is not None}
    pr = await client.hget(quest_gh_key(template), "pr")
    trails = [(lesson_trail, lesson_trail(template))]
    if pr is not None:
        trails.append((None, thread_trail(repo, int(pr))))
    trail_dumps = [(made, [await client.dump(key) for key in trail_keys(trail)])
                   for made, trail in trails]
    ids = [f"{template[:-6]}{n:06d}" for n in range(count)]
    for start in range(0, count, 500):
        pipe = client.pipeline(transaction=False)
        for n, qid in enumerate(ids[start:start + 500], start=start):
            keys = _section_keys(qid)
            for name, blob in dumps.items():
                pipe.restore(keys[name], 0, blob, replace=True)
            number = 100_000 + n
            if pr is not None:
                pipe.hset(keys["gh"], "pr", number)
            for made, blobs in trail_dumps:
                trail = made(qid) if made else thread_trail(repo, number)
                for key, blob in zip(trail_keys(trail), blobs, strict=True):
                    if blob is not None:
                        pipe.restore(key, 0, blob, replace=True)
            pipe.sadd(repo_quests_key(repo), qid)
            pipe.sadd(fingerprint_key(repo, fp), qid)
            pipe.zadd(compaction_due_key(), {qid: 0})
        await pipe.execute()
    return ids


async def compact_all(client: redis.asyncio.Redis, ids: list[str]) -> int:
    done = 0
    for start in range(0, len(ids), 50):
        outcomes = await asyncio.gather(*(compact_ended(client, q) for q in ids[start:start + 50]))
        done += sum(o is Outcome.COMPACTED for o in outcomes)
        await client.zrem(compaction_due_key(), *ids[start:start + 50])
    return done


async def run(url: str, count: int) -> dict[str, Any]:
    client = redis.asyncio.Redis.from_url(url)
    template = await demo_quest(url)
    own_before = await quest_bytes(client, template)
    sample = [template]
    before_replay = [await replay_recorded(url, q, POLICY) for q in sample]
    empty = await used_memory(client)
    ids = await copies(client, template, count)
    live = await used_memory(client)
    sample += ids[:: max(1, count // 20)]
    before_replay += [await replay_recorded(url, q, POLICY) for q in sample[1:]]
    start = time.perf_counter()
    worker = redis.asyncio.Redis.from_url(url)  # its connections' buffers are not the quests'
    compacted = await compact_all(worker, [template, *ids])
    seconds = time.perf_counter() - start
    await worker.aclose()
    await asyncio.sleep(1.5)  # Redis frees a closed client's buffers in its cron
    ended = await used_memory(client)
    own_after = await quest_bytes(client, template)
    after_replay = [await replay_recorded(url, q, POLICY) for q in sample]
    identical = all(a.result == b.result and a.stored == b.stored and a.matches
                    for a, b in zip(before_replay, after_replay, strict=True))
    await client.aclose()
    return {
        "quests": count,
        "compacted": compacted,
        "bytes_per_live_quest": round((live - empty) / count),
        "bytes_per_ended_quest": round((ended - empty) / count),
        "redis_used_memory_before": live,
        "redis_used_memory_ended": ended,
        "redis_used_memory_empty": empty,
        "demo_quest_key_bytes_before": own_before,
        "demo_quest_key_bytes_after": own_after,
        "compaction_seconds": round(seconds, 2),
        "replay_identical": identical,
        "replays_compared": len(sample),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quests", type=int, default=10_000,
                        help="ended quests to hold (default 10,000)")
    args = parser.parse_args()
    server = None
    url = os.environ.get("REDIS_URL")
    if not url:
        server = RedisServer(appendonly=False)
        server.start()
        url = server.url
    try:
        figures = asyncio.run(run(url, args.quests))
    finally:
        if server is not None:
            server.stop()
    print(f"{figures['quests']} quests: {figures['bytes_per_live_quest']} bytes each before "
          f"compaction, {figures['bytes_per_ended_quest']} after; Redis holds "
          f"{figures['redis_used_memory_ended'] / 1e6:.1f} MB for them compacted "
          f"({figures['compaction_seconds']} s to compact); replay identical: "
          f"{figures['replay_identical']}", file=sys.stderr)
    print(json.dumps(figures))
    return 0 if figures["replay_identical"] else 1


if __name__ == "__main__":
    sys.exit(main())
