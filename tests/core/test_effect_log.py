"""``EffectLog``: a fold's effects kept as rows the cyclic collector does not track.

The log must behave as the tuple of ``Effect`` it stands in for (order, indexing, slicing,
equality, a fresh ``Effect`` with the enum type on every read), and its rows and payloads must
really be untracked once the collector has looked at them — that is the reason it exists.
"""

from __future__ import annotations

import gc

import pytest

from bot.core import Effect, EffectType, Policy, fold, step
from bot.core.effects import EffectLog, effect_of_row
from questbot_testing.journals import JournalBuilder


def main_line() -> JournalBuilder:
    b = JournalBuilder("q-log").sense()
    b.add("hypothesis_written", summary="h")
    b.decide("A")
    b.add("reproduced", check="t")
    b.add("plan_written", summary="p")
    b.decide("B")
    b.add("patch_pushed", head="a1", pusher="questbot[bot]")
    b.prove()
    b.decide("C")
    b.add("landed", merge_sha="m1")
    b.add("watch_clean")
    return b


def test_the_log_reads_as_the_effects_of_each_step_in_order() -> None:
    b = main_line()
    log = fold(b.events, b.policy).effects
    assert isinstance(log, EffectLog)
    stepped: list[Effect] = []
    quest = None
    for event in b.events:
        t = step(quest, event, b.policy)
        quest = t.quest
        stepped.extend(t.effects)
    assert len(log) == len(stepped) > 10
    assert list(log) == stepped and log == tuple(stepped) and log == stepped
    assert log[0] == stepped[0] and log[-1] == stepped[-1]
    assert log[2:5] == tuple(stepped[2:5]) and isinstance(log[2:5], tuple)
    for effect in log:
        assert type(effect) is Effect and type(effect.type) is EffectType
        assert effect.key == f"{effect.quest_id}:{effect.revision}:{effect.type.value}:" \
                             f"{effect.event_id}:{effect.occurrence}"
    with pytest.raises(IndexError):
        log[len(stepped)]


def test_logs_compare_by_their_effects() -> None:
    b = main_line()
    assert fold(b.events, b.policy).effects == fold(b.events, b.policy).effects
    assert fold(b.events, b.policy).effects != fold(b.events[:-3], b.policy).effects
    assert EffectLog() == () and EffectLog() != (1,)
    assert EffectLog().__eq__("not a sequence of effects") is NotImplemented
    with pytest.raises(TypeError):
        hash(EffectLog())


def test_the_repr_shows_the_effects() -> None:
    b = main_line()
    log = fold(b.events[:3], b.policy).effects
    assert repr(log) == f"EffectLog({list(log)!r})"
    assert "EffectType.RUN_TRIAGE" in repr(log) or "run_triage" in repr(log)


def test_rows_and_flat_payloads_are_left_alone_by_the_collector() -> None:
    b = main_line()
    log = fold(b.events, Policy()).effects
    gc.collect()
    assert isinstance(log, EffectLog)
    # every row: the collector looked once and stopped tracking it
    assert not any(gc.is_tracked(row) for row in log._rows)
    nested = [p for p in log._payloads if any(isinstance(v, list | dict) for v in p.values())]
    assert len(nested) == 1 and "reproduction_command" in nested[0]  # run_proof's argv
    # every other payload is a dict of plain values, which the collector never tracks
    assert not any(gc.is_tracked(p) for p in log._payloads if not any(
        isinstance(v, list | dict) for v in p.values()))


def test_a_log_needs_a_payload_for_every_row() -> None:
    with pytest.raises(ValueError, match="1 effect rows but 0 payloads"):
        EffectLog([("k", "land", "q", 1, "e", 0)], [])


def test_a_row_becomes_the_effect_with_its_enum_type() -> None:
    payload = {"stage": "patch"}
    row = ("q-1:2:start_agent:e9:0", "start_agent", "q-1", 2, "e9", 0)
    effect = effect_of_row(row, payload)
    assert effect == Effect(key="q-1:2:start_agent:e9:0", type=EffectType.START_AGENT,
                            quest_id="q-1", revision=2, event_id="e9", occurrence=0,
                            payload=payload)
    assert effect.type is EffectType.START_AGENT and effect.payload is payload


def test_the_stored_record_has_exactly_the_effect_fields() -> None:
    # EffectRecord (what the journal stores) mirrors Effect field for field
    from bot.core.effects import EffectRecord

    assert list(EffectRecord.__annotations__) == list(Effect._fields)
