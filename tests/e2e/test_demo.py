"""The demo's story end to end: real web process, worker, Redis and agent; fake GitHub."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from bot.agent.demo_spec import sample_spec
from bot.core import State
from tests.e2e.scenario import REPO, Story, main_line, regression
from tests.e2e.stack import Stack, unpaced


@pytest.fixture
async def stack(redis_url: str, redis_async: object) -> AsyncIterator[Stack]:
    s = await Stack(redis_url, scripted_specs={REPO: sample_spec()}, limits=unpaced()).start()
    try:
        yield s
        s.fake.assert_clean()
    finally:
        await s.stop()


async def test_a_failing_check_goes_to_closed_and_a_regression_reopens_it(stack: Stack) -> None:
    story = Story(stack)
    quest = await main_line(story)
    assert quest.state is State.CLOSED and quest.revision == 1
    quest = await regression(story)
    assert quest.revision == 2
