"""A compactor process for the crash test: compacts the quests it is given, in a random order,
again and again (a quest brought back meanwhile is compacted again), until it is killed.

Usage: python -m tests.journal.proc_compactor URL QUEST_ID...
Prints ``ready``, then compacts until killed.
"""

from __future__ import annotations

import asyncio
import random
import sys

import redis.asyncio

from bot.journal.compaction import compact


async def main(url: str, quests: list[str]) -> None:
    client = redis.asyncio.Redis.from_url(url)
    print("ready", flush=True)
    while True:
        random.shuffle(quests)
        for qid in quests:
            await compact(client, qid, shards=4)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2:]))
