"""A worker with no model configured: the first quest says so plainly on GitHub and its check
run ends ``action_required`` — it does not stay ``in_progress`` for ever (issue 12, item 8)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from bot.core import State
from bot.core.quest import ParkReason
from questbot_testing.scenario import MAINTAINER, REPO, Story, setup_repository
from questbot_testing.stack import Stack, virtual_pacing


@pytest.fixture
async def bare(redis_url: str, redis_async: object) -> AsyncIterator[Stack]:
    """The stack as a fresh install runs it: no scripted stand-in, no model."""
    limits, pace_time = virtual_pacing()
    s = await Stack(redis_url, limits=limits, pace_time=pace_time).start()
    try:
        yield s
        s.fake.assert_clean()
    finally:
        await s.stop()


async def test_no_model_parks_the_first_quest_saying_what_to_set(bare: Stack) -> None:
    stack = bare
    main = await setup_repository(stack)
    await stack.fake.fail_check(REPO, main, name="tests")
    await stack.settle()
    (quest,) = await stack.quests(REPO)
    assert quest.state is State.PARKED and quest.park_reason is ParkReason.NO_AGENT
    assert quest.resume_state is State.RESEARCHING and quest.failed_effects == 0

    story = Story(stack, quest_id=quest.id)
    runs = [r for r in stack.fake.repo(REPO).check_runs.values()
            if r.name == "questbot" and r.external_id == quest.id]
    assert runs and all(r.status == "completed" for r in runs[-1:])
    newest = runs[-1]
    assert newest.conclusion == "action_required"
    assert newest.output["title"] == "questbot: no agent is set up"
    said = f"{newest.output['summary']}\n{story.status_comment()}"
    for what in ("QUESTBOT_MODEL", "QUESTBOT_MODEL_URL", "QUESTBOT_MODEL_API_KEY",
                 "worker's environment", ".github/questbot.yml", "/resume"):
        assert what in said, what
    inbox = [i for i in stack.fake.repo(REPO).issues.values() if i.title == "questbot inbox"]
    assert inbox and "no agent is set up" in inbox[0].body

    # /resume without a model: it parks again, saying the same; nothing is stuck
    await stack.fake.comment(REPO, story.pr_number(), "/resume", user=MAINTAINER)
    await stack.settle()
    again = await stack.quest(quest.id)
    assert again.state is State.PARKED and again.park_reason is ParkReason.NO_AGENT
