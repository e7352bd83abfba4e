"""An effect-runner process for the crash test, with a recording adapter.

The adapter is idempotent by effect key the way a real one is (check, then write): it counts
every call in ``rec:calls`` and writes once per key into ``rec:writes``. For ``request_spend``
it reports an outcome event, which goes back through ``Journal.apply``.

Usage: python -m tests.journal.proc_runner URL CONSUMER
Prints ``ready`` once its consumer groups exist, then delivers until killed.
"""

from __future__ import annotations

import asyncio
import os
import random
import sys
from collections.abc import Sequence

import redis.asyncio

from bot.core import EVENT_ADAPTER, Effect, EffectType, Event, Policy
from bot.journal import Journal
from bot.runner import Adapters, EffectRunner, Leases

SHARDS = 4
CLAIM_IDLE_S = 0.3


def recording_adapters(client: redis.asyncio.Redis) -> Adapters:
    async def record(effect: Effect) -> Sequence[Event] | None:
        await client.hincrby("rec:calls", effect.key, 1)
        await asyncio.sleep(random.uniform(0, 0.004))
        await client.hsetnx("rec:writes", effect.key, os.getpid())
        if effect.type is EffectType.REQUEST_SPEND:
            return [EVENT_ADAPTER.validate_python({
                "type": "usage_recorded", "id": f"receipt:{effect.key}",
                "quest_id": effect.quest_id, "at": "2026-01-01T00:00:00Z", "tokens": 1})]
        return None

    return Adapters({t: record for t in EffectType})


def runner(client: redis.asyncio.Redis, consumer: str) -> EffectRunner:
    journal = Journal(client, shards=SHARDS)
    return EffectRunner(journal, recording_adapters(client), Policy(), consumer=consumer,
                        leases=Leases(lease_s=CLAIM_IDLE_S * 0.8, heartbeat_s=CLAIM_IDLE_S / 4,
                                      claim_idle_s=CLAIM_IDLE_S), concurrency=16)


async def main(url: str, consumer: str) -> None:
    client = redis.asyncio.Redis.from_url(url)
    r = runner(client, consumer)
    await r.setup()
    print("ready", flush=True)
    while True:
        await r.run_once(block_ms=50)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
