"""The table against the seed, and every (state, event type) pair against the core.

``SEED`` states the moves independently of ``bot.core.table``: written out from seed 000 (its
main line, its branches table, claims and terminal rules, how a quest starts) and the points
``docs/decisions.md`` and ``docs/lifecycle.md`` settle. A move missing from the table, or
one it adds, fails ``test_table_rows_are_the_seeds`` and the pair tests below, which take
"defined" from ``SEED`` too: defined pairs give the expected next state and effects, undefined
pairs are refused (terminal states absorb) and leave the quest unchanged."""

from __future__ import annotations

import pytest

from bot.core import EVENT_TYPES, InvalidTransition, Refusal, State, step
from bot.core.table import NO_QUEST, TABLE
from tests.core.quests import builder_in, plausible

S = State
Expect = tuple[State, tuple[str, ...]] | Refusal
Moves = dict[str, set[State]]

# --- the seed's table, written out -------------------------------------------------------

TERMINAL = {S.CLOSED, S.ABANDONED}
"""Seed 000: "closed and abandoned are terminal"."""
AGENT = {S.RESEARCHING, S.REPRODUCING, S.PATCHING}
"""Seed 000's agent steps: leaving them early asks for stop_agent."""
ANY_ACTIVE = {S.SENSED, S.TRIAGED, S.RESEARCHING, S.HYPOTHESISED, S.REPRODUCING, S.PLANNED,
              S.PATCHING, S.PROVING, S.READY, S.LANDING, S.WATCHING, S.ROLLED_BACK,
              S.HANDED_OFF}
"""Every state that is neither terminal nor parked: where "paused" reaches, and so where
"resumed" may return to ("the state it was in")."""
RECORDS = ("signal_attached", "child_evidence", "spend_requested", "spend_decided",
           "usage_recorded", "comment_posted", "effect_failed")
"""Bookkeeping every live state records without moving: signals merged into a quest (route
duplicate), a child's evidence (route conflict), spend and usage, comments ("comments still
work"), an effect that could not be delivered."""


def _records(state: State) -> Moves:
    return {event: {state} for event in RECORDS}


STOPS: Moves = {"paused": {S.PARKED}, "killed": {S.ABANDONED}}
"""Branches: "any active state — paused → parked" and "killed, or a checkpoint rejected →
abandoned". A parked quest is not paused again; it can still be killed (its row says so)."""

HALTS: Moves = {"agent_halted": {S.PARKED}}
"""questbot's own (issue 12): an agent run that ended without its stage's result — failed,
refused, needs a person, or no agent set up — parks the quest ("stopped, with a reason")."""

BUDGET: dict[State, Moves] = {
    S.TRIAGED: {"research_started": {S.PARKED}, "triaged": {S.PARKED}},
    S.RESEARCHING: {"human_revision": {S.PARKED}},
    S.REPRODUCING: {"human_revision": {S.PARKED}},
    S.PLANNED: {"checkpoint_decided": {S.PARKED}},
    S.READY: {"checkpoint_decided": {S.PARKED}},
    S.ROLLED_BACK: {"rollback_confirmed": {S.PARKED}},
    S.CLOSED: {"reopened": {S.PARKED}},
    S.PARKED: {"resumed": {S.PARKED}, "triaged": {S.PARKED},
               "spend_decided": {S.RESEARCHING, S.REPRODUCING, S.PATCHING}},
}
"""issue 12 (budgets, seed 000's request_spend and start_respondent_run): a move that would
start an agent stage with the quest's budget spent parks it instead, with a spend request; the
person's approval returns it to that stage. Added to the cells below that had no way to
parked already (a decision at A, a failed proof, a parent landing park already)."""


SEED: dict[State, Moves] = {
    # how a quest starts: main line sensed → triaged (a route was chosen), human waits there
    # (DESIGN 1), ignore and duplicate end it, conflict parks a child
    # issue 12 (flaky before fixing): triage re-runs a failed check on its commit first and
    # stays sensed; the re-run failing again routes it (triaged), passing ends it as flaky
    S.SENSED: {**_records(S.SENSED), **STOPS,
               "triaged": {S.TRIAGED, S.ABANDONED, S.PARKED},
               "rerun_requested": {S.SENSED},
               # issue 14 (limits): held for a free slot or a reflection, still sensed
               "held": {S.SENSED},
               "rerun_reported": {S.TRIAGED, S.ABANDONED},
               "human_revision": {S.SENSED}, "base_moved": {S.SENSED}},
    # main line triaged → researching: auto_fix and research_only start research; a person
    # starts a quest routed to them (DESIGN 1)
    S.TRIAGED: {**_records(S.TRIAGED), **STOPS,
                "research_started": {S.RESEARCHING},
                "triaged": {S.RESEARCHING},
                "human_revision": {S.TRIAGED}, "base_moved": {S.TRIAGED}},
    # main line: researching → hypothesised
    S.RESEARCHING: {**_records(S.RESEARCHING), **STOPS,
                    "hypothesis_written": {S.HYPOTHESISED},
                    **HALTS,
                    "human_revision": {S.RESEARCHING}, "base_moved": {S.RESEARCHING}},
    # checkpoint A: approve → reproducing (research-only parks), revise → researching,
    # reject → abandoned, recorded-only stays (DESIGN 2, 4); claims at a checkpoint
    S.HYPOTHESISED: {**_records(S.HYPOTHESISED), **STOPS,
                     "checkpoint_decided": {S.HYPOTHESISED, S.REPRODUCING, S.RESEARCHING,
                                            S.PARKED, S.ABANDONED},
                     "claimed": {S.HANDED_OFF},
                     "human_revision": {S.HYPOTHESISED}, "base_moved": {S.HYPOTHESISED}},
    # main line: reproducing → planned; branches: cannot reproduce → parked
    S.REPRODUCING: {**_records(S.REPRODUCING), **STOPS,
                    "reproduced": {S.REPRODUCING},
                    "reproduction_failed": {S.PARKED},
                    "plan_written": {S.PLANNED},
                    **HALTS,
                    "human_revision": {S.REPRODUCING}, "base_moved": {S.REPRODUCING}},
    # checkpoint B: approve → patching, revise → reproducing (DESIGN 2), reject → abandoned
    S.PLANNED: {**_records(S.PLANNED), **STOPS,
                "checkpoint_decided": {S.PLANNED, S.PATCHING, S.REPRODUCING, S.ABANDONED},
                "claimed": {S.HANDED_OFF},
                "human_revision": {S.PLANNED}, "base_moved": {S.PLANNED}},
    # main line: patching → proving; a person's push is proved (interpretation 11)
    S.PATCHING: {**_records(S.PATCHING), **STOPS,
                 "patch_pushed": {S.PROVING},
                 **HALTS,
                 "human_revision": {S.PROVING, S.PATCHING},
                 "base_moved": {S.PATCHING}},
    # main line: proving → ready; branches: proof failed → patching, or parked when attempts
    # are exhausted; a base change → patching (interpretation 10)
    S.PROVING: {**_records(S.PROVING), **STOPS,
                "proof_completed": {S.READY},
                "proof_failed": {S.PATCHING, S.PARKED},
                "human_revision": {S.PROVING},
                "base_moved": {S.PATCHING, S.PROVING}},
    # checkpoint C: approve → landing, revise → patching, reject → abandoned; new proof for a
    # person's push; a base change → patching
    S.READY: {**_records(S.READY), **STOPS,
              "checkpoint_decided": {S.READY, S.LANDING, S.PATCHING, S.ABANDONED},
              "claimed": {S.HANDED_OFF},
              "human_revision": {S.PROVING, S.READY},
              "base_moved": {S.PATCHING, S.READY}},
    # main line: landing → watching; branches: the base branch moved → patching, to rebase
    S.LANDING: {**_records(S.LANDING), **STOPS,
                "landed": {S.WATCHING},
                "human_revision": {S.PROVING, S.LANDING},
                "base_moved": {S.PATCHING, S.LANDING}},
    # main line: watching → closed; branches: regression → rolled_back
    S.WATCHING: {**_records(S.WATCHING), **STOPS,
                 "watch_clean": {S.CLOSED},
                 "regression_detected": {S.ROLLED_BACK},
                 "base_moved": {S.WATCHING}},
    # terminal: absorbs all but usage receipts (the seed) and a regression with its
    # fingerprint reopening it (DESIGN 5)
    S.CLOSED: {"usage_recorded": {S.CLOSED}, "reopened": {S.RESEARCHING}},
    # branches: rollback confirmed → researching, at revision + 1
    S.ROLLED_BACK: {**_records(S.ROLLED_BACK), **STOPS,
                    "rollback_confirmed": {S.RESEARCHING},
                    "base_moved": {S.ROLLED_BACK}},
    # branches: resumed → the state it was in; finished research becomes a fix (/quest fix);
    # a conflict child starts research when its parent lands
    S.PARKED: {**_records(S.PARKED), "killed": {S.ABANDONED},
               "resumed": ANY_ACTIVE,
               "triaged": {S.REPRODUCING},
               "parent_landed": {S.RESEARCHING, S.PARKED},
               "human_revision": {S.PARKED}, "base_moved": {S.PARKED}},
    # claims: the owner's decision applies at the claimed checkpoint (and ends the claim),
    # release returns to the state it was in (a checkpoint, or proving when a person pushed),
    # proof keeps flowing: success keeps the review held, failure clears the owner
    S.HANDED_OFF: {**_records(S.HANDED_OFF), **STOPS,
                   "checkpoint_decided": {S.REPRODUCING, S.RESEARCHING, S.PARKED, S.PATCHING,
                                          S.LANDING, S.ABANDONED},
                   "released": {S.HYPOTHESISED, S.PLANNED, S.READY, S.PROVING},
                   "proof_completed": {S.HANDED_OFF},
                   "proof_failed": {S.PATCHING, S.PARKED},
                   "human_revision": {S.HANDED_OFF},
                   "base_moved": {S.PATCHING, S.HANDED_OFF}},
    # terminal: absorbs all but usage receipts
    S.ABANDONED: {"usage_recorded": {S.ABANDONED}},
}


for _state, _moves in BUDGET.items():
    for _event, _targets in _moves.items():
        SEED[_state][_event] = SEED[_state][_event] | _targets

GAVE_UP = {S.SENSED, S.RESEARCHING, S.REPRODUCING, S.PATCHING, S.PROVING, S.LANDING,
           S.WATCHING, S.ROLLED_BACK}
"""issue 25: the states where only questbot's own work moves the quest on (triage, the agent,
the proof, the merge, the watch, the revert). When that work fails for good the quest parks
("stopped, with a reason"), so nothing sits there with nothing running; the checkpoints, a
claimed review and a quest routed to a person wait for people, not for questbot."""
for _state in GAVE_UP:
    SEED[_state]["effect_failed"] = SEED[_state]["effect_failed"] | {S.PARKED}


def _defined(state: State, event_type: str) -> bool:
    return event_type in SEED[state]


def test_table_rows_are_the_seeds() -> None:
    assert set(TABLE) == set(State), "every state is a row, terminal ones too"
    assert {e: set(t) for e, t in NO_QUEST.items()} == {"signal_sensed": {S.SENSED}}
    wrong = {}
    for state in State:
        row = {event: set(targets) for event, targets in TABLE[state].items()}
        missing = {e: t - row.get(e, set()) for e, t in SEED[state].items()
                   if t - row.get(e, set())}
        extra = {e: t - SEED[state].get(e, set()) for e, t in row.items()
                 if t - SEED[state].get(e, set())}
        if missing or extra:
            wrong[state.value] = {"missing": missing, "extra": extra}
    assert wrong == {}
    assert all(set(row) <= set(EVENT_TYPES) for row in TABLE.values())


# What the plausible event of each type does to the canonical quest of each state, where the
# seed defines the pair. Pairs not listed here and defined as "stays" expect no change and no
# effects; every other defined pair must be listed.
EXPECTED: dict[tuple[State, str], Expect] = {
    (S.SENSED, "triaged"): (S.TRIAGED, ()),  # research starts on its follow-up
    (S.SENSED, "rerun_requested"): (S.SENSED, ("rerun_check",)),
    (S.SENSED, "held"): (S.SENSED, ("notify_inbox",)),
    (S.SENSED, "rerun_reported"): Refusal.BAD_EVENT,  # no re-run asked for
    (S.TRIAGED, "research_started"): Refusal.UNDEFINED,  # routed to a person: they start it
    (S.TRIAGED, "triaged"): (S.RESEARCHING, ("start_agent",)),
    (S.PARKED, "triaged"): Refusal.UNDEFINED,  # only a finished research-only quest
    (S.RESEARCHING, "hypothesis_written"): (S.HYPOTHESISED, ("request_checkpoint",)),
    (S.REPRODUCING, "reproduction_failed"): (S.PARKED, ("notify_inbox",)),
    (S.RESEARCHING, "agent_halted"): (S.PARKED, ("notify_inbox",)),
    (S.REPRODUCING, "agent_halted"): (S.PARKED, ("notify_inbox",)),
    (S.PATCHING, "agent_halted"): (S.PARKED, ("notify_inbox",)),
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
    (S.HYPOTHESISED, "claimed"): (S.HANDED_OFF, ("reply_comment", "show_claim")),
    (S.PLANNED, "claimed"): (S.HANDED_OFF, ("reply_comment", "show_claim")),
    (S.READY, "claimed"): (S.HANDED_OFF, ("reply_comment", "show_claim")),
    (S.HANDED_OFF, "released"): Refusal.CLAIMED,
    (S.HANDED_OFF, "paused"): Refusal.CLAIMED,
    (S.HANDED_OFF, "killed"): Refusal.CLAIMED,
    (S.PARKED, "resumed"): (S.RESEARCHING, ("start_agent",)),
    (S.RESEARCHING, "human_revision"): (S.RESEARCHING, ("stop_agent", "start_agent")),
    (S.REPRODUCING, "human_revision"): (S.REPRODUCING, ("stop_agent", "start_agent")),
    (S.PATCHING, "human_revision"): (S.PROVING, ("stop_agent", "run_proof")),
    (S.PROVING, "human_revision"): (S.PROVING, ("run_proof",)),
    (S.READY, "human_revision"): (S.PROVING, ("run_proof",)),
    (S.LANDING, "human_revision"): (S.PROVING, ("run_proof",)),
    (S.HANDED_OFF, "human_revision"): (S.HANDED_OFF, ("run_proof",)),
    (S.PROVING, "base_moved"): (S.PATCHING, ("rebase",)),
    (S.READY, "base_moved"): (S.PATCHING, ("rebase",)),
    (S.LANDING, "base_moved"): (S.PATCHING, ("rebase",)),
    (S.HANDED_OFF, "base_moved"): (S.PATCHING, ("rebase", "show_claim")),  # the claim ends
    (S.LANDING, "landed"): (S.WATCHING, ("start_watch", "register_regression_probe",
                                         "run_probes")),
    (S.WATCHING, "watch_clean"): (S.CLOSED, ()),
    (S.WATCHING, "regression_detected"): (S.ROLLED_BACK, ("rollback",)),
    (S.ROLLED_BACK, "rollback_confirmed"): (S.RESEARCHING, ("start_agent",)),
    (S.CLOSED, "reopened"): (S.RESEARCHING, ("start_agent",)),
    (S.WATCHING, "child_evidence"): (S.WATCHING, ("resume_dependents",)),
    (S.PARKED, "parent_landed"): (S.PARKED, ()),  # paused, not waiting for a parent
    # the plausible failure is the merge's (``land``): only a landing quest waits on it
    (S.LANDING, "effect_failed"): (S.PARKED, ("notify_inbox",)),
    **{(s, "effect_failed"): (s, ()) for s in GAVE_UP - {S.LANDING}},
}
for _s, _moves in SEED.items():
    if "paused" in _moves and (_s, "paused") not in EXPECTED:
        EXPECTED[(_s, "paused")] = (S.PARKED, ("stop_agent",) if _s in AGENT else ())
    if "killed" in _moves and (_s, "killed") not in EXPECTED:
        EXPECTED[(_s, "killed")] = (S.ABANDONED, ("stop_agent",) if _s in AGENT else ())
    if "spend_requested" in _moves:
        EXPECTED[(_s, "spend_requested")] = (_s, ("request_spend",))
        EXPECTED[(_s, "spend_decided")] = Refusal.BAD_EVENT  # nothing pending

PAIRS = [(s, t) for s in State for t in EVENT_TYPES]


def _stays(state: State, event_type: str) -> bool:
    return SEED[state].get(event_type) == {state}


def test_every_defined_pair_has_an_expectation() -> None:
    missing = [(s.value, t) for s in State for t in EVENT_TYPES
               if _defined(s, t) and (s, t) not in EXPECTED and not _stays(s, t)]
    assert missing == []


@pytest.mark.parametrize(("state", "event_type"), PAIRS, ids=[f"{s}-{t}" for s, t in PAIRS])
def test_pair(state: State, event_type: str) -> None:
    b = builder_in(state)
    before = b.quest
    assert before is not None
    event = plausible(b, event_type)
    defined = _defined(state, event_type)
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
    for follow_up in t.follow_ups:  # questbot's own next move: one the seed's table lists
        after = step(t.quest, follow_up, b.policy)
        assert after.quest.state in SEED[t.quest.state][follow_up.type]


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
