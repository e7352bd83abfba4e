"""The one check-run renderer (``bot.words.check_run``) speaks GitHub's vocabulary: an agent run's
outcome maps to one conclusion, what GitHub cannot express is said in words, and a failed
verification never shows as success — whatever the quest's state."""

from __future__ import annotations

import json

import pytest

from bot.agent.machine import TERMINAL_STATES, RunState
from bot.agent.outcome import RunOutcome, outcome_of
from bot.agent.result import AppliedChange, TaskResult
from bot.core import State
from bot.core.proof import CheckRecord
from bot.words.check_run import CONCLUSION_BY_OUTCOME, CheckConclusion, check_run
from questbot_testing import published
from questbot_testing.journals import JournalBuilder
from tests.agent.bundles import bundle
from tests.core.quests import quest_in
from tests.words.surface import problems

CHANGE = AppliedChange(base="a" * 40, head="b" * 40, files=("f",))
PASS = CheckRecord(name="t", command=("true",), exit_code=0, output_sha256="c" * 64)
FAIL = CheckRecord(name="t", command=("false",), exit_code=1, output_sha256="c" * 64)
CLOSED = quest_in(State.CLOSED)


def test_every_outcome_has_a_conclusion() -> None:
    assert set(CONCLUSION_BY_OUTCOME) == set(RunOutcome)


def test_conclusions_are_githubs_vocabulary() -> None:
    description = json.loads(published.rest_description_path().read_text())
    schema = description["components"]["schemas"]["check-run"]
    assert set(schema["properties"]["conclusion"]["enum"]) == {c.value for c in CheckConclusion}


@pytest.mark.parametrize(
    ("result", "outcome", "conclusion", "says"),
    [
        (
            TaskResult(run_id="r", state=RunState.COMPLETED, change=CHANGE, checks=(PASS,)),
            RunOutcome.SUCCESS,
            CheckConclusion.SUCCESS,
            "verified: the change was applied and all 1 check passed.",
        ),
        (
            TaskResult(run_id="r", state=RunState.FAILED, reason="attempts exhausted (3 of 3)"),
            RunOutcome.FAILURE,
            CheckConclusion.FAILURE,
            "failed: attempts exhausted \\(3 of 3\\).",
        ),
        (
            TaskResult(run_id="r", state=RunState.NEEDS_HUMAN, reason="high-impact change"),
            RunOutcome.ACTION_REQUIRED,
            CheckConclusion.NEUTRAL,  # the quest has ended: nobody is asked for anything
            "stopped for a person's decision before it completed, and the quest has ended",
        ),
        (
            TaskResult(run_id="r", state=RunState.REFUSED, reason="no write access"),
            RunOutcome.REFUSED,
            CheckConclusion.NEUTRAL,
            "GitHub has no conclusion for refusal, so this shows as neutral.",
        ),
        (
            TaskResult(run_id="r", state=RunState.COMPLETED, change=CHANGE, checks=(PASS, FAIL)),
            RunOutcome.UNVERIFIED,
            CheckConclusion.NEUTRAL,
            "completed but not verified: check 't' failed \\(exit 1\\). GitHub has no conclusion",
        ),
        (
            TaskResult(run_id="r", state=RunState.COMPLETED, change=CHANGE),
            RunOutcome.UNVERIFIED,
            CheckConclusion.NEUTRAL,
            "no checks were executed",
        ),
    ],
)
def test_mapping(
    result: TaskResult, outcome: RunOutcome, conclusion: CheckConclusion, says: str
) -> None:
    """Where a run's outcome speaks — the evidence of a quest that would show success."""
    assert outcome_of(result) is outcome
    view = check_run(CLOSED, bundle(result))
    assert view.status == "completed"
    assert view.conclusion is conclusion
    assert says in view.summary


def test_without_evidence_a_closed_quest_is_a_success() -> None:
    assert check_run(CLOSED).conclusion is CheckConclusion.SUCCESS


@pytest.mark.parametrize("state", list(State))
def test_success_conclusion_only_when_verified(state: State) -> None:
    quest = quest_in(state)
    for run_state in TERMINAL_STATES:
        for change in (None, CHANGE):
            for checks in ((), (PASS,), (PASS, FAIL)):
                result = TaskResult(run_id="r", state=run_state, change=change, checks=checks)
                view = check_run(quest, bundle(result))
                is_success = view.conclusion is CheckConclusion.SUCCESS
                assert is_success is (result.verified and state is State.CLOSED)
                assert (view.body().get("conclusion") == "success") is is_success


@pytest.mark.parametrize(("event", "fields", "title", "words"), [
    ("agent_halted", {"stage": "research", "outcome": "endpoint",
                      "reason": "the model endpoint refused the request: HTTP 500"},
     "questbot: the model endpoint failed", "no fault of the code, nor of GitHub"),
    ("effect_failed", {"effect_key": "q-1:1:start_agent:e:0", "effect_type": "start_agent",
                       "error": "the checkout could not be made", "tries": 8},
     "questbot: work could not be done", "could not run the agent's stage (8 tries)"),
])
def test_a_quest_parked_by_a_failure_waits_for_a_person_and_says_why(
        event: str, fields: dict[str, object], title: str, words: str) -> None:
    """Issue 25: an endpoint that failed the stage, or work questbot gave up on, parks the
    quest; the check run ends (action_required) and says what happened and what to do."""
    b = JournalBuilder("q-1").sense()
    b.add(event, **fields)
    quest = b.quest
    assert quest is not None and quest.state is State.PARKED
    view = check_run(quest, None)
    assert (view.status, view.conclusion, view.title) == (
        "completed", CheckConclusion.ACTION_REQUIRED, title)
    assert words in view.summary.replace("\\", "") and "/resume" in view.summary
    assert problems(view.summary) == []
