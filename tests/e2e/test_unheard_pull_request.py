"""A pull request questbot opened and did not hear back about — GitHub made it, the answer
timed out (``fakegithub.faults``' ``timeout``) — and a person who acts on it before the
worker's retry recorded it. The chaos run met this once (seed 2): ``/approve`` there was
refused "no quest on this thread". A person can do exactly that too."""

from __future__ import annotations

import asyncio

import pytest

from bot.core import State
from bot.journal.keys import quest_gh_key, repo_gh_key
from questbot_testing.scenario import MAINTAINER, REPO, Story, setup_repository
from questbot_testing.stack import Stack
from tests.e2e.test_github_flows import at_checkpoint_a
from tests.security.test_cross_repository import forks_pull

NOT_APPLIED = "was not applied"


async def test_a_command_on_the_pull_request_questbot_has_not_heard_back_about_is_applied(
        stack: Stack) -> None:
    """GitHub makes the quest's pull request and questbot's ``pulls/create`` times out; GitHub
    then fails the list questbot looks for it in (a bad minute), so the worker has not
    recorded it when the quest reaches checkpoint A and the maintainer approves there."""
    story = Story(stack)
    main = await setup_repository(stack)
    stack.fake.faults.hold_s = 0.05
    stack.fake.faults.aim("timeout", "POST", f"/repos/{REPO}/pulls")
    stack.fake.faults.aim("5xx", "GET", f"/repos/{REPO}/pulls", times=10_000)
    await stack.fake.fail_check(REPO, main, name="tests")
    await stack.settle()
    (quest,) = await stack.quests(REPO)
    story.quest_id = quest.id
    assert quest.state is State.HYPOTHESISED
    memory = stack.runtime.worker.intake.memory
    assert await memory.quest_pull(quest.id, quest.branch) is None  # not heard of yet
    (number,) = stack.fake.repo(REPO).pulls
    await stack.fake.comment(REPO, number, "/approve A", user=MAINTAINER)
    await stack.settle()
    quest = await stack.quest(quest.id)
    # applied: the quest left checkpoint A (reproducing, or planned already: GitHub still
    # fails the list, and the worker's settling may stop before the stage is done)
    assert quest.state in {State.REPRODUCING, State.PLANNED}, quest.state
    assert quest.decisions == 1
    assert await memory.quest_pull(quest.id, quest.branch) == number
    assert await memory.quest_of_pull(REPO, number) == quest.id
    answers = [c.body for c in stack.fake.repo(REPO).comments.values()
               if c.issue_number == number and NOT_APPLIED in c.body]
    assert answers == []
    stack.fake.faults.aimed.clear()  # GitHub is well again
    for _ in range(120):  # what failed meanwhile is retried after its backoff, in real seconds
        await stack.settle()
        if (await stack.quest(quest.id)).state is State.PLANNED:
            break
        await asyncio.sleep(0.25)
    await story.step("GitHub answers again", State.PLANNED)
    assert len(stack.fake.repo(REPO).pulls) == 1  # the retry opened no second one


async def unrecorded(stack: Stack, story: Story) -> None:
    """As if questbot had not recorded its pull request yet."""
    client = stack.runtime.worker.journal.client
    await client.hdel(repo_gh_key(REPO), f"pr:{story.pr_number()}")
    await client.hdel(quest_gh_key(story.quest_id), "pr", "pr_branch")


@pytest.mark.parametrize("whose", ["a person's", "a fork's"])
async def test_no_pull_request_but_questbots_own_is_taken_for_the_quests(
        stack: Stack, whose: str) -> None:
    """Security: an event acts on a quest only from the quest's own repository and pull
    request. A pull request from the quest's branch that someone else opened, or from a
    fork's branch of that name, is never taken for the quest's, recorded or not."""
    story = await at_checkpoint_a(stack)
    if whose == "a fork's":
        number = await forks_pull(stack, story, user=MAINTAINER)
    else:
        number = story.pr_number()
        stack.fake.repo(REPO).issues[number].user = "carol"  # she opened it from the branch
    await unrecorded(stack, story)
    await stack.fake.comment(REPO, number, "/approve A", user=MAINTAINER)
    await stack.settle()
    assert (await stack.quest(story.quest_id)).state is State.HYPOTHESISED
    memory = stack.runtime.worker.intake.memory
    assert await memory.quest_of_pull(REPO, number) is None
    (answer,) = [c.body for c in stack.fake.repo(REPO).comments.values()
                 if c.issue_number == number and NOT_APPLIED in c.body]
    assert "no quest on this thread" in answer
