"""The demo's story end to end: real web process, worker, Redis and agent; fake GitHub.

``scripts/demo`` runs it with the model agent against the local model server; the scripted
test agent runs it too, as the rest of the end-to-end tests use it."""

from __future__ import annotations

import pytest

from bot.core import State
from questbot_testing.modelserver.demo import LESSONS, STAGES, demo_model, spent_by_stage
from questbot_testing.scenario import Story, main_line, regression
from questbot_testing.stack import Stack, virtual_pacing


@pytest.mark.cluster_too
async def test_a_failing_check_goes_to_closed_and_a_regression_reopens_it(stack: Stack) -> None:
    story = Story(stack)
    quest = await main_line(story)
    assert quest.state is State.CLOSED and quest.revision == 1
    quest = await regression(story)
    assert quest.revision == 2


async def test_the_demo_with_the_model_agent(redis_url: str, redis_async: object) -> None:
    server, endpoint = await demo_model()
    limits, pace_time = virtual_pacing()
    stack = await Stack(redis_url, model=endpoint, limits=limits, pace_time=pace_time).start()
    try:
        story = Story(stack)
        quest = await main_line(story)
        assert quest.state is State.CLOSED and quest.revision == 1
        sign = story.first_sign_seconds()  # what scripts/demo reports as first_sign_seconds
        assert sign is not None and sign <= 5.0, sign
        quest = await regression(story)
        assert quest.revision == 2
        stack.fake.assert_clean()
        server.assert_clean()
        stages = spent_by_stage(await stack.runtime.worker.journal.events(story.quest_id))
        # the landed quest's lesson, then research again at r2
        assert [s.stage for s in stages] == [*STAGES, "lesson", "research"]
        assert all(s.tokens > 0 and s.cost_cents >= 1 for s in stages)
        assert {s.conversation for s in server.served} == {*STAGES, *LESSONS}
    finally:
        await stack.stop()
        await server.close()
