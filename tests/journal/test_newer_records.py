"""A record written by a newer release is refused loudly and left where it is — never
failed, dropped or misread — so a worker of that release takes it up (a rolling upgrade, or a
roll back: ``docs/operations.md``, *Upgrades*)."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
import redis.asyncio
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel

from bot.core import Policy
from bot.core.lessons import Ending
from bot.journal import Journal
from bot.journal.errors import CorruptJournal
from bot.journal.keys import lessons_key, quest_keys
from bot.journal.lessons import Draft, Lesson, LessonStore
from bot.journal.limits import ReflectionRecord
from bot.journal.records import (
    SCHEMA_VERSION,
    UPCASTERS,
    NewerRecord,
    RecordError,
    as_release,
    dump_event,
    dump_model,
    dump_quest,
    dump_record,
    load_effect,
    load_event,
    load_model,
    load_policy,
    load_quest,
    load_record,
)
from bot.journal.reflection_attempts import ReflectionAttempt, ReflectionReview
from bot.runner import EffectRunner, delivered, failures
from bot.runner.quest_delivery import NEWER_WAIT_S
from bot.runner.timers import Timers
from questbot_testing.journals import EPOCH, JournalBuilder
from tests.journal.conftest import POLICY, Recorder


def bumped(record: bytes, to: int) -> bytes:
    data = json.loads(record)
    data["v"] = to
    return json.dumps(data).encode()


LOADERS = {"quest": load_quest, "event": load_event, "effect": load_effect,
           "policy": load_policy}


def samples() -> dict[str, bytes]:
    b = JournalBuilder("q-1").sense()
    assert b.quest is not None
    effect = json.dumps({"v": 1, "kind": "effect", "data": {
        "key": "k", "type": b.effects[0].type.value, "quest_id": "q-1", "revision": 1,
        "event_id": "e", "occurrence": 0, "payload": {}}}).encode()
    return {"quest": dump_quest(b.quest), "event": dump_event(b.events[0]), "effect": effect,
            "policy": json.dumps({"v": 1, "kind": "policy",
                                  "data": Policy().model_dump(mode="json")}).encode()}


@given(kind=st.sampled_from(sorted(LOADERS)), ahead=st.integers(1, 1000))
def test_every_journal_record_newer_than_this_release_is_refused(kind: str,
                                                                 ahead: int) -> None:
    record = bumped(samples()[kind], SCHEMA_VERSION[kind] + ahead)
    with pytest.raises(NewerRecord) as caught:
        LOADERS[kind](record)
    assert not isinstance(caught.value, CorruptJournal)  # nothing is wrong with it
    message = str(caught.value)
    assert f"stored {kind} record is version {SCHEMA_VERSION[kind] + ahead}" in message
    assert "newer questbot" in message and "upgrade" in message


@pytest.mark.parametrize("kind", sorted(LOADERS))
def test_a_version_below_one_is_a_damaged_record(kind: str) -> None:
    with pytest.raises(RecordError, match="versions start at 1"):
        LOADERS[kind](bumped(samples()[kind], 0))


def test_records_beside_the_journal_carry_their_version() -> None:
    note = dump_record("push_note", {"branch": "b", "parent": "p", "files": {}})
    assert json.loads(note)["v"] == SCHEMA_VERSION["push_note"] == 2
    assert load_record("push_note", note)["branch"] == "b"
    bare = json.dumps({"branch": "b", "parent": "p", "files": {}})  # what releases before wrote
    assert load_record("push_note", bare)["parent"] == "p"
    with pytest.raises(NewerRecord):
        load_record("push_note", bumped(note, 3))
    with as_release(evidence=1):
        assert "kind" not in json.loads(dump_record("evidence", {"piece": "plan"}))
    with pytest.raises(ValueError, match="no release"), as_release(evidence=3):
        pass


async def rewrite_outbox(client: redis.asyncio.Redis, quest_id: str, version: int) -> int:
    outbox = quest_keys(quest_id).outbox
    rows = await client.xrange(outbox, "-", "+")
    await client.delete(outbox)
    for entry, fields in rows:
        await client.xadd(outbox, {**fields, b"e": bumped(fields[b"e"], version)}, id=entry)
    return len(rows)


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


async def test_an_effect_a_newer_release_wrote_waits_in_the_outbox_for_it(
        journal: Journal, recorder: Recorder, redis_async: redis.asyncio.Redis,
        monkeypatch: pytest.MonkeyPatch) -> None:
    b = JournalBuilder("q-1").sense()
    await journal.apply_many(b.events, POLICY)
    pending = await rewrite_outbox(redis_async, "q-1", SCHEMA_VERSION["effect"] + 1)
    clock = Clock()
    runner = EffectRunner(journal, recorder.adapters(), POLICY, consumer="old", clock=clock)
    await runner.setup()
    for _ in range(5):
        await runner.run_once()
    assert not recorder.calls  # not delivered,
    assert await failures(redis_async, "q-1") == []  # not failed,
    assert await delivered(redis_async, "q-1") == {}
    assert await redis_async.xlen(quest_keys("q-1").outbox) == pending  # not dropped
    assert not await redis_async.hlen(quest_keys("q-1").tries)  # and no try counted
    # a worker of the newer release (here: this one taught effect 2) delivers them all
    monkeypatch.setitem(SCHEMA_VERSION, "effect", SCHEMA_VERSION["effect"] + 1)
    monkeypatch.setitem(UPCASTERS, ("effect", 1), lambda data: data)
    clock.now += NEWER_WAIT_S + 1
    for _ in range(10):
        await runner.run_once()
    assert set(recorder.calls) == {e.key for e in b.effects}
    assert await failures(redis_async, "q-1") == []


async def test_a_timer_a_newer_release_set_is_kept_for_it(
        journal: Journal, redis_async: redis.asyncio.Redis,
        monkeypatch: pytest.MonkeyPatch) -> None:
    b = JournalBuilder("q-1").sense()
    await journal.apply_many(b.events, POLICY)
    timers = Timers(journal, POLICY, clock=lambda: EPOCH + timedelta(days=1))
    event = b.event("watch_clean")
    await timers.schedule(event, EPOCH)
    (shard_events,) = [k for k in await redis_async.keys("timers:*:events")]
    await redis_async.hset(shard_events, event.id,
                           bumped(await redis_async.hget(shard_events, event.id),
                                  SCHEMA_VERSION["event"] + 1))
    assert await timers.fire_due() == []
    assert [t for t, _ in await timers.pending()] == [event.id]  # kept, not dropped
    monkeypatch.setitem(SCHEMA_VERSION, "event", SCHEMA_VERSION["event"] + 1)
    monkeypatch.setitem(UPCASTERS, ("event", 1), lambda data: data)
    await timers.fire_due()  # a newer worker fires it (the quest refuses it: not watching)
    assert await timers.pending() == []


def model_samples() -> dict[str, BaseModel]:
    at = EPOCH
    record = ReflectionRecord(text="look at the pager first", by="questbot", at=at)
    return {
        "lesson": Lesson(quest_id="q-1", revision=1, repo="octo/demo", ending=Ending.LANDED,
                         text="round up", at=at),
        "lesson_draft": Draft(text="round up"),
        "reflection": record,
        "reflection_attempt": ReflectionAttempt(wave=1, attempt="a", text="t", by="questbot",
                                                at=at, session="s",
                                                record={"endings/1": "parked"}),
        "reflection_review": ReflectionReview(passed=True, synopsis="fine", session="s",
                                              at=at),
    }


@pytest.mark.parametrize("kind", sorted(model_samples()))
def test_records_of_a_model_carry_their_version(kind: str) -> None:
    model = model_samples()[kind]
    stored = dump_model(kind, model)
    assert json.loads(stored)["v"] == SCHEMA_VERSION[kind] == 2
    assert load_model(kind, stored, type(model)) == model
    bare = model.model_dump_json()  # what releases before versions wrote
    assert load_model(kind, bare, type(model)) == model
    with pytest.raises(NewerRecord, match=f"stored {kind} record is version 3"):
        load_model(kind, bumped(stored, 3), type(model))


async def test_old_and_new_lessons_are_read_and_dropped_alike(
        redis_async: redis.asyncio.Redis) -> None:
    store = LessonStore(redis_async)
    new = Lesson(quest_id="q-2", revision=1, repo="octo/demo", ending=Ending.LANDED,
                 text="new form", at=EPOCH)
    old = new.model_copy(update={"quest_id": "q-1", "text": "old form"})
    await redis_async.lpush(lessons_key("octo/demo"), old.model_dump_json())  # bare, v1
    assert await store.keep(new)
    assert await store.lessons("octo/demo") == [new, old]
    assert await store.drop("octo/demo", "q-1") == 1
    assert await store.drop("octo/demo", "q-2") == 1
    assert await store.lessons("octo/demo") == []


def test_every_older_version_has_its_upcaster() -> None:
    """A kind at version N reads every version below it: 1 → 2 → … → N, no step missing."""
    missing = [(kind, n) for kind, version in SCHEMA_VERSION.items()
               for n in range(1, version) if (kind, n) not in UPCASTERS]
    assert missing == []


async def test_a_timer_of_a_quest_a_newer_release_wrote_waits_and_the_others_fire(
        journal: Journal, redis_async: redis.asyncio.Redis) -> None:
    builders = [JournalBuilder(f"q-{n}").sense().to_ready() for n in (1, 2)]
    for b in builders:
        await journal.apply_many(b.events, POLICY)
    timers = Timers(journal, POLICY, clock=lambda: EPOCH + timedelta(days=1))
    due = [b.event("checkpoint_decided", checkpoint="C", verdict="approve", actor="maintainer")
           for b in builders]
    for event in due:
        await timers.schedule(event, EPOCH)
    snap = quest_keys("q-1").snap
    await redis_async.hset(snap, "quest", bumped(await redis_async.hget(snap, "quest"),
                                                    SCHEMA_VERSION["quest"] + 1))
    journal.forget()
    results = await timers.fire_due()
    assert [r.quest.id for r in results if not isinstance(r, Exception)] == ["q-2"]
    assert [t for t, _ in await timers.pending()] == [due[0].id]  # q-1's, kept for a newer one
