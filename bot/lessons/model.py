"""The two model runs of a lesson, each a fresh, tool-less conversation at the worker's model
endpoint: the writer (``write_lesson``) and the consolidation reviewer (``review_lesson``,
which is ``model_review``'s reviewer with the consolidation handoff and the quest's record as
its pinned evidence). ``consolidation`` says what each is given and why.

An endpoint that is down raises ``ModelUnavailable`` (``RetryLater``): the effect runner tries
the lesson again later. Imported only where a lesson is written: pydantic-ai takes seconds to
import.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pydantic import BaseModel, ConfigDict, Field
from pydantic_ai import Agent as Conversation
from pydantic_ai import ToolOutput

from bot.agent.model.endpoint import ModelEndpoint
from bot.agent.model.one_answer import one_answer
from bot.agent.task import Usage
from bot.core import Quest
from bot.core.lessons import Ending
from bot.journal.lessons import MAX_LESSON_CHARS
from bot.lessons.consolidation import (
    LESSON_INSTRUCTIONS,
    lesson_message,
    pinned_record,
    review_handoff,
)
from bot.reviews.automatic import ModelVerdict
from bot.reviews.model_review import review_with_model
from bot.reviews.models import ReviewRole

MAX_REQUESTS = 4


class LessonAnswer(BaseModel):
    """The one lesson this quest teaches the next quest in its repository: at most three
    sentences, only what its record bears out."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    lesson: str = Field(min_length=1, max_length=MAX_LESSON_CHARS)


@dataclass
class Drafted:
    text: str | None
    """``None`` when the run gave no usable answer."""
    problem: str = ""
    usage: Usage = field(default_factory=Usage)


async def write_lesson(endpoint: ModelEndpoint, quest: Quest, ending: Ending,
                       record: dict[str, str], *, model: str | None = None,
                       timeout_seconds: float = 300.0) -> Drafted:
    """Write the lesson. Raises ``ModelUnavailable`` (retry later) when the endpoint is down."""
    conversation: Conversation[None, LessonAnswer] = Conversation(
        output_type=[ToolOutput(LessonAnswer, name="lesson", description=LessonAnswer.__doc__)],
        instructions=LESSON_INSTRUCTIONS, model_settings=endpoint.settings(),
        retries={"output": 1}, defer_model_check=True, name="questbot-lesson-writer")
    answer, why, usage = await one_answer(endpoint, conversation,
                                          lesson_message(quest, ending, record), None,
                                          model=model, timeout_seconds=timeout_seconds,
                                          request_limit=MAX_REQUESTS)
    if answer is None:
        return Drafted(None, f"the lesson writer gave no usable answer: {why}", usage)
    text = answer.lesson.strip()
    return Drafted(text, "", usage) if text else Drafted(None, "the lesson was blank", usage)


async def review_lesson(endpoint: ModelEndpoint, quest: Quest, ending: Ending, lesson: str,
                        record: dict[str, str], *, model: str | None = None) -> ModelVerdict:
    """The consolidation reviewer's verdict on ``lesson``, its claims checked against the
    record. Raises ``ModelUnavailable`` when the endpoint is down."""
    return await review_with_model(endpoint, ReviewRole.CONSOLIDATION,
                                   review_handoff(quest, ending, lesson, record),
                                   pinned_record(quest, record), model=model)
