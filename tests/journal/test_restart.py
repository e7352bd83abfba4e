"""``redis-server`` (AOF, ``appendfsync always``) SIGKILLed while events are being applied and
restarted: every event whose apply returned is still in its journal, and each quest's snapshot
is still the fold of its journal."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator

import pytest
import redis.asyncio

from bot.core import Event
from bot.journal import Journal, rebuild
from questbot_testing.journals import JournalBuilder
from questbot_testing.redis_server import RedisServer
from tests.journal.conftest import POLICY


@pytest.fixture
def server() -> Iterator[RedisServer]:
    s = RedisServer(appendonly=True)
    s.start()
    try:
        yield s
    finally:
        s.cleanup()


def workload(quests: int, spends: int) -> list[list[Event]]:
    out = []
    for n in range(quests):
        b = JournalBuilder(f"q-{n}").sense()
        for s in range(spends):
            b.add("spend_requested", amount_cents=s, purpose="tokens")
        out.append(b.events)
    return out


@pytest.mark.slow
async def test_acknowledged_events_survive_a_redis_crash(server: RedisServer) -> None:
    journals = workload(8, 200)
    acked: set[tuple[str, str]] = set()
    client = redis.asyncio.Redis.from_url(server.url)
    journal = Journal(client, shards=4, durable=True)

    async def writer(events: list[Event]) -> None:
        for event in events:
            await journal.apply(event, POLICY)
            acked.add((event.quest_id, event.id))

    tasks = [asyncio.create_task(writer(events)) for events in journals]
    while len(acked) < 300:
        await asyncio.sleep(0.005)
    server.kill()
    for task in tasks:
        with contextlib.suppress(Exception):
            await task
    with contextlib.suppress(Exception):
        await client.aclose()
    assert len(acked) < sum(len(e) for e in journals), "the crash came after the last write"
    server.start()
    client = redis.asyncio.Redis.from_url(server.url)
    try:
        journal = Journal(client, shards=4)
        for n in range(len(journals)):
            stored = {e.id for e in await journal.events(f"q-{n}")}
            assert {eid for qid, eid in acked if qid == f"q-{n}"} <= stored
            assert (await rebuild(journal, f"q-{n}", POLICY)).matches
        # the interrupted writers finish by applying everything again: nothing twice
        for events in journals:
            await journal.apply_many(events, POLICY)
        for n, events in enumerate(journals):
            assert [e.id for e in await journal.events(f"q-{n}")] == [e.id for e in events]
    finally:
        await client.aclose()
