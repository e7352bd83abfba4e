"""Effects no transition made (replies, reactions), queued on a trail and delivered once."""

from __future__ import annotations

import pytest
import redis.asyncio

from bot.core import Effect, EffectType, effect_key
from bot.journal import Journal
from bot.journal.keys import doorbell_key, quest_keys, shard_of, thread_trail
from bot.runner import EffectRunner, delivered
from questbot_testing.journals import JournalBuilder
from tests.journal.conftest import POLICY, Recorder

pytestmark = pytest.mark.cluster_too

TRAIL = thread_trail("Octo/Demo", 7)


def said(trail: str, cause: str, type_: EffectType = EffectType.REPLY_COMMENT) -> Effect:
    return Effect(key=effect_key(trail, 0, type_.value, cause, 0), type=type_, quest_id=trail,
                  revision=0, event_id=cause, occurrence=0, payload={"body": cause})


async def drain(runner: EffectRunner, rounds: int = 10) -> None:
    for _ in range(rounds):
        await runner.run_once()


async def doorbells(client: redis.asyncio.Redis, trail: str, journal: Journal) -> int:
    return int(await client.xlen(doorbell_key(shard_of(trail, journal.shards))))


def test_a_thread_trail_is_its_repository_and_number() -> None:
    assert TRAIL == "octo/demo#7"
    assert quest_keys(TRAIL).outbox == "q:{octo/demo#7}:outbox"


async def test_each_key_is_queued_once_and_delivered_once(
        journal: Journal, recorder: Recorder, redis_async: redis.asyncio.Redis) -> None:
    reply, react = said(TRAIL, "comment-5-1"), said(TRAIL, "comment-5", EffectType.REACT)
    assert await journal.enqueue(TRAIL, [react, reply, reply]) == 2
    assert await journal.enqueue(TRAIL, [reply, react]) == 0  # still queued: a redelivery
    assert [key for _, key in await journal.outbox(TRAIL)] == [react.key, reply.key]
    runner = EffectRunner(journal, recorder.adapters(), POLICY, consumer="a")
    await runner.setup()
    await drain(runner)
    assert dict(recorder.calls) == {react.key: 1, reply.key: 1}
    assert await delivered(redis_async, TRAIL) == {react.key: "ok", reply.key: "ok"}
    assert await journal.enqueue(TRAIL, [reply]) == 0  # delivered: a later redelivery
    later = said(TRAIL, "comment-6-1")
    assert await journal.enqueue(TRAIL, [later, reply]) == 1
    await drain(runner)
    assert dict(recorder.calls) == {react.key: 1, reply.key: 1, later.key: 1}


async def test_the_doorbell_rings_while_anything_waits(
        journal: Journal, redis_async: redis.asyncio.Redis) -> None:
    reply = said(TRAIL, "comment-5-1")
    assert await doorbells(redis_async, TRAIL, journal) == 0
    await journal.enqueue(TRAIL, [reply])
    assert await doorbells(redis_async, TRAIL, journal) == 1
    # a crash after the script and before a runner saw the ring: the redelivery rings again
    await journal.enqueue(TRAIL, [reply])
    assert await doorbells(redis_async, TRAIL, journal) == 2
    assert await journal.enqueue(TRAIL, []) == 0
    assert await doorbells(redis_async, TRAIL, journal) == 2


async def test_a_quest_trail_takes_enqueued_effects_after_its_own(
        journal: Journal, recorder: Recorder) -> None:
    b = JournalBuilder("q-1").sense()
    await journal.apply_many(b.events, POLICY)
    own = [key for _, key in await journal.outbox("q-1")]
    extra = said("q-1", "comment-9-1")
    assert await journal.enqueue("q-1", [extra]) == 1
    assert [key for _, key in await journal.outbox("q-1")] == [*own, extra.key]
    runner = EffectRunner(journal, recorder.adapters(), POLICY, consumer="a")
    await runner.setup()
    await drain(runner)
    assert list(recorder.calls) == [*own, extra.key]


async def test_enqueue_is_durable_and_reloads_a_lost_script(
        redis_async: redis.asyncio.Redis) -> None:
    journal = Journal(redis_async, shards=4, durable=True)
    await redis_async.script_flush()
    assert await journal.enqueue(TRAIL, [said(TRAIL, "comment-5-1")]) == 1
    # the write waited for the AOF (on a cluster: for a replica, which WAIT reports)
    assert journal.durability.supported is not None or journal.durability.cluster


async def test_an_effect_of_another_trail_is_refused(journal: Journal) -> None:
    with pytest.raises(ValueError, match="not octo/demo#7"):
        await journal.enqueue(TRAIL, [said("q-1", "comment-5-1")])
    assert await journal.outbox(TRAIL) == []
