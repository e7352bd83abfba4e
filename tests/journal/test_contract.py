"""The journal's contract against a real Redis: apply, dedupe, refusal, indexes, outbox."""

from __future__ import annotations

from datetime import timedelta

import pytest
import redis.asyncio

from bot.core import InvalidTransition, Policy, State, fold
from bot.journal import (
    Journal,
    UnstorableId,
    quest_keys,
    rebuild,
    replay_from_redis,
)
from bot.journal.indexes import Indexes, IndexWrites
from bot.journal.keys import doorbell_key, shard_of
from questbot_testing.journals import JournalBuilder, main_line
from tests.journal.conftest import POLICY

pytestmark = pytest.mark.cluster_too


async def test_apply_writes_journal_snapshot_and_outbox(journal: Journal) -> None:
    b = JournalBuilder("q-1").sense()
    first = await journal.apply(b.events[0], POLICY)
    assert first.version == 1 and not first.duplicate
    assert first.quest.state is State.SENSED
    second = await journal.apply(b.events[1], POLICY)
    assert second.version == 2
    assert second.quest == b.quest
    version, stored = await journal.snapshot("q-1")  # triage, and research starting with it
    assert (version, stored) == (3, b.quest) and len(b.events) == 3
    assert await journal.events("q-1") == b.events
    assert [key for _, key in await journal.outbox("q-1")] == [e.key for e in b.effects]


async def test_same_event_applied_three_times_is_one_entry(journal: Journal) -> None:
    b = JournalBuilder("q-1").sense()
    await journal.apply(b.events[0], POLICY)
    results = [await journal.apply(b.events[1], POLICY) for _ in range(3)]
    assert [r.duplicate for r in results] == [False, True, True]
    assert all(r.version == 2 for r in results)
    journal.forget()  # a fresh process sees the same
    again = await journal.apply(b.events[1], POLICY)
    assert again.duplicate and again.quest == b.quest
    assert len(await journal.events("q-1")) == 3 == len(b.events)
    assert len(await journal.outbox("q-1")) == len(b.effects)


async def test_duplicates_in_one_batch(journal: Journal) -> None:
    b = JournalBuilder("q-1").sense()
    results = await journal.apply_many([b.events[0], b.events[0], b.events[1], b.events[0]],
                                       POLICY)
    assert [getattr(r, "duplicate", None) for r in results] == [False, True, False, True]
    assert await journal.events("q-1") == b.events


async def test_refused_event_writes_nothing(journal: Journal,
                                            redis_async: redis.asyncio.Redis) -> None:
    b = JournalBuilder("q-1").sense()
    await journal.apply_many(b.events, POLICY)
    before = await redis_async.dump(quest_keys("q-1").snap)
    landed = b.event("landed", merge_sha="m")
    with pytest.raises(InvalidTransition) as info:
        await journal.apply(landed, POLICY)
    assert "researching" in str(info.value)
    assert await redis_async.dump(quest_keys("q-1").snap) == before
    assert not await journal.contains("q-1", landed.id)
    assert len(await journal.events("q-1")) == 3 == len(b.events)


async def test_refused_redelivery_from_stale_cache_is_a_duplicate(
        redis_async: redis.asyncio.Redis) -> None:
    """A second process moved the quest on; this one's cache is stale and the redelivered
    event would be refused on it — it must still be reported as a duplicate."""
    one, two = Journal(redis_async), Journal(redis_async)
    b = JournalBuilder("q-1").sense()
    await one.apply_many(b.events[:1], POLICY)
    await two.apply_many(b.events, POLICY)
    result = await one.apply(b.events[1], POLICY)
    assert result.duplicate


async def test_terminal_quest_absorbs_and_journals(journal: Journal) -> None:
    b = main_line("q-1")
    await journal.apply_many(b.events, POLICY)
    late = b.event("paused", reason="late")
    result = await journal.apply(late, POLICY)
    assert result.absorbed and result.quest.state is State.CLOSED and not result.effects
    events = await journal.events("q-1")
    assert events[-1] == late
    assert fold(events, POLICY).quest == result.quest


async def test_concurrent_writers_from_stale_caches_retry(
        redis_async: redis.asyncio.Redis) -> None:
    one, two = Journal(redis_async), Journal(redis_async)
    b = JournalBuilder("q-1").sense()
    await one.apply_many(b.events, POLICY)
    await two.snapshot("q-1")
    a = b.event("usage_recorded", tokens=1, id="u-a")
    await two.apply(b.event("usage_recorded", tokens=2, id="u-b"), POLICY)
    result = await one.apply(a, POLICY)  # one's cache is at version 3; the store is at 4
    assert result.version == 5 and result.quest.usage_tokens == 3


async def test_indexes_follow_the_quests(journal: Journal,
                                         redis_async: redis.asyncio.Redis) -> None:
    idx = Indexes(redis_async)
    live = JournalBuilder("q-live").sense(fingerprint="fp-a")
    closed = main_line("q-closed")
    ignored = JournalBuilder("q-ign", start=journal.clock()).sense(route="ignore",
                                                                   fingerprint="fp-m")
    await journal.apply_many(live.events + closed.events + ignored.events, POLICY)
    assert await idx.quests_of_repo("octo/demo") == {"q-live", "q-closed", "q-ign"}
    assert await idx.live_quests("octo/demo") == {"q-live"}
    assert await idx.live_count("octo/demo") == 1
    assert await idx.quests_with_fingerprint("octo/demo", "fp-a") == {"q-live"}
    assert await idx.quests_with_fingerprint("octo/demo", "fp-1") == {"q-closed"}
    assert await idx.is_muted("octo/demo", "fp-m")
    ttl = await idx.mute_ttl("octo/demo", "fp-m")
    assert 23 * 3600 < ttl <= 24 * 3600
    assert not await idx.is_muted("octo/demo", "fp-a")
    await journal.apply(live.event("killed", reason="enough", actor="m"), POLICY)
    assert await idx.live_quests("octo/demo") == set()


def test_index_writes_of_a_round_are_merged_per_key(journal: Journal) -> None:
    quests = [JournalBuilder(f"q-{n}").sense().quest for n in range(3)]
    closed = fold(main_line("q-done").events, POLICY).quest
    assert closed is not None and closed.state is State.CLOSED
    writes = IndexWrites()
    for quest in quests:
        writes.transition(None, quest, (), journal.clock())
    writes.transition(None, closed, (), journal.clock())
    commands = list(writes.commands())
    assert ("SADD", "repo:{octo/demo}:quests", "q-0", "q-1", "q-2", "q-done") in commands
    assert ("SADD", "repo:{octo/demo}:live", "q-0", "q-1", "q-2") in commands
    assert ("SREM", "repo:{octo/demo}:live", "q-done") in commands
    # quests, fingerprint fp-1, live, not-live, and the ended one due for compaction
    assert len(commands) == 5
    assert commands[-1][:3] == ("ZADD", "compact:{compact}", "NX") and commands[-1][4] == "q-done"
    writes.transition(quests[0], closed.model_copy(update={"id": "q-0"}), (), journal.clock())
    assert ("SREM", "repo:{octo/demo}:live", "q-done", "q-0") in list(writes.commands())
    assert ("SADD", "repo:{octo/demo}:live", "q-1", "q-2") in list(writes.commands())


async def test_conflict_child_is_indexed_under_its_parent(journal: Journal,
                                                          redis_async: redis.asyncio.Redis) -> None:
    parent = JournalBuilder("q-p").sense()
    child = JournalBuilder("q-c")
    child.add("signal_sensed", repo="octo/demo", fingerprint="fp-c", kind="check_failure")
    child.add("triaged", route="conflict", parent="q-p")
    await journal.apply_many(parent.events + child.events, POLICY)
    assert await Indexes(redis_async).children("q-p") == {"q-c"}


async def test_mute_from_an_old_event_does_not_outlive_its_until(
        journal: Journal, redis_async: redis.asyncio.Redis) -> None:
    start = journal.clock() - timedelta(hours=30)
    old = JournalBuilder("q-old", start=start).sense(route="ignore", fingerprint="fp-o")
    await journal.apply_many(old.events, POLICY)
    assert not await Indexes(redis_async).is_muted("octo/demo", "fp-o")


async def test_ids_with_braces_are_refused(journal: Journal) -> None:
    b = JournalBuilder("q{1}")
    with pytest.raises(UnstorableId):
        await journal.apply(b.event("signal_sensed", repo="o/r", fingerprint="f",
                                    kind="issue"), POLICY)


async def test_scripts_reload_after_flush(journal: Journal,
                                          redis_async: redis.asyncio.Redis) -> None:
    b = JournalBuilder("q-1").sense()
    await journal.apply(b.events[0], POLICY)
    await redis_async.script_flush()
    assert (await journal.apply(b.events[1], POLICY)).version == 2


async def test_a_redelivery_rings_the_doorbell_after_a_flush(
        journal: Journal, redis_async: redis.asyncio.Redis) -> None:
    """The follow-up rings doorbells with a script of its own (``scripts.RING``): a server that
    lost its scripts between the apply and the follow-up still gets every doorbell, once."""
    b = JournalBuilder("q-1").sense()
    for event in b.events[:2]:
        await journal.apply(event, POLICY)
    bell = doorbell_key(shard_of("q-1", journal.shards))
    rung = await redis_async.xlen(bell)
    await redis_async.script_flush()
    journal.forget()  # read the snapshot again: the redelivery is found there, no apply runs
    again = await journal.apply(b.events[1], POLICY)
    assert again.duplicate
    assert await redis_async.xlen(bell) == rung + 1
    entries = await redis_async.xrange(bell)
    assert entries[-1][1] == {b"q": b"q-1"}


async def test_an_apply_rings_the_doorbell_exactly_when_it_adds_effects(
        journal: Journal, redis_async: redis.asyncio.Redis) -> None:
    """The apply script answers no outbox length when it succeeds (issue 26, item 5): the
    journal rings because the apply added effects, which the outbox then holds, and not for
    one that added none."""
    b = main_line("q-1")
    bell = doorbell_key(shard_of("q-1", journal.shards))
    outbox = quest_keys("q-1").outbox
    rang_without = rang_with = 0
    for event in b.inputs:
        queued, rung = await redis_async.xlen(outbox), await redis_async.xlen(bell)
        await journal.apply(event, b.policy)
        added = await redis_async.xlen(outbox) - queued
        assert await redis_async.xlen(bell) - rung == (1 if added else 0), event.type
        rang_with += bool(added)
        rang_without += not added
    assert rang_with and rang_without  # both cases met


async def test_durable_apply_falls_back_or_waits(journal: Journal) -> None:
    b = JournalBuilder("q-1").sense()
    result = await journal.apply(b.events[0], POLICY, durable=True)
    assert result.version == 1
    d = journal.durability
    if d.cluster:  # a replica acknowledged it (tests/cluster/test_durability.py: else not)
        assert d.command() == ("WAIT", 1, d.timeout_ms)
        return
    assert d.supported is not None
    if d.supported is False:  # redis < 7.2: the appendfsync setting was checked
        assert d.fsync_always is not None


async def test_rebuild_matches_and_repairs(journal: Journal, redis_async: redis.asyncio.Redis,
                                           redis_async_url: str) -> None:
    b = main_line("q-1")
    await journal.apply_many(b.events, POLICY)
    rebuilt = await rebuild(journal, "q-1", POLICY)
    assert rebuilt.matches and rebuilt.result.quest == b.quest
    # damage the snapshot: the fold notices and repairs it
    sensed = JournalBuilder("q-1").sense()
    from bot.journal.records import dump_quest
    assert sensed.quest is not None
    await redis_async.hset(quest_keys("q-1").snap, "quest", dump_quest(sensed.quest))
    assert not (await rebuild(journal, "q-1", POLICY)).matches
    assert (await rebuild(journal, "q-1", POLICY, repair=True)).result.quest == b.quest
    assert (await rebuild(journal, "q-1", POLICY)).matches
    replayed = await replay_from_redis(redis_async_url, "q-1", Policy())
    assert replayed.quest == b.quest and replayed.applied == len(b.events)
