"""``fold``'s replay loop, and the effects it keeps, against the plain forms they stand in for.

``fold`` steps events without allocating a ``Transition`` each, and keeps effects as rows whose
keys it joins itself. Here a reference fold made of ``step`` calls must agree with it exactly,
on journals with redeliveries, terminal absorption and refused events; and every effect either
returns must be the one ``Effect(key=effect_key(...), ...)`` builds the plain way.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from bot.core import (
    EVENT_ADAPTER,
    EVENT_TYPES,
    CheckpointMode,
    Effect,
    EffectType,
    Event,
    FoldResult,
    InvalidAt,
    InvalidTransition,
    Policy,
    Quest,
    State,
    effect_key,
    fold,
    step,
    steps,
)
from bot.core.rules.budget import waits_for_spend
from bot.core.states import CHECKPOINT_AT
from bot.journal.records import dump_effect, dump_quest, load_quest
from questbot_testing.journals import JournalBuilder
from tests.core.quests import plausible

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


# On random journals ``fold`` must build exactly the quest a fold of ``step`` calls builds,
# every field and the fields set, with refused events, redeliveries and follow-ups the journal
# does not hold.

ACTORS = ["maintainer", "alice", "bob", None]
_POLICIES = st.builds(
    Policy,
    checkpoints=st.fixed_dictionaries(
        {c: st.builds(CheckpointMode, blocking=st.booleans()) for c in ("A", "B", "C")}),
    shadow=st.booleans(), max_attempts=st.integers(1, 3),
    budget_cents=st.sampled_from([None, 500, 20, 3]),
    budget_tokens=st.sampled_from([None, 2_000_000, 40, 5]))
_MOVES = st.tuples(
    st.sampled_from(["progress"] * 6 + ["any", "any", "redeliver", "bad proof"]),
    st.sampled_from(EVENT_TYPES), st.sampled_from(ACTORS))
"""Mostly the ordinary next step (so that deep states, revisions and closed attempts are
reached), else an event of any type, a redelivery or a proof whose digest is wrong."""


def _ordinary(b: JournalBuilder) -> Event:
    """The ordinary next event from wherever the quest is, so that deep states are reached."""
    q = b.quest
    assert q is not None
    state, ev = q.state, b.event
    if state is State.HANDED_OFF:
        cp = CHECKPOINT_AT.get(q.checkpoint_state)
        if cp is not None and q.head_pusher != q.owner:
            return ev("checkpoint_decided", checkpoint=cp.value, verdict="approve", actor=q.owner)
        return ev("released", actor=q.owner)
    if state in CHECKPOINT_AT:
        verdict = ("revise", "approve", "approve")[len(b.events) % 3]
        return ev("checkpoint_decided", checkpoint=CHECKPOINT_AT[state].value, verdict=verdict,
                  actor="carol", reason="again")
    if state is State.PROVING:
        bundle = b.bundle()
        return ev("proof_completed", bundle=bundle.as_json(), digest=bundle.digest())
    if state is State.PARKED:
        if q.park_reason == "research_complete":
            return ev("triaged", route="auto_fix", actor="maintainer")
        if waits_for_spend(q):
            return ev("spend_decided", request_id=q.spend_pending[-1], approved=True,
                      actor="maintainer")
        return ev("resumed", actor="maintainer")
    n = len(b.events)
    then: dict[State, tuple[str, dict[str, object]]] = {
        State.SENSED: ("triaged", {"route": "auto_fix"}),
        State.TRIAGED: ("triaged", {"route": "auto_fix", "actor": "maintainer"}),
        State.RESEARCHING: ("hypothesis_written", {"summary": f"h{n}"}),
        State.REPRODUCING: (("plan_written", {"summary": f"p{n}"}) if q.reproduction
                            else ("reproduced", {"check": "t"})),
        State.PATCHING: ("patch_pushed", {"head": f"p{n}", "pusher": "questbot[bot]"}),
        State.LANDING: ("landed", {"merge_sha": f"m{n}"}),
        State.WATCHING: ("watch_clean", {}),
        State.CLOSED: ("reopened", {"fingerprint": q.fingerprint}),
        State.ROLLED_BACK: ("rollback_confirmed", {"revert_sha": "r"}),
    }
    kind, fields = then.get(state, ("usage_recorded", {"tokens": 1}))
    return ev(kind, **fields)


@settings(max_examples=int(os.environ.get("HYPOTHESIS_EXAMPLES", "150")), deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(policy=_POLICIES, route=st.sampled_from(["auto_fix", "research_only", "human"]),
       moves=st.lists(_MOVES, min_size=20, max_size=100), drop_follow_ups=st.booleans(),
       stop=st.booleans())
def test_the_fold_builds_the_quest_a_fold_of_steps_builds(
        policy: Policy, route: str, moves: list[tuple[str, str, str | None]],
        drop_follow_ups: bool, stop: bool) -> None:
    b = JournalBuilder("q-d", policy=policy).sense(route=route)
    journal_: list[Event] = list(b.events)
    for n, (move, event_type, actor) in enumerate(moves):
        if move == "redeliver":
            journal_.append(journal_[n % len(journal_)])
            continue
        if move == "progress":
            event = _ordinary(b)
        elif move == "bad proof":
            q = b.quest
            if q is None or q.head is None or q.base is None:
                continue
            event = b.event("proof_completed", bundle=b.bundle().as_json(), digest="f" * 64)
        else:
            event = plausible(b, event_type, actor or "maintainer").model_copy(
                update={"actor": actor})
        try:
            moved = steps(b.quest, event, policy)
        except InvalidTransition:  # refused: journaled here anyway, under an id of its own
            journal_.append(event.model_copy(update={"id": f"q-d-refused{n}"}))
            continue
        for index, (applied, t) in enumerate(moved):
            b.quest = t.quest
            b.events.append(applied)
            if index == 0 or not drop_follow_ups:
                journal_.append(applied)
    ours = fold(journal_, policy, stop_at_invalid=stop)
    theirs = reference_fold(journal_, policy, stop_at_invalid=stop)
    assert_same(ours, theirs)
    assert type(ours.quest) is Quest
    assert ours.quest is not None and theirs.quest is not None
    assert ours.quest.__dict__ == theirs.quest.__dict__
    assert ours.quest.__pydantic_fields_set__ == theirs.quest.__pydantic_fields_set__
    assert ours.quest.__pydantic_private__ is None and ours.quest.__pydantic_extra__ is None
    if not stop:
        assert ours.quest == b.quest
    loaded = load_quest(dump_quest(ours.quest))
    assert loaded == ours.quest
    assert _fields_sets(loaded) == _fields_sets(ours.quest)  # records made unvalidated too


def _fields_sets(q: Quest) -> list[set[str]]:
    """The fields sets of the records on the quest (``unvalidated.make`` builds them)."""
    records: list[BaseModel] = [*q.seals, *q.attempt_reviews]
    for attempt in q.attempt_log:
        records += [attempt, *attempt.seals, *attempt.reviews]
    return [r.model_fields_set for r in records]


def test_a_fold_from_a_quest_leaves_that_quest_as_it_was() -> None:
    b = journal()
    middle = fold(b.events[:12], b.policy).quest
    assert middle is not None
    kept = dict(middle.__dict__)
    rest = fold(b.events[12:], b.policy, quest=middle)
    assert middle.__dict__ == kept and type(middle) is Quest
    assert rest.quest == fold(b.events, b.policy).quest
