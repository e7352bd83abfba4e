"""The journal's fast record writer (``bot.journal.records``) against a reference writer
(pydantic, then ``json.dumps`` with sorted keys, as questbot once wrote its records): the data
is byte for byte what pydantic writes, and the loaders read both writers' records back to equal
values — over quests in every state, the plausible event of every type in each, and the effects
those events cause."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

import pytest

from bot.core import EVENT_ADAPTER, EVENT_TYPES, Effect, Event, InvalidTransition, Quest, State
from bot.core import step as core_step
from bot.core.effects import EFFECT_ADAPTER, effect_record
from bot.core.policy import Checkpoint, CheckpointMode, Policy
from bot.journal import records
from bot.journal.records import SCHEMA_VERSION, load_effect, load_event, load_policy, load_quest
from questbot_testing.journals import main_line
from tests.core.quests import builder_in, plausible


def reference(kind: str, data: dict[str, Any]) -> str:
    """The reference writer: the envelope around pydantic's JSON data, by ``json.dumps``."""
    record = {"v": SCHEMA_VERSION[kind], "kind": kind, "data": data}
    return json.dumps(record, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def reference_quest(quest: Quest, at: int | None = 7) -> str:
    """A snapshot record: version 2 names the journal version ``at`` it is at; version 1
    (``at=None``, the quest at its hash's ``v``) is what releases before it wrote."""
    record: dict[str, Any] = {"v": SCHEMA_VERSION["quest"] if at else 1, "kind": "quest",
                              "data": quest.model_dump(mode="json")}
    if at:
        record["at"] = at
    return json.dumps(record, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def reference_event(event: Event) -> str:
    return reference("event", event.model_dump(mode="json"))


def reference_effect(effect: Effect) -> str:
    return reference("effect", EFFECT_ADAPTER.dump_python(effect_record(effect), mode="json"))


def reference_policy(policy: Policy) -> str:
    return reference("policy", policy.model_dump(mode="json"))


def corpus() -> tuple[list[Quest], list[Event], list[Effect]]:
    quests: list[Quest] = []
    events: list[Event] = []
    effects: list[Effect] = []
    for state in State:
        b = builder_in(state)
        events += b.events
        for event_type in EVENT_TYPES:
            event = plausible(b, event_type)
            events.append(event)
            try:
                t = core_step(b.quest, event, b.policy)
            except InvalidTransition:
                continue
            quests.append(t.quest)
            effects += t.effects
    line = main_line("q-records")
    quest: Quest | None = None
    for event in line.events:
        t = core_step(quest, event, line.policy)
        quest = t.quest
        quests.append(quest)
        effects += t.effects
    return quests, events, effects


QUESTS, EVENTS, EFFECTS = corpus()


def data(record: bytes | str) -> bytes:
    """The ``data`` member of an envelope, as written."""
    text = record.decode() if isinstance(record, bytes) else record
    head, _, rest = text.partition('"data":')
    assert head.startswith('{"v":') and rest.endswith("}")
    return rest[:-1].encode()


def test_the_corpus_covers_every_state_and_event_type() -> None:
    assert {q.state for q in QUESTS} >= {State.CLOSED, State.WATCHING, State.PARKED}
    assert {e.type for e in EVENTS} == set(EVENT_TYPES)
    assert EFFECTS


@pytest.mark.parametrize("quest", QUESTS, ids=lambda q: f"{q.id}-{q.state}")
def test_quests_are_written_as_pydantic_writes_them(quest: Quest) -> None:
    fast = records.dump_quest(quest, 7)
    assert data(fast) == quest.model_dump_json().encode()
    assert json.loads(fast) == json.loads(reference_quest(quest))
    assert load_quest(fast) == load_quest(reference_quest(quest)) == quest
    assert records.load_quest_at(fast) == (quest, 7)
    older = records.dump_quest(quest)  # version 1, as the releases before wrote it
    assert json.loads(older) == json.loads(reference_quest(quest, None))
    assert records.load_quest_at(older) == (quest, None)
    with records.as_release(quest=1):  # a worker run as the release before writes version 1
        assert records.dump_quest(quest, 7) == older
        assert load_quest(older) == quest
        with pytest.raises(records.NewerRecord):
            load_quest(fast)


@pytest.mark.parametrize("event", EVENTS, ids=lambda e: f"{e.type}-{e.id}")
def test_events_are_written_as_pydantic_writes_them(event: Event) -> None:
    fast = records.dump_event(event)
    assert data(fast) == EVENT_ADAPTER.dump_json(event)
    assert json.loads(fast) == json.loads(reference_event(event))
    assert load_event(fast) == load_event(reference_event(event)) == event


@pytest.mark.parametrize("effect", EFFECTS, ids=lambda e: e.key)
def test_effects_are_written_as_pydantic_writes_them(effect: Effect) -> None:
    fast = records.dump_effect(effect)
    assert data(fast) == EFFECT_ADAPTER.dump_json(effect_record(effect))
    assert json.loads(fast) == json.loads(reference_effect(effect))
    assert load_effect(fast) == load_effect(reference_effect(effect)) == effect


def test_a_payload_orjson_cannot_write_falls_back_to_pydantic() -> None:
    effect = EFFECTS[0]._replace(payload={"tags": {"b"}, "amount": Decimal("1.5"),
                                          "wait": timedelta(minutes=5)})
    assert data(records.dump_effect(effect)) == EFFECT_ADAPTER.dump_json(effect_record(effect))


def test_times_keep_their_offset_and_microseconds() -> None:
    event = EVENTS[0].model_copy(update={"at": datetime(2026, 1, 2, 3, 4, 5, 678, tzinfo=UTC)})
    assert data(records.dump_event(event)) == EVENT_ADAPTER.dump_json(event)
    assert load_event(records.dump_event(event)) == event


@pytest.mark.parametrize("policy", [
    Policy(),
    Policy(shadow=True, max_attempts=5,
           checkpoints={Checkpoint.B: CheckpointMode(blocking=False)}),
], ids=["default", "advisory-b"])
def test_policies_are_written_as_pydantic_writes_them(policy: Policy) -> None:
    written = records.dump_policy(policy)
    assert data(written) == policy.model_dump_json().encode()
    assert json.loads(written) == json.loads(reference_policy(policy))
    assert load_policy(written) == load_policy(reference_policy(policy)) == policy
