"""A separate OS process that applies usage receipts to one quest (for the concurrency test).

Usage: python -m tests.journal.proc_applier URL QUEST_ID PREFIX COUNT SHARED
"""

from __future__ import annotations

import asyncio
import sys

import redis.asyncio

from bot.core import EVENT_ADAPTER, Event, Policy
from bot.journal import Journal
from questbot_testing.journals import EPOCH


def receipt(quest_id: str, event_id: str, tokens: int) -> Event:
    return EVENT_ADAPTER.validate_python({"type": "usage_recorded", "id": event_id,
                                          "quest_id": quest_id, "at": EPOCH,
                                          "tokens": tokens})


async def main(url: str, quest_id: str, prefix: str, count: int, shared: int) -> None:
    client = redis.asyncio.Redis.from_url(url)
    journal = Journal(client, shards=4)
    policy = Policy()
    try:
        for n in range(count):
            await journal.apply(receipt(quest_id, f"{prefix}-{n}", 1), policy)
            if n < shared:
                await journal.apply(receipt(quest_id, f"shared-{n}", 1), policy)
    finally:
        await client.aclose()


if __name__ == "__main__":
    url, quest_id, prefix, count, shared = sys.argv[1:6]
    asyncio.run(main(url, quest_id, prefix, int(count), int(shared)))
