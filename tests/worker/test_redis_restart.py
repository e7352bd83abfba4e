"""Redis killed (``kill -9``) and restarted on its AOF while workers run: every worker keeps
running — no loop ends on a connection error — and every effect is delivered once."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator, Sequence

import pytest
import redis.asyncio

from bot.core import EffectType, Event
from bot.journal import Journal, rebuild
from bot.journal.keys import doorbell_key, quest_keys
from bot.runner import REDIS_AWAY, delivered
from bot.worker.assembly import redis_client
from questbot_testing.journals import JournalBuilder
from questbot_testing.redis_server import RedisServer
from tests.journal.conftest import POLICY
from tests.worker.conftest import Workers, counts, until

QUESTS, RESTARTS, SHARDS = 12, 3, 16


@pytest.fixture
def server() -> Iterator[RedisServer]:
    s = RedisServer(appendonly=True)
    s.start()
    try:
        yield s
    finally:
        s.cleanup()


async def apply(journal: Journal, events: Sequence[Event]) -> None:
    """As the inbound consumer does: retry until the journal answers (a redelivery is
    absorbed as a duplicate)."""
    while True:
        try:
            await journal.apply_many(events, POLICY)
            return
        except REDIS_AWAY:
            await asyncio.sleep(0.1)


async def settled(client: redis.asyncio.Redis) -> bool:
    try:
        pipe = client.pipeline(transaction=False)
        for n in range(QUESTS):
            pipe.xlen(quest_keys(f"q-{n}").outbox)
        for s in range(SHARDS):
            pipe.xlen(doorbell_key(s))
        return not any(await pipe.execute())
    except REDIS_AWAY:
        return False


@pytest.mark.slow
async def test_workers_live_through_redis_restarts_and_deliver_every_effect_once(
        server: RedisServer, workers: Workers) -> None:
    client = redis_client(server.url)
    journal = Journal(client)
    procs = [workers.start(server.url, f"w{n}") for n in range(2)]
    builders = [JournalBuilder(f"q-{n}").sense() for n in range(QUESTS)]
    await apply(journal, [e for b in builders for e in b.events])
    for n in range(RESTARTS):
        await apply(journal, [b.add("spend_requested", amount_cents=n, purpose="more")
                              for b in builders])
        await asyncio.sleep(0.2)  # the workers are delivering
        server.kill()
        await asyncio.sleep(0.5)
        server.start()  # on its AOF: every acknowledged write is there
        await asyncio.sleep(0.3)
    await apply(journal, [b.add("spend_requested", amount_cents=99, purpose="after")
                          for b in builders])
    await until(lambda: settled(client), within=30, every=0.1)
    assert [p.poll() for p in procs] == [None, None], "a worker died with redis"
    effects = {e.key for b in builders for e in b.effects}
    writes = set(await counts(client, "rec:writes"))
    assert writes == effects, "an effect was lost"
    calls = await counts(client, "rec:calls")
    repeats = sum(calls.values()) - len(calls)
    assert repeats <= RESTARTS * 2 * 16, "an effect was redelivered with no restart to explain"
    for b in builders:
        assert set((await delivered(client, b.quest_id)).values()) == {"ok"}
        receipts = [e.id for e in await journal.events(b.quest_id)
                    if e.id.startswith("receipt:")]
        spends = sum(e.type is EffectType.REQUEST_SPEND for e in b.effects)
        assert len(receipts) == len(set(receipts)) == spends
        assert (await rebuild(journal, b.quest_id, POLICY)).matches
    await client.aclose()
