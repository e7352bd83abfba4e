"""``accepts``: what the core says a quest takes now agrees with what ``step`` does, and with
the seed's table where the table has no cell."""

from __future__ import annotations

import pytest

from bot.core import ANY_PERSON, EVENT_TYPES, InvalidTransition, State, accepts, step
from bot.core.lifecycle import reserved_for
from questbot_testing.journals import JournalBuilder
from tests.core.quests import builder_in, plausible
from tests.core.test_table import SEED

S = State
PAIRS = [(s, t) for s in State for t in EVENT_TYPES]


@pytest.mark.parametrize(("state", "event_type"), PAIRS, ids=[f"{s}-{t}" for s, t in PAIRS])
@pytest.mark.parametrize("actor", ["maintainer", "alice"])
def test_what_step_takes_is_accepted(state: State, event_type: str, actor: str) -> None:
    b = builder_in(state)
    assert b.quest is not None
    event = plausible(b, event_type, actor=actor)
    try:
        taken = not step(b.quest, event, b.policy).absorbed
    except InvalidTransition:
        taken = False
    accepted = accepts(b.quest, event_type, event.actor)
    assert accepted or not taken
    if event_type not in SEED[state]:
        assert not accepted


def test_only_signal_sensed_is_accepted_without_a_quest() -> None:
    assert [t for t in EVENT_TYPES if accepts(None, t)] == ["signal_sensed"]


def test_a_claim_reserves_workflow_actions_for_its_owner() -> None:
    b = builder_in(S.READY)
    b.add("claimed", actor="alice")
    q = b.quest
    assert q is not None
    assert reserved_for(q, "released") == "alice" and reserved_for(q, "comment_posted") is None
    assert accepts(q, "released", "alice") and not accepts(q, "released", ANY_PERSON)
    assert not accepts(q, "checkpoint_decided", "bob")
    assert accepts(q, "comment_posted", "bob")


def test_preconditions_on_the_quest_record() -> None:
    reproducing = builder_in(S.REPRODUCING).quest
    assert reproducing is not None
    assert not accepts(reproducing, "plan_written")  # no reproduction recorded yet
    over_proof = builder_in(S.READY)
    over_proof.add("claimed", actor="alice")
    over_proof.add("human_revision", head="h2", pusher="bob")
    q = over_proof.quest
    assert q is not None and q.claimed_from is S.PROVING
    assert not accepts(q, "checkpoint_decided", "alice")  # no checkpoint is open
    assert accepts(q, "proof_completed") and accepts(q, "released", "alice")
    research = JournalBuilder().sense(route="research_only")
    research.add("hypothesis_written", summary="h")
    research.decide("A")
    done = research.quest
    assert done is not None and done.state is S.PARKED
    assert not accepts(done, "resumed", ANY_PERSON) and accepts(done, "triaged", ANY_PERSON)
    paused = builder_in(S.PARKED).quest
    assert paused is not None
    assert accepts(paused, "resumed", ANY_PERSON) and not accepts(paused, "triaged", ANY_PERSON)
    routed = builder_in(S.TRIAGED).quest
    assert routed is not None
    assert accepts(routed, "triaged", ANY_PERSON) and not accepts(routed, "triaged")
    assert not accepts(builder_in(S.HYPOTHESISED).quest, "claimed")  # a person claims


def test_terminal_quests_accept_only_their_rows() -> None:
    closed = builder_in(S.CLOSED).quest
    assert closed is not None
    assert {t for t in EVENT_TYPES if accepts(closed, t, ANY_PERSON)} == {
        "usage_recorded", "reopened"}  # seed 000: only usage receipts, and DESIGN 5's reopen
