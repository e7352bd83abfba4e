"""Every model run questbot makes outside the agent tells the model which fence holds data, by
the tag ``bot.agent.model.untrusted`` actually writes: an instruction naming another tag would
leave the fenced text's status to the model's guess."""

from __future__ import annotations

import pytest

from bot.agent.model.untrusted import FENCE_TAG, fence
from bot.lessons import consolidation
from bot.reflection import review as reflection_review
from bot.reviews import model_review


@pytest.mark.parametrize("instructions", [model_review.INSTRUCTIONS, reflection_review.WRITER,
                                          reflection_review.REVIEWER,
                                          consolidation.LESSON_INSTRUCTIONS],
                         ids=["reviewer", "reflection writer", "reflection reviewer",
                              "lesson writer"])
def test_the_instructions_name_the_fence_the_data_is_in(instructions: str) -> None:
    assert f"<{FENCE_TAG}>" in instructions
    assert fence("x", "ci log").startswith(f"<{FENCE_TAG} ")
