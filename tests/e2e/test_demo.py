"""The demo's story end to end: real web process, worker, Redis and agent; fake GitHub."""

from __future__ import annotations

from bot.core import State
from tests.e2e.scenario import Story, main_line, regression
from tests.e2e.stack import Stack


async def test_a_failing_check_goes_to_closed_and_a_regression_reopens_it(stack: Stack) -> None:
    story = Story(stack)
    quest = await main_line(story)
    assert quest.state is State.CLOSED and quest.revision == 1
    quest = await regression(story)
    assert quest.revision == 2
