"""Seed 000 read against the core (issue 10, item 7), one behaviour a test: the main line
passes through ``triaged``; a person's push restarts research and reproduction; a rebase is no
proof attempt; a finished quest absorbs an undeliverable effect; ``fold`` replays each event
under the policy it was decided under."""

from __future__ import annotations

import pytest

from bot.core import (
    InvalidTransition,
    Policy,
    Refusal,
    Route,
    State,
    accepts,
    fold,
    step,
)
from bot.core.states import MAIN_LINE
from questbot_testing.journals import JournalBuilder, main_line
from tests.core.quests import builder_in, plausible

S = State


def types(b: JournalBuilder, last: int = 1) -> list[str]:
    """Effect types asked for by the last ``last`` events."""
    ids = {e.id for e in b.events[-last:]}
    return [e.type.value for e in b.effects if e.event_id in ids]


# the main line passes through triaged (seed: sensed → triaged → researching)


@pytest.mark.parametrize("route", ["auto_fix", "research_only"])
def test_triage_moves_the_quest_to_triaged_and_research_starts_from_there(route: str) -> None:
    b = builder_in(S.SENSED)
    triaged = b.event("triaged", route=route)
    t = step(b.quest, triaged, b.policy)
    assert t.quest.state is S.TRIAGED and t.quest.route is Route(route)
    assert t.effects == () and not t.quest.awaiting_person
    (started,) = t.follow_ups
    assert started.type == "research_started" and started.actor is None
    assert started.quest_id == "q-1" and started.at == triaged.at
    nxt = step(t.quest, started, b.policy)
    assert nxt.quest.state is S.RESEARCHING and nxt.follow_ups == ()
    assert [e.type.value for e in nxt.effects] == ["start_agent"]
    assert nxt.effects[0].payload == {"stage": "research"}
    assert nxt.effects[0].event_id == started.id


def test_the_main_line_visits_every_main_state_in_the_seeds_order() -> None:
    b = main_line()
    visited: list[State] = []
    for n in range(1, len(b.events) + 1):
        quest = fold(b.events[:n], b.policy).quest
        assert quest is not None
        if not visited or visited[-1] is not quest.state:
            visited.append(quest.state)
    assert visited == list(MAIN_LINE)


def test_the_journal_records_triage_and_the_start_of_research_as_two_moves() -> None:
    b = JournalBuilder("q-1").sense()
    assert [e.type for e in b.events] == ["signal_sensed", "triaged", "research_started"]
    triaged, started = b.events[1], b.events[2]
    assert started.id == f"{triaged.id}/research" and started.at == triaged.at
    assert b.quest is not None and b.quest.state is S.RESEARCHING
    assert fold(b.events[:2], b.policy).quest.state is S.TRIAGED  # type: ignore[union-attr]


def test_a_journal_without_the_start_of_research_replays_the_same() -> None:
    """Journals written before research_started existed (and journals written by hand) hold
    ``triaged`` alone; fold starts research itself, before the next event."""
    b = main_line()
    older = [e for e in b.events if e.type != "research_started"]
    assert len(older) == len(b.events) - 1
    replayed = fold(older, b.policy)
    assert replayed.invalid is None and replayed.quest == b.quest
    assert [e.key for e in replayed.effects] == [e.key for e in fold(b.events, b.policy).effects]


def test_a_quest_waiting_for_a_person_does_not_start_research_by_itself() -> None:
    b = JournalBuilder().sense(route="human")
    assert b.quest is not None and b.quest.state is S.TRIAGED and b.quest.awaiting_person
    assert not accepts(b.quest, "research_started")
    with pytest.raises(InvalidTransition) as info:
        b.add("research_started")
    assert info.value.code is Refusal.UNDEFINED and "/quest fix" in info.value.reason
    b.add("triaged", route="auto_fix", actor="maintainer")  # a person starts it
    assert b.quest.state is S.RESEARCHING and types(b) == ["start_agent"]


def test_research_started_is_only_defined_in_triaged() -> None:
    b = builder_in(S.RESEARCHING)
    with pytest.raises(InvalidTransition) as info:
        b.add("research_started")
    assert "only defined in triaged" in info.value.reason


def test_a_quest_started_from_an_issue_passes_through_triaged_too() -> None:
    b = builder_in(S.SENSED)
    b.add("triaged", route="auto_fix", actor="maintainer")  # /quest fix on the issue
    assert [e.type for e in b.events[-2:]] == ["triaged", "research_started"]
    assert b.quest is not None and b.quest.state is S.RESEARCHING


# a person's push restarts research and reproduction


@pytest.mark.parametrize(("state", "stage"), [(S.RESEARCHING, "research"),
                                              (S.REPRODUCING, "reproduce")])
def test_a_push_while_the_agent_works_restarts_the_stage_on_the_new_head(
        state: State, stage: str) -> None:
    b = builder_in(state)
    b.add("human_revision", head="bobs", pusher="bob")
    q = b.quest
    assert q is not None and q.state is state and q.revision == 2 and q.head == "bobs"
    assert types(b) == ["stop_agent", "start_agent"]
    restart = b.effects[-1]
    assert restart.payload["stage"] == stage and restart.payload["pushed"] == "bobs"
    assert restart.key.startswith("q-1:2:start_agent:")


def test_the_restarted_research_is_taken_and_the_quest_goes_on() -> None:
    b = builder_in(S.RESEARCHING)
    b.add("human_revision", head="bobs", pusher="bob")
    b.add("hypothesis_written", summary="off-by-one, seen on bob's head")
    assert b.quest is not None and b.quest.state is S.HYPOTHESISED
    assert b.effects[-1].payload["revision"] == 2 and b.effects[-1].payload["head"] == "bobs"


def test_a_push_during_a_plan_revision_restarts_the_plan() -> None:
    b = builder_in(S.PLANNED)
    b.decide("B", "revise", reason="smaller")
    b.add("human_revision", head="bobs", pusher="bob")
    assert types(b) == ["stop_agent", "start_agent"] and b.effects[-1].payload["stage"] == "plan"
    b.add("plan_written", summary="smaller")
    assert b.quest is not None and b.quest.state is S.PLANNED


def test_a_push_of_the_recorded_head_restarts_nothing() -> None:
    b = builder_in(S.RESEARCHING)
    b.add("human_revision", head="bobs", pusher="bob")
    before = b.quest
    b.add("human_revision", head="bobs", pusher="bob")
    assert b.quest == before and types(b) == []


# a rebase after the base moved is no proof attempt


@pytest.mark.parametrize("state", [S.PROVING, S.READY, S.LANDING, S.HANDED_OFF])
def test_a_rebase_after_the_base_moved_does_not_use_up_an_attempt(state: State) -> None:
    b = builder_in(state)
    assert b.quest is not None
    attempts = b.quest.attempts
    b.add("base_moved", base="base9")
    ended = ["show_claim"] if state is S.HANDED_OFF else []  # the claim ends with the proof
    assert b.quest.state is S.PATCHING and types(b) == ["rebase", *ended]
    b.add("patch_pushed", head="rebased1", pusher="questbot[bot]")
    assert b.quest.state is S.PROVING and b.quest.attempts == attempts
    assert b.effects[-1].payload["attempt"] == attempts


def test_a_proof_that_fails_after_a_rebase_still_has_its_attempts_left() -> None:
    b = builder_in(S.PATCHING, Policy(max_attempts=2))
    b.add("patch_pushed", head="h1", pusher="questbot[bot]")
    b.add("base_moved", base="base9")
    b.add("patch_pushed", head="h1-rebased", pusher="questbot[bot]")
    b.add("proof_failed", head="h1-rebased", reason="red on the new base")
    assert b.quest is not None and b.quest.state is S.PATCHING
    assert b.effects[-1].payload["attempt"] == 2 and b.effects[-1].payload["repair"]


def test_the_next_patch_after_a_rebase_is_an_attempt_again() -> None:
    b = builder_in(S.PROVING)
    b.add("base_moved", base="base9")
    b.add("patch_pushed", head="rebased1", pusher="questbot[bot]")
    b.add("proof_failed", head="rebased1", reason="red")
    b.add("patch_pushed", head="h2", pusher="questbot[bot]")
    assert b.quest is not None and b.quest.attempts == 2


def test_a_parked_quest_whose_base_moved_resumes_by_rebasing() -> None:
    b = builder_in(S.PROVING)
    b.add("paused", actor="maintainer", reason="freeze")
    b.add("base_moved", base="base9")
    b.add("resumed", actor="maintainer")
    assert b.quest is not None and b.quest.state is S.PATCHING
    assert types(b) == ["rebase"] and b.effects[-1].payload == {"base": "base9", "head": "head1"}
    b.add("patch_pushed", head="rebased1", pusher="questbot[bot]")
    assert b.quest.attempts == 1


def test_a_persons_push_ends_a_pending_rebase() -> None:
    b = builder_in(S.PROVING)
    b.add("base_moved", base="base9")
    b.add("human_revision", head="bobs-merge", pusher="bob")  # they resolved it themselves
    assert b.quest is not None and b.quest.state is S.PROVING and not b.quest.rebasing
    b.add("proof_failed", head="bobs-merge", reason="red")
    b.add("patch_pushed", head="h2", pusher="questbot[bot]")
    assert b.quest.attempts == 2


# terminal states absorb an undeliverable effect


@pytest.mark.parametrize("state", [S.CLOSED, S.ABANDONED])
def test_an_undeliverable_effect_on_a_finished_quest_changes_nothing(state: State) -> None:
    b = builder_in(state)
    before = b.quest
    assert before is not None
    t = step(before, plausible(b, "effect_failed"), b.policy)
    assert t.absorbed and t.quest == before and t.effects == ()
    assert not accepts(before, "effect_failed")


def test_a_live_quest_still_counts_an_undeliverable_effect() -> None:
    b = builder_in(S.WATCHING)
    b.add("effect_failed", effect_key="q-1:1:run_probes:e:0", effect_type="run_probes",
          error="502 bad gateway", tries=8)
    assert b.quest is not None and b.quest.failed_effects == 1
    assert b.quest.last_failure == "run_probes: 502 bad gateway"


def test_a_finished_quest_still_records_usage() -> None:
    b = builder_in(S.ABANDONED)
    b.add("usage_recorded", tokens=10, cost_cents=4)
    assert b.quest is not None and b.quest.usage_cost_cents == 4


# fold replays each event under its own policy


def _settings_changed() -> tuple[JournalBuilder, Policy, Policy]:
    """Three attempts allowed while the quest patched twice; then the repository allows one."""
    generous, strict = Policy(max_attempts=3), Policy(max_attempts=1)
    b = builder_in(S.PATCHING, generous)
    for n in (1, 2):
        b.add("patch_pushed", head=f"h{n}", pusher="questbot[bot]")
        b.add("proof_failed", head=f"h{n}", reason="red")
    b.add("patch_pushed", head="h3", pusher="questbot[bot]")
    return b, generous, strict


def test_fold_with_each_events_policy_reproduces_the_decisions() -> None:
    b, generous, strict = _settings_changed()
    assert fold(b.events, strict).invalid is not None  # one policy for all: it parks early
    recorded = fold(b.events, strict, policies=[generous] * len(b.events))
    assert recorded.invalid is None and recorded.quest == b.quest
    assert [e.key for e in recorded.effects] == [e.key for e in b.effects]
    assert recorded == fold(b.events, generous)


def test_fold_takes_the_given_policy_for_events_recorded_without_one() -> None:
    b, generous, strict = _settings_changed()
    n = len(b.events)
    assert fold(b.events, generous, policies=[None] * n) == fold(b.events, generous)
    assert fold(b.events, generous, policies=[strict, *[None] * (n - 1)]).quest == b.quest
    later = b.event("proof_failed", head="h3", reason="red again")
    mixed = fold([*b.events, later], strict, policies=[generous] * n + [strict])
    assert mixed.quest is not None and mixed.quest.state is S.PARKED  # decided under strict
    with pytest.raises(ValueError, match="one policy per event"):
        fold(b.events, strict, policies=[generous])


def test_policy_changes_mid_journal_are_followed_event_by_event() -> None:
    shadow = Policy(shadow=True)
    b = builder_in(S.HYPOTHESISED, shadow)
    b.add("checkpoint_decided", checkpoint="A", verdict="approve", automatic=True)
    assert b.quest is not None and b.quest.state is S.HYPOTHESISED  # recorded only
    advisory = Policy(checkpoints={"A": {"blocking": False}})
    b.policy = advisory
    b.add("checkpoint_decided", checkpoint="A", verdict="approve", automatic=True)
    assert b.quest.state is S.REPRODUCING
    policies = [shadow] * (len(b.events) - 1) + [advisory]
    assert fold(b.events, shadow, policies=policies).quest == b.quest
    assert fold(b.events, shadow).quest.state is S.HYPOTHESISED  # type: ignore[union-attr]
