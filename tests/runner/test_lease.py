"""Leases that fit the work: short, kept by a heartbeat however long an adapter runs, lost only
to another runner; and every effect wakes a runner, however the doorbells fell."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Sequence
from typing import Any, cast

import pytest
import redis.asyncio

from bot.core import Effect, EffectType, Event
from bot.journal import Journal
from bot.journal.keys import doorbell_key, quest_keys
from bot.journal.scripts import ScriptSet
from bot.journal.wire import RedisClient
from bot.runner import Adapters, EffectRunner, Leases, delivered
from bot.runner.doorbells import sweep
from bot.runner.lease import Lease
from bot.runner.quest_delivery import _Outcome
from questbot_testing.journals import JournalBuilder
from tests.journal.conftest import POLICY, Recorder

pytestmark = pytest.mark.cluster_too

QUICK = Leases(lease_s=0.5, heartbeat_s=0.1, claim_idle_s=0.6, sweep_s=3600)
"""The production figures (10 s, 2 s, 12 s) scaled down twenty-fold."""


async def forget_doorbells(client: redis.asyncio.Redis, shards: int = 4) -> None:
    """What a crash between an apply and its doorbell leaves: effects nobody was told of."""
    for shard in range(shards):
        await client.xtrim(doorbell_key(shard), maxlen=0)


async def pending_doorbells(client: redis.asyncio.Redis, shards: int = 4) -> int:
    total = 0
    for shard in range(shards):
        total += int((await client.xpending(doorbell_key(shard), "runners"))["pending"])
    return total


def test_the_figures_are_checked() -> None:
    assert Leases().lease_s == 10 and Leases().claim_idle_s == 12  # the worker's defaults
    with pytest.raises(ValueError, match="must exceed lease_s"):
        Leases(lease_s=10, claim_idle_s=10)
    with pytest.raises(ValueError, match="shorter than lease_s"):
        Leases(lease_s=2, heartbeat_s=2)


async def test_a_slow_adapter_keeps_its_lease_and_its_doorbells(
        journal: Journal, recorder: Recorder, redis_async: redis.asyncio.Redis) -> None:
    """An adapter that runs four leases long is delivered once: its runner's heartbeat keeps
    the lease and the doorbell, so a second runner polling all along takes nothing over.
    (Leases of 1.5 s, beaten every 0.1 s: a heartbeat late by more than a lease is a lease
    honestly lost, and QUICK's 0.5 s was lost so on a loaded machine running the suite in
    parallel.)"""
    leases = Leases(lease_s=1.5, heartbeat_s=0.1, claim_idle_s=1.8, sweep_s=3600)
    b = JournalBuilder("q-1").sense()
    await journal.apply_many(b.events, POLICY)
    slow_key = b.effects[0].key
    started = asyncio.Event()

    async def slow(effect: Effect) -> Sequence[Event] | None:
        if effect.key == slow_key:
            started.set()
            await asyncio.sleep(4 * leases.lease_s)
        return await recorder(effect)

    one = EffectRunner(journal, Adapters({t: slow for t in EffectType}), POLICY,
                       consumer="one", leases=leases)
    two = EffectRunner(journal, recorder.adapters(), POLICY, consumer="two", leases=leases)
    first = asyncio.create_task(one.run_once())
    await started.wait()
    claimed = 0
    while not first.done():
        stats = await two.run_once()
        claimed += stats.claimed
        assert stats.delivered == 0, "the second runner delivered while the first held"
        await asyncio.sleep(0.05)
    assert (await first).delivered == len(b.effects)
    assert claimed == 0
    assert set(recorder.calls.values()) == {1} and len(recorder.calls) == len(b.effects)


async def test_a_runner_that_loses_its_lease_stops_its_adapter_and_records_nothing(
        journal: Journal, redis_async: redis.asyncio.Redis) -> None:
    b = JournalBuilder("q-1").sense()
    await journal.apply_many(b.events, POLICY)
    started, stopped = asyncio.Event(), asyncio.Event()

    async def forever(effect: Effect) -> None:
        started.set()
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            stopped.set()
            raise

    runner = EffectRunner(journal, Adapters({t: forever for t in EffectType}), POLICY,
                          consumer="stalled", leases=QUICK)
    run = asyncio.create_task(runner.run_once())
    await started.wait()
    # the runner stalled past its lease and another took the quest over
    await redis_async.set(quest_keys("q-1").lease, "another-runner", px=5000)
    stats = await asyncio.wait_for(run, timeout=2)
    assert stopped.is_set(), "the adapter went on running without the lease"
    assert stats.lost == 1 and stats.delivered == 0
    assert await delivered(redis_async, "q-1") == {}
    assert len(await journal.outbox("q-1")) == len(b.effects)
    assert await redis_async.get(quest_keys("q-1").lease) == b"another-runner"
    assert await pending_doorbells(redis_async) >= 1, "its doorbell must stay pending"


async def test_a_lease_lapsed_while_nobody_took_it_is_taken_back(
        journal: Journal, redis_async: redis.asyncio.Redis) -> None:
    lease = Lease(redis_async, journal.scripts, "q-1", "one", QUICK)
    assert await lease.hold()
    assert await lease.hold(), "a resent take finds its own token"
    await redis_async.delete(lease.key)  # lapsed while redis was away
    assert await lease.hold() and not lease.lost.is_set()
    other = Lease(redis_async, journal.scripts, "q-1", "two", QUICK)
    assert not await other.hold() and other.lost.is_set()
    await lease.release()
    assert await other.hold()


async def test_a_new_event_wakes_a_runner_when_the_first_doorbell_was_lost(
        journal: Journal, recorder: Recorder, redis_async: redis.asyncio.Redis) -> None:
    b = JournalBuilder("q-1").sense()
    await journal.apply_many(b.events, POLICY)
    await forget_doorbells(redis_async)
    await journal.apply(b.add("spend_requested", amount_cents=5, purpose="tokens"), POLICY)
    runner = EffectRunner(journal, recorder.adapters(), POLICY, consumer="a", leases=QUICK)
    for _ in range(3):
        await runner.run_once()
    assert set(recorder.calls) == {e.key for e in b.effects}
    assert await journal.outbox("q-1") == []


class Interleaved(EffectRunner):
    """Runs ``between`` once, right after the quest's outbox was read empty and before the
    lease is released: the moment a new effect's doorbell meets a lease still held."""

    between: asyncio.Event | None = None

    async def _drain(self, quest_id: str, lease: Lease, stats: object) -> _Outcome:
        outcome = await super()._drain(quest_id, lease, stats)  # type: ignore[arg-type]
        if outcome.drained and self.between is not None:
            self.between.set()
            self.between = None
            await asyncio.sleep(0.3)  # the test adds an effect meanwhile
        return outcome


async def test_a_doorbell_dropped_for_a_held_lease_is_answered_by_the_holder(
        journal: Journal, recorder: Recorder, redis_async: redis.asyncio.Redis) -> None:
    b = JournalBuilder("q-1").sense()
    await journal.apply_many(b.events, POLICY)
    holder = Interleaved(journal, recorder.adapters(), POLICY, consumer="holder", leases=QUICK)
    holder.between = asyncio.Event()
    other = EffectRunner(journal, recorder.adapters(), POLICY, consumer="other", leases=QUICK)
    between = holder.between
    serving = asyncio.create_task(holder.run_once())
    await between.wait()
    await journal.apply(b.add("spend_requested", amount_cents=5, purpose="tokens"), POLICY)
    stats = await other.run_once()  # finds the lease held: drops the doorbell
    assert stats.delivered == 0
    await serving
    assert set(recorder.calls) == {e.key for e in b.effects}
    assert set(recorder.calls.values()) == {1}
    assert await journal.outbox("q-1") == []
    assert await pending_doorbells(redis_async) == 0


async def test_the_sweep_rings_an_outbox_nobody_was_told_of(
        journal: Journal, recorder: Recorder, redis_async: redis.asyncio.Redis) -> None:
    for qid in ("q-1", "q-2", "q-3"):
        await journal.apply_many(JournalBuilder(qid).sense().events, POLICY)
    await forget_doorbells(redis_async)
    await redis_async.set(quest_keys("q-2").lease, "a-live-runner", px=5000)
    await journal.ring("q-3")
    assert await sweep(redis_async, 4, range(4)) == ["q-1"]  # q-2 is held, q-3 was told
    assert await sweep(redis_async, 4, range(4)) == []  # q-1 has its doorbell now
    runner = EffectRunner(journal, recorder.adapters(), POLICY, consumer="a", leases=QUICK)
    await runner.run_once()
    assert Counter(key.split(":")[0] for key in recorder.calls) == Counter(
        {"q-1": len(await delivered(redis_async, "q-1")),
         "q-3": len(await delivered(redis_async, "q-3"))})
    assert await journal.outbox("q-1") == [] and await journal.outbox("q-3") == []


async def test_the_worker_loop_sweeps_when_it_starts(
        journal: Journal, recorder: Recorder, redis_async: redis.asyncio.Redis) -> None:
    b = JournalBuilder("q-1").sense()
    await journal.apply_many(b.events, POLICY)
    await forget_doorbells(redis_async)
    runner = EffectRunner(journal, recorder.adapters(), POLICY, consumer="a", leases=QUICK)
    stop = asyncio.Event()
    loop = asyncio.create_task(runner.run(stop, block_ms=50))
    for _ in range(100):
        if len(recorder.calls) == len(b.effects):
            break
        await asyncio.sleep(0.02)
    stop.set()
    await loop
    assert set(recorder.calls) == {e.key for e in b.effects}


async def test_a_doorbell_for_a_quest_in_hand_waits_its_turn_without_spinning(
        journal: Journal, recorder: Recorder, redis_async: redis.asyncio.Redis,
        redis_kind: str) -> None:
    if redis_kind == "cluster":
        pytest.skip("on a cluster the doorbells are polled (25 to 100 ms apart) by design "
                    "(bot/runner/streams.py), so counting reads says nothing of spinning")
    b = JournalBuilder("q-1").sense()
    await journal.apply_many(b.events, POLICY)
    slow_key = b.effects[0].key
    started, finish = asyncio.Event(), asyncio.Event()

    async def slow(effect: Effect) -> Sequence[Event] | None:
        if effect.key == slow_key:
            started.set()
            await finish.wait()
        return await recorder(effect)

    runner = EffectRunner(journal, Adapters({t: slow for t in EffectType}), POLICY,
                          consumer="one", leases=QUICK)
    stop = asyncio.Event()
    loop = asyncio.create_task(runner.run(stop, block_ms=200))
    await started.wait()
    await journal.apply(b.add("spend_requested", amount_cents=5, purpose="tokens"), POLICY)
    await asyncio.sleep(0.3)  # the runner read the new doorbell: it waits for the delivery
    await redis_async.config_resetstat()
    await asyncio.sleep(1.0)
    stats = await redis_async.info("commandstats")
    reads = int(stats.get("cmdstat_xreadgroup", {}).get("calls", 0))
    assert reads <= 10, f"{reads} reads of the doorbells in a second: the loop spins"
    finish.set()
    for _ in range(100):  # then its turn comes: it finds everything delivered, and answers
        if len(recorder.calls) == len(b.effects) and not await pending_doorbells(redis_async):
            break
        await asyncio.sleep(0.02)
    stop.set()
    await loop
    assert set(recorder.calls) == {e.key for e in b.effects}
    assert set(recorder.calls.values()) == {1}
    assert await pending_doorbells(redis_async) == 0


class CancelLost:
    """The client as redis-py behaves on Python 3.11 when a cancel lands as a command's answer
    arrives (CPython gh-86296): the command completes and the cancel is lost. Only the
    lease's renewals (``EVALSHA`` of ``hold``) are so, once the lease is held; ``renewing``
    is set while one is under way."""

    def __init__(self, client: redis.asyncio.Redis, on: str) -> None:
        self.client = client
        self.on = on
        self.renewing = asyncio.Event()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.client, name)

    async def evalsha(self, sha: str, numkeys: int, *args: Any) -> Any:
        if sha != self.on:
            return await self.client.evalsha(sha, numkeys, *args)

        async def slow() -> Any:
            await asyncio.sleep(0.05)  # on its way: the block ends meanwhile
            return await self.client.evalsha(sha, numkeys, *args)

        answer = asyncio.ensure_future(slow())
        self.renewing.set()
        try:
            return await asyncio.shield(answer)
        except asyncio.CancelledError:
            return await answer  # the answer came with the cancel, which is lost


@pytest.mark.parametrize("also", [False, True], ids=["lease", "lease-and-doorbells"])
async def test_a_heartbeat_that_lost_its_cancel_stops_at_once(
        redis_async: redis.asyncio.Redis, also: bool) -> None:
    """Leaving the heartbeat's block while a renewal is under way and its cancel is lost
    (``bot.journal.memory``'s create-once lease met it): the heartbeat ends as soon as the
    renewal answers, not a beat later, and renews nothing after the block."""
    scripts = ScriptSet()
    leases = Leases(lease_s=20.0, heartbeat_s=0.2, claim_idle_s=24.0, sweep_s=3600)
    client = CancelLost(redis_async, scripts.sha("hold"))
    lease = Lease(cast(RedisClient, client), scripts, "q-1", "runner-a", leases)
    assert await lease.hold()
    client.renewing.clear()
    refreshed: list[float] = []
    loop = asyncio.get_running_loop()

    async def doorbells() -> None:
        refreshed.append(loop.time())

    async with lease.heartbeat(doorbells if also else None):
        await client.renewing.wait()  # leaving while a renewal is under way
        left = loop.time()
    took = loop.time() - left
    assert took < leases.heartbeat_s / 2, f"the heartbeat slept {took:.2f} s after the block"
    assert [t for t in refreshed if t >= left] == []  # nothing kept fresh after the block


async def test_the_heartbeat_ends_when_told_even_between_beats_and_without_its_cancel(
        redis_async: redis.asyncio.Redis) -> None:
    """A cancel may be lost at any await that ends as it lands (gh-86296); being told the
    block is over (``done``) ends the beat by itself, at once — not a beat later."""
    leases = Leases(lease_s=20.0, heartbeat_s=1.0, claim_idle_s=24.0, sweep_s=3600)
    lease = Lease(cast(RedisClient, redis_async), ScriptSet(), "q-1", "runner-a", leases)
    assert await lease.hold()
    done = asyncio.Event()
    beat = asyncio.ensure_future(lease._beat(None, done))
    await asyncio.sleep(0.05)  # between two beats
    loop = asyncio.get_running_loop()
    told = loop.time()
    done.set()  # and no cancel
    finished, _ = await asyncio.wait({beat}, timeout=5)
    assert finished
    assert loop.time() - told < 0.2, "the beat slept out its interval before noticing"
