"""Flaky before fixing: a failed check re-run on its commit before research (``rules.flaky``)."""

from __future__ import annotations

import pytest

from bot.core import InvalidTransition, Refusal, State, step
from bot.core.quest import Outcome
from tests.core.quests import builder_in

S = State


def _asked() -> tuple[object, object]:
    b = builder_in(S.SENSED)
    t = step(b.quest, b.event("rerun_requested", route="auto_fix", sha="base-1",
                              run="check_run:1"), b.policy)
    assert t.quest.state is S.SENSED and t.quest.rerun is not None
    assert [(e.type.value, e.payload["run"]) for e in t.effects] == [("rerun_check",
                                                                      "check_run:1")]
    assert t.quest.reruns("base-1", t.quest.fingerprint, "check_run:2")
    assert not t.quest.reruns("base-1", t.quest.fingerprint, "check_run:1")  # the first run
    assert not t.quest.reruns("other", t.quest.fingerprint, "check_run:2")
    return b, t.quest


def test_a_rerun_that_passes_ends_the_quest_as_flaky_with_both_runs_and_no_agent() -> None:
    b, quest = _asked()
    t = step(quest, b.event("rerun_reported", result="passed", run="check_run:2"), b.policy)
    assert t.quest.state is S.ABANDONED and t.quest.outcome is Outcome.FLAKY
    assert t.quest.rerun is not None
    assert (t.quest.rerun.first, t.quest.rerun.second) == ("check_run:1", "check_run:2")
    assert t.quest.flaky == 1
    assert [e.type.value for e in t.effects] == ["notify_inbox"]
    assert "flaky" in t.effects[0].payload["reason"] and "check_run:2" in t.effects[0].payload[
        "reason"]
    assert t.follow_ups == ()


@pytest.mark.parametrize("result", ["failed", "unavailable"])
def test_a_rerun_that_fails_again_goes_to_research_with_both_runs(result: str) -> None:
    b, quest = _asked()
    run = "check_run:2" if result == "failed" else None
    t = step(quest, b.event("rerun_reported", result=result, run=run), b.policy)
    assert t.quest.state is S.TRIAGED and t.effects == ()
    (follow_up,) = t.follow_ups
    after = step(t.quest, follow_up, b.policy)
    assert after.quest.state is S.RESEARCHING
    (start,) = after.effects
    assert start.type.value == "start_agent"
    assert start.payload["runs"] == ["check_run:1", *([run] if run else [])]


def test_a_quest_is_rerun_once_and_a_report_needs_a_rerun() -> None:
    b, quest = _asked()
    with pytest.raises(InvalidTransition) as info:
        step(quest, b.event("rerun_requested", route="auto_fix", sha="base-1",
                            run="check_run:1"), b.policy)
    assert info.value.code is Refusal.BAD_EVENT
    t = step(quest, b.event("rerun_reported", result="failed", run="check_run:2"), b.policy)
    with pytest.raises(InvalidTransition):
        step(t.quest, b.event("rerun_reported", result="passed", run="check_run:3"), b.policy)
