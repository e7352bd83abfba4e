"""The effect runner: each effect delivered once, outcomes applied, failures recorded."""

from __future__ import annotations

import pytest
import redis.asyncio

from bot.core import Effect, EffectType, State
from bot.journal import Journal, PermanentError
from bot.runner import Adapters, Backoff, EffectRunner, Failure, Leases, delivered, failures
from bot.runner.streams import read_group
from questbot_testing.journals import JournalBuilder, main_line
from tests.journal.conftest import POLICY, Recorder

pytestmark = pytest.mark.cluster_too


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


async def drain(runner: EffectRunner, rounds: int = 20) -> None:
    for _ in range(rounds):
        await runner.run_once()


async def test_each_effect_delivered_once(journal: Journal, recorder: Recorder,
                                          redis_async: redis.asyncio.Redis) -> None:
    builders = [JournalBuilder(f"q-{n}").sense() for n in range(5)]
    for b in builders:
        await journal.apply_many(b.events, POLICY)
    runner = EffectRunner(journal, recorder.adapters(), POLICY, consumer="a")
    await runner.setup()
    await drain(runner)
    expected = {e.key for b in builders for e in b.effects}
    assert set(recorder.calls) == expected and set(recorder.calls.values()) == {1}
    for b in builders:
        assert await journal.outbox(b.quest_id) == []
        assert set((await delivered(redis_async, b.quest_id)).values()) == {"ok"}
    # a redelivered doorbell (or a redelivered event) finds nothing left to do
    for b in builders:
        assert (await journal.apply(b.events[1], POLICY)).duplicate
        await journal.ring(b.quest_id)
    await drain(runner)
    assert set(recorder.calls.values()) == {1}


async def test_outcome_events_go_through_apply(journal: Journal, recorder: Recorder) -> None:
    b = JournalBuilder("q-1").sense()
    await journal.apply_many(b.events, POLICY)
    start = next(e for e in b.effects if e.type == "start_agent")
    recorder.follow_up[start.key] = [b.event("hypothesis_written", summary="found it",
                                             id="agent-receipt-1")]
    runner = EffectRunner(journal, recorder.adapters(), POLICY, consumer="a")
    await runner.setup()
    await drain(runner)
    _, quest = await journal.snapshot("q-1")
    assert quest is not None and quest.state is State.HYPOTHESISED
    # the checkpoint request the outcome asked for was delivered too
    assert any(":request_checkpoint:agent-receipt-1:" in key for key in recorder.calls)


async def test_transient_failure_retries_with_backoff(journal: Journal,
                                                      recorder: Recorder) -> None:
    clock = Clock()
    b = JournalBuilder("q-1").sense()
    await journal.apply_many(b.events, POLICY)
    first = b.effects[0].key
    recorder.fail[first] = ConnectionError("github is down")
    runner = EffectRunner(journal, recorder.adapters(), POLICY, consumer="a", clock=clock,
                          backoff=Backoff(base_s=10, cap_s=60, max_tries=5))
    await runner.setup()
    await drain(runner, 3)
    assert recorder.calls[first] == 1  # waiting for its backoff; later effects wait too
    assert len(recorder.calls) == 1
    del recorder.fail[first]
    clock.now += 11
    await drain(runner, 3)
    assert recorder.calls[first] == 2
    assert {e.key for e in b.effects} == set(recorder.calls)


async def test_permanent_failure_is_recorded_not_dropped(
        journal: Journal, recorder: Recorder, redis_async: redis.asyncio.Redis) -> None:
    clock = Clock()
    seen: list[Failure] = []

    async def on_failure(failure: Failure) -> None:
        seen.append(failure)

    b = JournalBuilder("q-1").sense()
    await journal.apply_many(b.events, POLICY)
    flaky, gone = b.effects[0].key, b.effects[1].key
    recorder.fail[flaky] = TimeoutError("slow")
    recorder.fail[gone] = PermanentError("the pull request is gone")
    runner = EffectRunner(journal, recorder.adapters(), POLICY, consumer="a", clock=clock,
                          backoff=Backoff(base_s=1, cap_s=1, max_tries=3),
                          on_failure=on_failure)
    await runner.setup()
    for _ in range(6):
        await drain(runner, 2)
        clock.now += 2
    assert recorder.calls[flaky] == 3 and recorder.calls[gone] == 1
    recorded = await failures(redis_async, "q-1")
    assert [(f.effect_key, f.tries) for f in recorded] == [(flaky, 3), (gone, 1)]
    assert "PermanentError" in recorded[1].error
    assert [f.effect_key for f in seen] == [flaky, gone]
    record = await delivered(redis_async, "q-1")
    assert record[flaky] == record[gone] == "failed"
    assert await journal.outbox("q-1") == []


async def test_missing_adapter_is_a_recorded_failure(journal: Journal,
                                                     redis_async: redis.asyncio.Redis) -> None:
    from bot.runner import Adapters

    b = JournalBuilder("q-1").sense()
    await journal.apply_many(b.events, POLICY)
    runner = EffectRunner(journal, Adapters(), POLICY, consumer="a")
    await runner.setup()
    await drain(runner, 3)
    recorded = await failures(redis_async, "q-1")
    assert len(recorded) == len(b.effects)
    assert "no adapter" in recorded[0].error


async def test_dead_runner_doorbells_are_claimed(journal: Journal, recorder: Recorder,
                                                 redis_async: redis.asyncio.Redis) -> None:
    b = JournalBuilder("q-1").sense()
    await journal.apply_many(b.events, POLICY)
    quick = Leases(lease_s=0.04, heartbeat_s=0.01, claim_idle_s=0.05)
    dead = EffectRunner(journal, recorder.adapters(), POLICY, consumer="dead", leases=quick)
    await dead.setup()
    # the dead runner read the doorbells and never acknowledged them
    await read_group(redis_async, "runners", "dead",
                     {f"outbox:{{shard-{s}}}": ">" for s in range(4)}, count=100, block_ms=None)
    alive = EffectRunner(journal, recorder.adapters(), POLICY, consumer="alive", leases=quick)
    assert (await alive.run_once()).claimed == 0  # not idle long enough yet
    import asyncio

    await asyncio.sleep(0.1)
    stats = await alive.run_once()
    assert stats.claimed >= 1 and stats.delivered == len(b.effects)
    assert set(recorder.calls.values()) == {1}


async def test_one_lease_per_quest(journal: Journal, recorder: Recorder,
                                   redis_async: redis.asyncio.Redis) -> None:
    b = JournalBuilder("q-1").sense()
    await journal.apply_many(b.events, POLICY)
    one = EffectRunner(journal, recorder.adapters(), POLICY, consumer="one")
    two = EffectRunner(journal, recorder.adapters(), POLICY, consumer="two")
    await one.setup()
    await redis_async.set("q:{q-1}:lease", "someone-else", px=200)
    outcome = await two.deliver("q-1")
    assert not outcome.drained and recorder.calls == {}
    await redis_async.delete("q:{q-1}:lease")
    import asyncio

    await asyncio.gather(one.run_once(), two.run_once())
    await drain(one, 3)
    assert set(recorder.calls.values()) == {1}


async def test_the_lease_runs_afresh_before_every_adapter_call(
        journal: Journal, redis_async: redis.asyncio.Redis) -> None:
    """Renewed by the script that records each effect, or explicitly after a failure: an
    adapter never starts on a lease that earlier effects have used up."""
    import asyncio

    b = main_line("q-1")
    await journal.apply_many(b.events, POLICY)
    left: list[int] = []
    first: list[str] = []

    async def slow(effect: Effect) -> None:
        left.append(int(await redis_async.pttl("q:{q-1}:lease")))
        first.append(effect.key)
        await asyncio.sleep(0.12)
        if len(first) == 2:
            raise PermanentError("gone")

    runner = EffectRunner(journal, Adapters({t: slow for t in EffectType}), POLICY,
                          leases=Leases(lease_s=1.0, heartbeat_s=0.5, claim_idle_s=1.2))
    await runner.setup()
    assert (await runner.deliver("q-1")).drained
    assert len(left) == len(b.effects) >= 6
    assert min(left) > 800, left


def _replies(trail: str, count: int) -> list[Effect]:
    from bot.core import effect_key

    kind = EffectType.REPLY_COMMENT
    return [Effect(key=effect_key(trail, 0, kind.value, f"c-{n}", 0), type=kind,
                   quest_id=trail, revision=0, event_id=f"c-{n}", occurrence=0,
                   payload={"body": f"reply {n}"}) for n in range(count)]


async def _pending(client: redis.asyncio.Redis, consumer: str, shards: int) -> int:
    total = 0
    for shard in range(shards):
        summary = await client.xpending(f"outbox:{{shard-{shard}}}", "runners")
        total += sum(int(c["pending"]) for c in summary["consumers"]
                     if c["name"] in (consumer, consumer.encode()))
    return total


async def test_a_runner_takes_only_the_quests_it_has_room_for(
        journal: Journal, redis_async: redis.asyncio.Redis) -> None:
    """``XREADGROUP``'s ``COUNT`` holds per stream: a read of every shard took that many
    doorbells of each, and one runner kept quests that runners with room never saw."""
    import asyncio

    trails = [f"bench/room#{n}" for n in range(24)]
    for trail in trails:
        await journal.enqueue(trail, _replies(trail, 1))
    release = asyncio.Event()
    started: list[str] = []

    async def slow(effect: Effect) -> None:
        started.append(effect.quest_id)
        await release.wait()

    adapters = Adapters({EffectType.REPLY_COMMENT: slow})
    small = EffectRunner(journal, adapters, POLICY, consumer="small", concurrency=3)
    large = EffectRunner(journal, adapters, POLICY, consumer="large", concurrency=8)
    await small.setup()
    for _ in range(3):  # full: later turns take nothing
        await small.poll(block_ms=0)
    await large.poll(block_ms=0)
    await asyncio.sleep(0.2)
    assert await _pending(redis_async, "small", journal.shards) == 3
    assert await _pending(redis_async, "large", journal.shards) == 8
    assert len(started) == len(set(started)) == 11
    release.set()
    stop = asyncio.Event()
    rest = EffectRunner(journal, adapters, POLICY, consumer="rest")
    running = [asyncio.create_task(r.run(stop, block_ms=20)) for r in (small, large, rest)]
    for _ in range(100):
        if all([await delivered(redis_async, t) for t in trails]):
            break
        await asyncio.sleep(0.05)
    stop.set()
    await asyncio.gather(*running)
    assert sorted(started) == sorted(trails)  # each delivered once


async def test_handed_back_doorbells_reach_another_runner(
        journal: Journal, redis_async: redis.asyncio.Redis, recorder: Recorder) -> None:
    from bot.runner import doorbells

    trails = [f"bench/back#{n}" for n in range(6)]
    for trail in trails:
        await journal.enqueue(trail, _replies(trail, 1))
    runner = EffectRunner(journal, recorder.adapters(), POLICY, consumer="full")
    await runner.setup()
    read = await doorbells.read(redis_async, range(journal.shards), "full", 100, None)
    assert sorted(q for q, _ in read) == sorted(trails)
    await doorbells.hand_back(redis_async, read, journal.shards)
    assert await _pending(redis_async, "full", journal.shards) == 0
    other = EffectRunner(journal, recorder.adapters(), POLICY, consumer="other")
    await drain(other, 3)
    assert sorted(recorder.calls) == sorted(e.key for t in trails for e in _replies(t, 1))
    assert set(recorder.calls.values()) == {1}
