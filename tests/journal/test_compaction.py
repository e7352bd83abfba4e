"""Ended quests compacted (``bot.journal.compaction``): for random journals the fold of the
compacted record is the fold of the original journal, every read works on either form, a
write brings the keys back byte for byte, and a compactor killed at any point loses nothing."""

from __future__ import annotations

import asyncio
import random
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import redis.asyncio
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.agent.transcript import Ending, Kind, TranscriptStore, Turn
from bot.agent.transcript import Recorder as TranscriptRecorder
from bot.core import TERMINAL, Policy, State, fold
from bot.journal import Journal
from bot.journal.compaction import Outcome, backfill, compact, due, read_compacted, thaw
from bot.journal.compaction import settle as settle_due
from bot.journal.errors import CorruptJournal
from bot.journal.export import export, file_of
from bot.journal.keys import (
    compaction_due_key,
    evidence_key,
    quest_gh_key,
    quest_keys,
    shard_of,
    transcript_key,
)
from bot.journal.recovery import read_recorded, rebuild
from bot.journal.views import views_key
from bot.runner import EffectRunner
from bot.worker.compaction_sweep import CompactionSweep
from questbot_testing.journals import JournalBuilder, main_line
from tests.journal.conftest import POLICY, Recorder
from tests.journal.test_recovery import ACTIONS, build

pytestmark = pytest.mark.cluster_too

ROOT = Path(__file__).resolve().parents[2]
OTHER = Policy(mute_hours=48)
"""A second policy, so records hold a change of policy mid-journal."""


async def delivered_all(journal: Journal, recorder: Recorder) -> None:
    runner = EffectRunner(journal, recorder.adapters(), POLICY, consumer="c")
    await runner.setup()
    for _ in range(6):
        await runner.run_once()
    for shard in range(journal.shards):  # and a projector wrote every view
        await journal.client.delete(views_key(shard))


async def stored(client: Any, quest_id: str) -> dict[str, Any]:
    """Every kept key of the quest as Redis holds it, for byte-for-byte comparison."""
    k = quest_keys(quest_id)
    pipe = client.pipeline(transaction=False)
    for key in (k.snap, k.ids, k.policies, k.done, quest_gh_key(quest_id),
                evidence_key(quest_id)):
        pipe.hgetall(key)
    pipe.xrange(k.events, "-", "+")
    pipe.xrange(k.failures, "-", "+")
    pipe.smembers(k.children)
    return dict(enumerate(await pipe.execute()))


async def ended(journal: Journal, b: JournalBuilder, recorder: Recorder) -> None:
    """``b``'s journal applied, half under each policy, ended (killed if it was not) and
    every effect delivered."""
    if b.quest is None or b.quest.state not in TERMINAL:
        b.add("killed", actor="m")
    half = len(b.events) // 2
    await journal.apply_many(b.events[:half], POLICY)
    await journal.apply_many(b.events[half:], OTHER)
    await delivered_all(journal, recorder)


@settings(max_examples=30, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(route=st.sampled_from(["auto_fix", "research_only", "human", "ignore"]),
       picks=st.lists(st.integers(0, len(ACTIONS) - 1), max_size=40))
async def test_the_fold_of_the_compacted_record_is_the_fold_of_the_journal(
        redis_async: redis.asyncio.Redis, route: str, picks: list[int]) -> None:
    journal = Journal(redis_async, shards=4)
    b = build(route, picks)
    await ended(journal, b, Recorder())
    qid = b.quest_id
    before = await read_recorded(journal, qid)
    version, quest = await journal.snapshot(qid)
    entries = [e async for e in journal.entries(qid)]
    keys = await stored(redis_async, qid)
    first = before.events[0].id

    assert await compact(redis_async, qid, shards=4) is Outcome.COMPACTED
    assert await redis_async.exists(quest_keys(qid).events) == 0
    record = await read_compacted(redis_async, qid)
    assert record is not None
    after = await read_recorded(journal, qid)
    assert after == before
    assert (fold(record.events_only(), POLICY, policies=after.policies)
            == fold(before.events, POLICY, policies=before.policies))
    assert await journal.snapshot(qid) == (version, quest)
    assert [e async for e in journal.entries(qid)] == entries
    assert await journal.contains(qid, first)
    rebuilt = await rebuild(journal, qid, POLICY)
    assert rebuilt.matches and rebuilt.result.quest == quest

    # a write (here a redelivered event) brings every key back as it was, and is a duplicate
    # (the first event takes the script's refusal; any other the read's, as this one does)
    journal.forget()
    applied = await journal.apply(before.events[-1], POLICY)
    assert applied.duplicate
    assert await stored(redis_async, qid) == keys
    assert await read_compacted(redis_async, qid) is None


async def test_a_closed_quest_compacted_reopens_on_a_regression(
        redis_async: redis.asyncio.Redis) -> None:
    journal = Journal(redis_async, shards=4)
    b = main_line("q-back")
    await journal.apply_many(b.events, POLICY)
    await delivered_all(journal, Recorder())
    assert b.quest is not None and b.quest.state is State.CLOSED
    length = len(b.events)
    assert await compact(redis_async, "q-back", shards=4) is Outcome.COMPACTED
    # this journal still holds the snapshot in its cache: its apply is refused by the script
    # (``compacted``), the keys come back, and it applies again
    regression = b.add("reopened", fingerprint="fp-1", source="check_run:2",
                       severity="high", base="base9")
    applied = await journal.apply(regression, POLICY)
    assert applied.quest.revision == 2 and applied.quest.state is not State.CLOSED
    assert [e.event.id async for e in journal.entries("q-back")][:length] == [
        e.id for e in b.events[:length]]
    assert (await journal.snapshot("q-back"))[1] == b.quest
    # it lives again: no longer due for compaction, and compaction leaves it be
    assert await redis_async.zscore(compaction_due_key(), "q-back") is None
    assert await compact(redis_async, "q-back", shards=4) is Outcome.LIVE


async def test_a_closed_quests_transcripts_are_compacted_and_read_from_its_record(
        redis_async: redis.asyncio.Redis) -> None:
    """The model's conversations (``bot.agent.transcript``, ~19 KB a demo quest) go into the
    record with the rest, are read from it, and come back whole when the quest lives again:
    kept apart, they were most of what an ended quest left in Redis (the soak)."""
    journal = Journal(redis_async, shards=4)
    b = main_line("q-said")
    await journal.apply_many(b.events, POLICY)
    await delivered_all(journal, Recorder())
    store = TranscriptStore(redis_async)
    said = [Turn(kind=Kind.TEXT, text="the log says the parser drops the last line " * 20)]
    await TranscriptRecorder(store, "q-said", 1).keep(stage="research", ended=Ending.ANSWERED,
                                                      turns=said)
    await TranscriptRecorder(store, "q-said", 1).keep(stage="plan", ended=Ending.ANSWERED,
                                                      turns=said)
    before = await store.transcripts("q-said")
    raw = await redis_async.hgetall(transcript_key("q-said"))
    assert [t.stage for t in before] == ["research", "plan"]

    assert await compact(redis_async, "q-said", shards=4) is Outcome.COMPACTED
    assert await redis_async.exists(transcript_key("q-said")) == 0
    assert await store.transcripts("q-said") == before
    latest = await store.latest("q-said")
    assert latest is not None and latest.stage == "plan"

    regression = b.add("reopened", fingerprint="fp-1", source="check_run:2",
                       severity="high", base="base9")
    await journal.apply(regression, POLICY)
    assert await redis_async.hgetall(transcript_key("q-said")) == raw


async def test_a_first_event_never_writes_over_a_compacted_quest(
        redis_async: redis.asyncio.Redis) -> None:
    """A ``signal_sensed`` is stepped on "no quest" without a read; on a compacted quest the
    script refuses it, the keys come back, and it is stepped on the quest (absorbed)."""
    b = main_line("q-fresh")
    await Journal(redis_async, shards=4).apply_many(b.events, POLICY)
    await delivered_all(Journal(redis_async, shards=4), Recorder())
    assert await compact(redis_async, "q-fresh", shards=4) is Outcome.COMPACTED
    fresh = Journal(redis_async, shards=4)  # nothing cached: the first event is not read
    event = b.add("signal_sensed", repo=b.repo, fingerprint="fp-1", kind="check_failure",
                  severity="high", title="back", source="check_run:3", base="base9")
    applied = await fresh.apply(event, POLICY)
    assert applied.absorbed and applied.quest == b.quest
    assert [e.id for e in await fresh.events("q-fresh")] == [e.id for e in b.events]


async def test_only_ended_idle_quests_are_compacted(redis_async: redis.asyncio.Redis) -> None:
    journal = Journal(redis_async, shards=4)
    live = JournalBuilder("q-live").sense()
    await journal.apply_many(live.events, POLICY)
    assert await compact(redis_async, "q-live", shards=4) is Outcome.LIVE
    closed = main_line("q-busy")
    await journal.apply_many(closed.events, POLICY)  # effects not delivered yet
    assert await compact(redis_async, "q-busy", shards=4) is Outcome.BUSY
    assert await redis_async.hexists(quest_keys("q-busy").snap, "quest")
    assert await compact(redis_async, "q-none", shards=4) is Outcome.GONE
    # a quest whose GitHub view a projector still owes waits for it
    viewed = main_line("q-view")
    await journal.apply_many(viewed.events, POLICY)
    await delivered_all(journal, Recorder())
    await redis_async.zadd(views_key(shard_of("q-view", 4)), {"q-view": 1})
    assert await compact(redis_async, "q-view", shards=4) is Outcome.BUSY
    await redis_async.zrem(views_key(shard_of("q-view", 4)), "q-view")
    assert await compact(redis_async, "q-view", shards=4) is Outcome.COMPACTED


async def test_a_busy_quest_is_tried_again_after_the_delay_when_that_is_under_an_hour(
        redis_async: redis.asyncio.Redis) -> None:
    """A quest whose last effects are still going out when it falls due is looked at again an
    hour later, or after the compaction delay if that is shorter: a soak compacting minutes
    after quests end (``scripts/soak.py``) compacts it minutes later, not an hour."""
    now = datetime(2030, 1, 1, tzinfo=UTC)
    journal = Journal(redis_async, shards=4, clock=lambda: now)
    b = main_line("q-late")
    await journal.apply_many(b.events, POLICY)  # its effects not delivered yet: busy
    sweep = CompactionSweep(redis_async, 300, clock=lambda: now + timedelta(seconds=301))
    sweep.backfilled = True
    assert await sweep.sweep_once() == 0
    await delivered_all(journal, Recorder())
    sweep.clock = lambda: now + timedelta(seconds=301 + 299)
    assert await sweep.sweep_once() == 0  # not yet: the delay again from the busy look
    sweep.clock = lambda: now + timedelta(seconds=301 + 300)
    assert await sweep.sweep_once() == 1
    # with a delay of days, an hour
    b = main_line("q-later")
    await journal.apply_many(b.events, POLICY)
    days = CompactionSweep(redis_async, 3 * 86_400, clock=lambda: now + timedelta(days=3))
    days.backfilled = True
    assert await days.sweep_once() == 0
    await delivered_all(journal, Recorder())
    days.clock = lambda: now + timedelta(days=3, minutes=59)
    assert await days.sweep_once() == 0
    days.clock = lambda: now + timedelta(days=3, hours=1)
    assert await days.sweep_once() == 1


async def test_a_repair_brings_a_compacted_quest_back_first(
        redis_async: redis.asyncio.Redis) -> None:
    journal = Journal(redis_async, shards=4)
    b = main_line("q-fix")
    await journal.apply_many(b.events, POLICY)
    await delivered_all(journal, Recorder())
    assert await compact(redis_async, "q-fix", shards=4) is Outcome.COMPACTED
    rebuilt = await rebuild(journal, "q-fix", POLICY, repair=True)
    assert rebuilt.matches
    assert await read_compacted(redis_async, "q-fix") is None
    assert await redis_async.exists(quest_keys("q-fix").events)


async def test_due_quests_are_those_over_for_the_while(redis_async: redis.asyncio.Redis) -> None:
    now = datetime(2030, 1, 1, tzinfo=UTC)
    journal = Journal(redis_async, shards=4, clock=lambda: now)
    b = main_line("q-due")
    await journal.apply_many(b.events, POLICY)
    await delivered_all(journal, Recorder())
    day = 86_400.0
    assert await due(redis_async, now + timedelta(hours=1), day) == []
    assert await due(redis_async, now + timedelta(days=2), day) == ["q-due"]
    outcome = await compact(redis_async, "q-due", shards=4)
    await settle_due(redis_async, "q-due", outcome, now + timedelta(days=2), day)
    assert await due(redis_async, now + timedelta(days=9), day) == []


@pytest.mark.slow
async def test_a_compactor_killed_at_any_point_loses_nothing(
        redis_async: redis.asyncio.Redis, redis_async_url: str) -> None:
    """``kill -9`` of a process compacting 60 quests, again and again at random moments:
    every quest is whole afterwards — its original keys, or its record — and reads the same."""
    if redis_async_url.startswith("redis+cluster"):
        pytest.skip("the killed process speaks to one Redis; the script is the same on both")
    journal = Journal(redis_async, shards=4)
    builders = [main_line(f"q-k{n}") for n in range(60)]
    await journal.apply_many([e for b in builders for e in b.events], POLICY)
    await delivered_all(journal, Recorder())
    expected = {b.quest_id: (await journal.snapshot(b.quest_id),
                             [e async for e in journal.entries(b.quest_id)])
                for b in builders}
    rng = random.Random(11)
    for _ in range(6):
        proc = subprocess.Popen([sys.executable, "-m", "tests.journal.proc_compactor",
                                 redis_async_url, *expected], cwd=ROOT,
                                stdout=subprocess.PIPE, text=True)
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "ready"
        await asyncio.sleep(rng.uniform(0.0, 0.15))
        proc.kill()
        proc.wait()
        for qid in rng.sample(sorted(expected), 5):  # some come back meanwhile
            await thaw(redis_async, qid)
    compacted = 0
    for qid, (snapshot, entries) in expected.items():
        record = await read_compacted(redis_async, qid)
        original = await redis_async.hexists(quest_keys(qid).snap, "quest")
        assert (record is None) == bool(original), qid  # one form or the other, never both
        assert await redis_async.exists(quest_keys(qid).events) == bool(original)
        compacted += record is not None
        assert await journal.snapshot(qid) == snapshot
        assert [e async for e in journal.entries(qid)] == entries
    assert compacted  # the compactor got somewhere


def test_the_preset_dictionary_never_changes() -> None:
    """Records of format 1 are deflated against it: another dictionary is another format."""
    import hashlib

    from bot.journal.compaction_zdict import ZDICT

    assert hashlib.sha256(ZDICT).hexdigest() == (
        "0086095571f1c649c9882daf4f4408aeb240ab1b95817ae9173e33c40c937f0c")


async def test_quests_that_ended_before_compaction_are_put_on_the_list_once(
        redis_async: redis.asyncio.Redis) -> None:
    """An upgrade: quests that ended before the due list was kept are found, once."""
    now = datetime(2030, 1, 1, tzinfo=UTC)
    journal = Journal(redis_async, shards=4, clock=lambda: now)
    old, live = main_line("q-old"), JournalBuilder("q-alive").sense()
    await journal.apply_many(old.events + live.events, POLICY)
    await delivered_all(journal, Recorder())
    await redis_async.delete(compaction_due_key())  # as a release without compaction left it
    later = now + timedelta(days=30)
    assert await backfill(redis_async, later) == 1
    assert await backfill(redis_async, later) == 0  # once per Redis
    assert await due(redis_async, later, 86_400) == []  # ended "now": due after the while
    assert await due(redis_async, later + timedelta(days=2), 86_400) == ["q-old"]


async def test_a_record_exported_to_a_file_is_read_back_and_brought_back(
        redis_async: redis.asyncio.Redis, tmp_path: Path) -> None:
    """Beyond the second age the record goes to a file: reads take it from there, a write
    brings every key back from it byte for byte, and a lost file is said plainly."""
    now = datetime(2030, 1, 1, tzinfo=UTC)
    journal = Journal(redis_async, shards=4, clock=lambda: now)
    b = main_line("q-file")
    await journal.apply_many(b.events, POLICY)
    await delivered_all(journal, Recorder())
    keys = await stored(redis_async, "q-file")
    snapshot = await journal.snapshot("q-file")
    entries = [e async for e in journal.entries("q-file")]
    sweep = CompactionSweep(redis_async, 3600, clock=lambda: now + timedelta(days=1),
                            export_dir=tmp_path, export_after_s=86_400)
    sweep.backfilled = True
    assert await sweep.sweep_once() == 1
    assert await redis_async.hget(quest_keys("q-file").snap, "z")  # not yet: a day to go
    sweep.clock = lambda: now + timedelta(days=3)
    await sweep.sweep_once()
    assert await redis_async.hget(quest_keys("q-file").snap, "z") == b""
    assert [p.suffix for p in tmp_path.iterdir()] == [".qz"]
    assert await redis_async.memory_usage(quest_keys("q-file").snap) < 600  # from ~3,300
    assert await journal.snapshot("q-file") == snapshot
    assert [e async for e in journal.entries("q-file")] == entries
    assert (await rebuild(journal, "q-file", POLICY)).matches

    journal.forget()
    assert (await journal.apply(b.events[-1], POLICY)).duplicate  # a write: keys come back
    assert await stored(redis_async, "q-file") == keys

    # exported again, then its file lost
    for shard in range(4):  # the duplicate's view was written
        await redis_async.delete(views_key(shard))
    assert await compact(redis_async, "q-file", shards=4) is Outcome.COMPACTED
    assert await export(redis_async, "q-file", tmp_path)
    file_of(tmp_path.resolve(), "q-file").unlink()
    with pytest.raises(CorruptJournal, match=r"cannot be read.*restore the file"):
        await journal.snapshot("q-file")
