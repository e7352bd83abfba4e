"""Flaky before fixing (issue 12): a failing check is re-run on its commit before any agent is
paid for. A pass ends the quest as flaky — both runs kept, the inbox and the check run say so,
no pull request, no agent run; a second failure is researched as before, given both runs; the
setting ``triage.rerun_failed: false`` researches at once."""

from __future__ import annotations

import pytest

from bot.core import Quest, State
from bot.core.quest import Outcome
from bot.github.forge import CHECK_NAME
from bot.words.render import INBOX_TITLE
from questbot_testing.fakegithub import ci
from questbot_testing.sample import sample_files
from questbot_testing.scenario import MAINTAINER, REPO, SETTINGS, setup_repository
from questbot_testing.stack import Stack

RED = {"tests": "failure", "lint": "success"}


def quest_pulls(stack: Stack) -> list[str]:
    return [pr.head_ref for pr in stack.fake.repo(REPO).pulls.values()
            if pr.head_ref.startswith("quest/")]


def reruns(stack: Stack) -> list[object]:
    return stack.calls("actions/re-run-workflow-failed-jobs")


ORDERS = {
    "jobs first": lambda d: d,
    "workflow run first": lambda d: [d[-1], *d[:-1]],
}
"""Which report senses the quest: a job's check run, or the workflow run (its attempt)."""
SUITES = {"same suite": False, "new suite": True}
"""Whether GitHub puts the re-run's jobs in the failed run's check suite or in a new one: it
does not say, and public reports show both; either way the re-run's result must find the
quest waiting for it (issue 22, item 7)."""


async def red_run(stack: Stack, rerun: dict[str, str], main: str | None = None,
                  order: str = "jobs first", suite: str = "same suite") -> Quest:
    main = main or await setup_repository(stack)
    run = ci.actions_run(stack.fake, REPO, main, RED, new_suite_per_attempt=SUITES[suite])
    ci.script_rerun(run, rerun)
    await ci.deliver(stack.fake, ORDERS[order](ci.completed(stack.fake, REPO, run)))
    await stack.settle()
    (quest,) = await stack.quests(REPO)
    return quest


async def event_types(stack: Stack, quest: Quest) -> list[str]:
    return [e.type for e in await stack.runtime.worker.journal.events(quest.id)]


@pytest.mark.parametrize("suite", list(SUITES))
@pytest.mark.parametrize("order", list(ORDERS))
async def test_a_failure_that_passes_when_rerun_is_flaky_with_no_agent_and_no_pr(
        stack: Stack, order: str, suite: str) -> None:
    quest = await red_run(stack, {"tests": "success"}, order=order, suite=suite)
    assert quest.state is State.ABANDONED and quest.outcome is Outcome.FLAKY
    assert len(reruns(stack)) == 1
    rerun = quest.rerun
    assert rerun is not None and rerun.result == "passed"
    assert rerun.first.split(":")[0] in ("check_run", "workflow_run")
    assert rerun.second is not None
    assert rerun.first != rerun.second  # both runs are the evidence
    types = await event_types(stack, quest)
    assert "rerun_requested" in types and "rerun_reported" in types
    assert "research_started" not in types and quest.hypothesis is None  # no agent ran
    assert quest_pulls(stack) == []
    assert not any(ref.startswith(f"refs/heads/quest/{quest.id}")
                   for ref in stack.fake.repo(REPO).refs)
    (check,) = [c for c in stack.fake.repo(REPO).check_runs.values() if c.name == CHECK_NAME]
    assert check.status == "completed" and check.conclusion == "neutral"
    assert check.head_sha == rerun.sha
    assert "flaky" in str(check.output.get("summary")).lower()
    assert rerun.second in str(check.output.get("text"))
    (inbox,) = [i for i in stack.fake.repo(REPO).issues.values() if i.title == INBOX_TITLE]
    assert "Flaky" in inbox.body and rerun.first in inbox.body
    assert f"**{quest.title}**" in inbox.body  # named by what failed, not by questbot's id


@pytest.mark.parametrize("suite", list(SUITES))
@pytest.mark.parametrize("order", list(ORDERS))
async def test_a_failure_that_fails_again_when_rerun_is_researched_with_both_runs(
        stack: Stack, order: str, suite: str) -> None:
    """One quest, researched at once: not a second quest for the re-run's suite while the
    first waits out ``RERUN_WAIT`` (``red_run`` unpacks exactly one quest)."""
    quest = await red_run(stack, {"tests": "failure"}, order=order, suite=suite)
    assert quest.state is State.HYPOTHESISED  # research ran, as without the re-run
    assert len(reruns(stack)) == 1
    rerun = quest.rerun
    assert rerun is not None and rerun.result == "failed"
    assert rerun.second is not None and rerun.second != rerun.first
    assert quest_pulls(stack) == [f"quest/{quest.id}"]
    assert "research_started" in await event_types(stack, quest)


async def test_the_setting_turns_the_rerun_off(stack: Stack) -> None:
    files: dict[str, str | bytes] = {
        **sample_files(), ".github/questbot.yml": SETTINGS + "triage: {rerun_failed: false}\n"}
    repo = stack.fake.create_repository(REPO, files)
    stack.fake.set_permission(REPO, MAINTAINER, "write")
    quest = await red_run(stack, {"tests": "success"}, str(repo.branch_sha("main")))
    assert quest.state is State.HYPOTHESISED and quest.rerun is None
    assert reruns(stack) == []


async def test_another_apps_check_cannot_be_rerun_and_is_researched_saying_why(
        stack: Stack) -> None:
    """The demo's path: its CI is another App, whose check run only that App may re-run."""
    main = await setup_repository(stack)
    await stack.fake.fail_check(REPO, main, name="tests")
    await stack.settle()
    (quest,) = await stack.quests(REPO)
    assert quest.state is State.HYPOTHESISED and reruns(stack) == []
    rerun = quest.rerun
    assert rerun is not None and rerun.result == "unavailable" and rerun.second is None
    assert "only that App can re-run it" in rerun.reason
    assert stack.calls("checks/rerequest-run") == []
    assert stack.calls("checks/get") == []  # the webhook named the App: no read of the run
