"""``fold``'s replay loop, and the effects it keeps, against the plain forms they stand in for.

``fold`` steps events without allocating a ``Transition`` each, and keeps effects as rows whose
keys it joins itself. Here a reference fold made of ``step`` calls must agree with it exactly,
on journals with redeliveries, terminal absorption and refused events; and every effect either
returns must be the one ``Effect(key=effect_key(...), ...)`` builds the plain way.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from bot.core import (
    EVENT_ADAPTER,
    Effect,
    EffectType,
    Event,
    FoldResult,
    InvalidAt,
    InvalidTransition,
    Policy,
    Quest,
    effect_key,
    fold,
    step,
)
from bot.journal.records import dump_effect
from bot.tools.scenarios import JournalBuilder

EXAMPLES = sorted((Path(__file__).parents[2] / "examples").glob("*.jsonl"))


def reference_fold(events: Sequence[Event], policy: Policy, *, stop_at_invalid: bool = True,
                   quest: Quest | None = None) -> FoldResult:
    effects: list[Effect] = []
    seen: set[str] = set()
    absorbed: list[str] = []
    invalid: InvalidAt | None = None
    applied = 0
    due: list[Event] = []  # follow-ups the last event set off
    for index, event in enumerate(events):
        while due and due[0].id != event.id:  # not journaled: applied as the writer would
            follow_up = due.pop(0)
            seen.add(follow_up.id)
            t = step(quest, follow_up, policy)
            quest = t.quest
            effects.extend(t.effects)
            applied += 1
            due[:0] = t.follow_ups
        due = []
        if event.id in seen:
            absorbed.append(event.id)
            continue
        seen.add(event.id)
        try:
            t = step(quest, event, policy)
        except InvalidTransition as exc:
            if invalid is None:
                invalid = InvalidAt(index, event.id, event.type, exc.state, exc.reason, exc.code)
            if stop_at_invalid:
                break
            continue
        if t.absorbed:
            absorbed.append(event.id)
        quest = t.quest
        effects.extend(t.effects)
        applied += 1
        due = list(t.follow_ups)
    return FoldResult(quest, tuple(effects), invalid, applied, tuple(absorbed))


def journal() -> JournalBuilder:
    """A few cycles of the main line with failures, pauses, claims, a rollback and a close."""
    b = JournalBuilder("q-fast").sense()
    for cycle in range(1, 4):
        b.add("usage_recorded", tokens=10, cost_cents=1)
        b.add("hypothesis_written", summary="h")
        b.add("claimed", actor="alice")
        b.add("released", actor="alice")
        b.decide("A")
        b.add("reproduced", check="t")
        b.add("plan_written", summary="p")
        b.decide("B")
        b.add("patch_pushed", head=f"a{cycle}", pusher="questbot[bot]")
        b.add("proof_failed", head=f"a{cycle}", reason="red")
        b.add("paused", actor="maintainer")
        b.add("resumed", actor="maintainer")
        b.add("patch_pushed", head=f"b{cycle}", pusher="questbot[bot]")
        b.prove()
        b.decide("C")
        b.add("child_evidence", child=f"q-child-{cycle}")
        b.add("landed", merge_sha=f"m{cycle}")
        if cycle == 1:
            b.add("regression_detected", source="r")
            b.add("rollback_confirmed", revert_sha="r1")
        else:
            b.add("watch_clean")
            b.add("usage_recorded", tokens=1)  # recorded on a closed quest
            if cycle == 2:
                b.add("reopened", fingerprint="fp-1")
    return b


def assert_same(ours: FoldResult, theirs: FoldResult) -> None:
    assert ours == theirs
    assert [dump_effect(e) for e in ours.effects] == [dump_effect(e) for e in theirs.effects]
    assert [repr(e) for e in ours.effects] == [repr(e) for e in theirs.effects]


@pytest.mark.parametrize("stop", [True, False])
def test_fold_matches_a_fold_of_steps(stop: bool) -> None:
    b = journal()
    events = list(b.events)

    def extra(n: int, type_: str, **fields: object) -> Event:
        return b.event(type_, **fields).model_copy(update={"id": f"q-fast-x{n}"})

    mixed = [*events[:20], events[5], *events[20:], events[0],
             extra(1, "hypothesis_written", summary="after the end"),  # absorbed by closed
             extra(2, "usage_recorded", tokens=2),  # still recorded
             extra(3, "usage_recorded").model_copy(update={"quest_id": "q-other"}),  # refused
             extra(4, "usage_recorded", tokens=3)]
    out_of_order = [*mixed[:7], mixed[30], *mixed[7:]]  # refused mid-journal
    for journal_ in (events, mixed, out_of_order):
        assert_same(fold(journal_, b.policy, stop_at_invalid=stop),
                    reference_fold(journal_, b.policy, stop_at_invalid=stop))


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_fold_matches_a_fold_of_steps_on_the_examples(path: Path) -> None:
    events = [EVENT_ADAPTER.validate_json(line) for line in path.read_text().splitlines()
              if line.strip()]
    assert_same(fold(events, Policy()), reference_fold(events, Policy()))


def test_every_effect_is_the_one_built_the_plain_way() -> None:
    b = journal()
    for effect in [*fold(b.events, b.policy).effects, *step(None, b.events[0], b.policy).effects]:
        plain = Effect(key=effect_key(effect.quest_id, effect.revision, effect.type,
                                      effect.event_id, effect.occurrence),
                       type=EffectType(effect.type.value), quest_id=effect.quest_id,
                       revision=effect.revision, event_id=effect.event_id,
                       occurrence=effect.occurrence, payload=effect.payload)
        assert effect == plain and repr(effect) == repr(plain)
        assert type(effect.key) is str and type(effect.type) is EffectType
    made = fold(b.events, b.policy).effects[0]
    with pytest.raises(AttributeError):
        made.key = "other"  # type: ignore[misc]
