"""The snapshot that lags (``bot.journal.snapshots``): written every ``SNAPSHOT_EVERY`` entries,
yet every reader's quest is the fold of every entry — through the writer's cache, a cache miss,
a lost race between two writers, a compaction and the keys brought back — and what an older
release wrote (version 1, the quest at ``v``) reads, continues and is never left lagging."""

from __future__ import annotations

import json
from itertools import pairwise

import pytest
import redis.asyncio
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.core import TERMINAL, InvalidTransition, Policy, fold
from bot.journal import Journal, snapshots
from bot.journal.compaction import Outcome, compact
from bot.journal.keys import quest_keys
from bot.journal.records import NewerRecord, as_release, load_quest_at
from bot.journal.recovery import read_recorded, rebuild
from bot.journal.snapshots import SNAPSHOT_EVERY
from questbot_testing.journals import JournalBuilder, main_line
from tests.journal.conftest import Recorder
from tests.journal.test_compaction import delivered_all
from tests.journal.test_recovery import ACTIONS, build

POLICIES = (Policy(), Policy(max_attempts=3), Policy(max_attempts=1))


async def stored_at(client: redis.asyncio.Redis, quest_id: str) -> tuple[int, int | None]:
    """The snapshot hash's version and the version its quest record is at."""
    v, raw = await client.hmget(quest_keys(quest_id).snap, ["v", "quest"])
    return int(v), load_quest_at(raw)[1]


async def the_fold(journal: Journal, quest_id: str) -> object:
    recorded = await read_recorded(journal, quest_id)
    return fold(recorded.events, Policy(), policies=recorded.policies).quest


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(route=st.sampled_from(["auto_fix", "research_only", "human", "ignore"]),
       picks=st.lists(st.integers(0, len(ACTIONS) - 1), max_size=40),
       every=st.integers(1, 12),
       writers=st.lists(st.tuples(st.integers(0, 1), st.integers(0, 2), st.booleans()),
                        min_size=1, max_size=60))
async def test_every_reader_reads_the_fold_of_every_entry(
        redis_async: redis.asyncio.Redis, monkeypatch: pytest.MonkeyPatch, route: str,
        picks: list[int], every: int, writers: list[tuple[int, int, bool]]) -> None:
    monkeypatch.setattr(snapshots, "SNAPSHOT_EVERY", every)
    b = build(route, picks)
    if b.quest is None or b.quest.state not in TERMINAL:
        b.add("killed", actor="m")  # so that it ends, and is compacted
    qid = b.quest_id
    # two writers, each with its cache: the one that did not write last holds a stale quest,
    # loses the script's version check and reads the snapshot (and the entries after it) again
    pair = (Journal(redis_async, shards=4), Journal(redis_async, shards=4))
    for n, event in enumerate(b.events):
        which, policy, forget = writers[n % len(writers)]
        writer = pair[which]
        if forget:
            writer.forget()  # a cache miss
        (applied,) = await writer.apply_many([event], POLICIES[policy])
        version, quest = await Journal(redis_async).snapshot(qid)  # a reader of its own
        assert quest == await the_fold(writer, qid)
        if not isinstance(applied, InvalidTransition):  # (refused under a stricter policy)
            assert applied.quest == quest
        v, at = await stored_at(redis_async, qid)
        assert version == v and at is not None and v - at < every  # never lags N or more
        if quest is not None and quest.state in TERMINAL:
            assert at == v  # an ended quest's snapshot is the quest itself
    rebuilt = await rebuild(pair[0], qid, Policy())
    assert rebuilt.matches
    if rebuilt.result.quest is not None and rebuilt.result.quest.state in TERMINAL:
        await delivered_all(pair[0], Recorder())
        before = await Journal(redis_async).snapshot(qid)
        assert await compact(redis_async, qid, shards=4) is Outcome.COMPACTED
        assert await Journal(redis_async).snapshot(qid) == before
        pair[1].forget()
        again = await pair[1].apply(b.events[-1], Policy())  # brings the keys back
        assert again.duplicate and again.quest == before[1]
        assert await Journal(redis_async).snapshot(qid) == before
        assert (await rebuild(pair[1], qid, Policy())).matches


async def test_the_snapshot_is_sent_every_n_entries_and_when_the_quest_ends(
        redis_async: redis.asyncio.Redis) -> None:
    journal = Journal(redis_async)
    b = main_line("q-1")
    ats = []
    for event in b.inputs:
        await journal.apply(event, Policy())
        ats.append(await stored_at(redis_async, "q-1"))
    written = sorted({at for _, at in ats if at is not None})
    assert written[0] == 1  # the first apply writes it: nothing older to fold onto
    assert all(later - earlier <= SNAPSHOT_EVERY for earlier, later in pairwise(written))
    assert ats[-1][0] == ats[-1][1]  # closed: written in full
    assert len(written) < len(ats) / 2  # most applies send no snapshot


async def test_a_version_1_snapshot_continues_and_is_never_left_lagging(
        redis_async: redis.asyncio.Redis) -> None:
    """An old worker (``as_release(quest=1)``: a whole version 1 snapshot every apply) and a
    new one take turns on one quest: the new one writes a whole snapshot over every version 1
    record it finds (an old reader would take a lagging version 1 record for the quest at
    ``v``), and the old one leaves alone what the new one wrote, for a newer worker."""
    old, new = Journal(redis_async), Journal(redis_async)
    b = main_line("q-1")
    events = list(b.inputs)
    with as_release(quest=1):
        for event in events[:3]:
            await old.apply(event, Policy())
        raw = await redis_async.hget(quest_keys("q-1").snap, "quest")
        assert json.loads(raw)["v"] == 1
    await new.apply(events[3], Policy())
    v, at = await stored_at(redis_async, "q-1")
    assert at == v  # written in full over the version 1 record
    await new.apply(events[4], Policy())
    assert (await stored_at(redis_async, "q-1"))[1] == at  # then it lags
    old.forget()
    with as_release(quest=1), pytest.raises(NewerRecord):
        await old.apply(events[5], Policy())
    for event in events[5:]:
        await new.apply(event, Policy())
    assert (await Journal(redis_async).snapshot("q-1"))[1] == b.quest
    assert (await rebuild(new, "q-1", Policy())).matches


async def test_a_lagging_snapshot_whose_entries_are_gone_is_reported(
        redis_async: redis.asyncio.Redis) -> None:
    from bot.journal.errors import CorruptJournal

    journal = Journal(redis_async)
    for event in JournalBuilder("q-1").sense().to_ready().inputs:
        await journal.apply(event, Policy())
    v, at = await stored_at(redis_async, "q-1")
    assert at is not None and at < v
    await redis_async.xtrim(quest_keys("q-1").events, maxlen=0)
    with pytest.raises(CorruptJournal, match="replay"):
        await Journal(redis_async).snapshot("q-1")


async def test_a_writer_reads_a_quest_it_holds_from_memory_while_redis_holds_that_version(
        redis_async: redis.asyncio.Redis) -> None:
    writer, other = Journal(redis_async), Journal(redis_async)
    b = JournalBuilder("q-1").sense().to_ready()
    for event in b.inputs:
        await writer.apply(event, Policy())
    assert await writer.snapshot("q-1") == await Journal(redis_async).snapshot("q-1")
    # another writer moves the quest on: the first one's memory is stale, and it reads Redis
    later = b.add("claimed", actor="m")
    await other.apply(later, Policy())
    assert await writer.snapshot("q-1") == await Journal(redis_async).snapshot("q-1")
    assert (await writer.snapshot("q-1"))[1] == b.quest
