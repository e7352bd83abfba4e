"""Every (state, event type) pair: defined pairs give the expected next state and effects;
undefined pairs are refused (terminal states absorb) and leave the quest unchanged."""

from __future__ import annotations

import pytest

from bot.core import EVENT_TYPES, InvalidTransition, Refusal, State, step
from bot.core.states import AGENT_STATES, TERMINAL
from bot.core.table import TABLE
from tests.core.quests import builder_in, plausible

S = State
Expect = tuple[State, tuple[str, ...]] | Refusal

# What the plausible event of each type does to the canonical quest of each state, where the
# table defines the pair. Pairs not listed here and defined as "stays" expect no change and no
# effects; every other defined pair must be listed.
EXPECTED: dict[tuple[State, str], Expect] = {
    (S.SENSED, "triaged"): (S.RESEARCHING, ("start_agent",)),
    (S.TRIAGED, "triaged"): (S.RESEARCHING, ("start_agent",)),
    (S.PARKED, "triaged"): Refusal.UNDEFINED,  # only a finished research-only quest
    (S.RESEARCHING, "hypothesis_written"): (S.HYPOTHESISED, ("request_checkpoint",)),
    (S.REPRODUCING, "reproduction_failed"): (S.PARKED, ("notify_inbox",)),
    (S.REPRODUCING, "plan_written"): Refusal.BAD_EVENT,  # no reproduction recorded yet
    (S.PATCHING, "patch_pushed"): (S.PROVING, ("run_proof",)),
    (S.PROVING, "proof_completed"): (S.READY, ("request_checkpoint",)),
    (S.HANDED_OFF, "proof_completed"): Refusal.BAD_EVENT,  # no proof running under the claim
    (S.PROVING, "proof_failed"): (S.PATCHING, ("start_agent",)),
    (S.HANDED_OFF, "proof_failed"): Refusal.BAD_EVENT,
    (S.HYPOTHESISED, "checkpoint_decided"): (S.REPRODUCING, ("start_agent",)),
    (S.PLANNED, "checkpoint_decided"): (S.PATCHING, ("start_agent",)),
    (S.READY, "checkpoint_decided"): (S.LANDING, ("land",)),
    (S.HANDED_OFF, "checkpoint_decided"): Refusal.CLAIMED,  # alice holds it
    (S.HYPOTHESISED, "claimed"): (S.HANDED_OFF, ("reply_comment",)),
    (S.PLANNED, "claimed"): (S.HANDED_OFF, ("reply_comment",)),
    (S.READY, "claimed"): (S.HANDED_OFF, ("reply_comment",)),
    (S.HANDED_OFF, "released"): Refusal.CLAIMED,
    (S.HANDED_OFF, "paused"): Refusal.CLAIMED,
    (S.HANDED_OFF, "killed"): Refusal.CLAIMED,
    (S.PARKED, "resumed"): (S.RESEARCHING, ("start_agent",)),
    (S.PATCHING, "human_revision"): (S.PROVING, ("stop_agent", "run_proof")),
    (S.PROVING, "human_revision"): (S.PROVING, ("run_proof",)),
    (S.READY, "human_revision"): (S.PROVING, ("run_proof",)),
    (S.LANDING, "human_revision"): (S.PROVING, ("run_proof",)),
    (S.HANDED_OFF, "human_revision"): (S.HANDED_OFF, ("run_proof",)),
    (S.PROVING, "base_moved"): (S.PATCHING, ("rebase",)),
    (S.READY, "base_moved"): (S.PATCHING, ("rebase",)),
    (S.LANDING, "base_moved"): (S.PATCHING, ("rebase",)),
    (S.HANDED_OFF, "base_moved"): (S.PATCHING, ("rebase",)),
    (S.LANDING, "landed"): (S.WATCHING, ("start_watch", "register_regression_probe",
                                         "run_probes")),
    (S.WATCHING, "watch_clean"): (S.CLOSED, ()),
    (S.WATCHING, "regression_detected"): (S.ROLLED_BACK, ("rollback",)),
    (S.ROLLED_BACK, "rollback_confirmed"): (S.RESEARCHING, ("start_agent",)),
    (S.CLOSED, "reopened"): (S.RESEARCHING, ("start_agent",)),
    (S.WATCHING, "child_evidence"): (S.WATCHING, ("resume_dependents",)),
    (S.PARKED, "parent_landed"): (S.PARKED, ()),  # paused, not waiting for a parent
}
for _s in TABLE["paused"]:
    if _s is not None and (_s, "paused") not in EXPECTED:
        EXPECTED[(_s, "paused")] = (S.PARKED, ("stop_agent",) if _s in AGENT_STATES else ())
for _s in TABLE["killed"]:
    if _s is not None and (_s, "killed") not in EXPECTED:
        EXPECTED[(_s, "killed")] = (S.ABANDONED, ("stop_agent",) if _s in AGENT_STATES else ())
for _s in TABLE["spend_requested"]:
    if _s is not None:
        EXPECTED[(_s, "spend_requested")] = (_s, ("request_spend",))
        EXPECTED[(_s, "spend_decided")] = Refusal.BAD_EVENT  # nothing pending

PAIRS = [(s, t) for s in State for t in EVENT_TYPES]


def _stays(state: State, event_type: str) -> bool:
    return TABLE[event_type].get(state) == frozenset({state})


def test_every_defined_pair_has_an_expectation() -> None:
    missing = [(s.value, t) for s in State for t in EVENT_TYPES
               if s in TABLE[t] and (s, t) not in EXPECTED and not _stays(s, t)]
    assert missing == []


@pytest.mark.parametrize(("state", "event_type"), PAIRS, ids=[f"{s}-{t}" for s, t in PAIRS])
def test_pair(state: State, event_type: str) -> None:
    b = builder_in(state)
    before = b.quest
    assert before is not None
    event = plausible(b, event_type)
    defined = state in TABLE[event_type]
    if not defined and state in TERMINAL:
        t = step(before, event, b.policy)
        assert t.absorbed and t.quest == before and t.effects == ()
        return
    expect: Expect | None = EXPECTED.get((state, event_type))
    if not defined:
        code = Refusal.CLAIMED if state is S.HANDED_OFF and event_type in {
            "checkpoint_decided", "claimed", "released", "paused", "resumed", "killed",
            "triaged"} else Refusal.UNDEFINED
        expect = code
    if expect is None:
        assert _stays(state, event_type)
        expect = (state, ())
    if isinstance(expect, Refusal):
        with pytest.raises(InvalidTransition) as info:
            step(before, event, b.policy)
        assert info.value.code is expect
        assert info.value.state == state.value and info.value.event_type == event_type
        assert b.quest == before  # unchanged: models are frozen and nothing was replaced
        return
    t = step(before, event, b.policy)
    next_state, effect_types = expect
    assert t.quest.state is next_state
    assert tuple(e.type.value for e in t.effects) == effect_types
    assert not t.absorbed
    for e in t.effects:
        assert e.key == f"{t.quest.id}:{t.quest.revision}:{e.type.value}:{event.id}:" \
                        f"{e.occurrence}"


def test_refusal_message_names_state_event_and_reason() -> None:
    b = builder_in(S.RESEARCHING)
    with pytest.raises(InvalidTransition) as info:
        step(b.quest, plausible(b, "landed"), b.policy)
    message = str(info.value)
    assert "landed" in message and "researching" in message and "only defined in" in message


def test_only_signal_sensed_creates_a_quest() -> None:
    b = builder_in(S.SENSED)
    for event_type in EVENT_TYPES:
        event = plausible(b, event_type)
        if event_type == "signal_sensed":
            assert step(None, event, b.policy).quest.state is S.SENSED
        else:
            with pytest.raises(InvalidTransition):
                step(None, event, b.policy)


def test_signal_sensed_on_an_existing_quest_is_refused() -> None:
    b = builder_in(S.RESEARCHING)
    with pytest.raises(InvalidTransition):
        step(b.quest, plausible(b, "signal_sensed"), b.policy)


def test_event_for_another_quest_is_refused() -> None:
    b = builder_in(S.RESEARCHING)
    other = plausible(b, "hypothesis_written").model_copy(update={"quest_id": "q-2"})
    with pytest.raises(InvalidTransition) as info:
        step(b.quest, other, b.policy)
    assert info.value.code is Refusal.BAD_EVENT
