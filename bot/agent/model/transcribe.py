"""pydantic-ai's messages as the turns a transcript keeps (``bot.agent.transcript``).

The conversation's messages are pydantic-ai's: requests of questbot's parts (the prompt, tool
results, retries, and the instructions, which are questbot's own and the same for every stage,
so not kept) and responses of the model's (text, tool calls, thinking). Each part people can
read becomes a ``Turn``; parts of kinds questbot never asks for (files, native tools) are left
out. Cleaning and bounding are the transcript's (``bot.agent.transcript.bounded``).
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic_ai.messages import (
    ModelMessage,
    ModelResponse,
    RetryFeedbackPart,
    RetryPromptPart,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)

from bot.agent.transcript import Kind, Turn


def turns_of(messages: Sequence[ModelMessage]) -> list[Turn]:
    """The readable turns of ``messages``, in order."""
    turns: list[Turn] = []
    for message in messages:
        for part in message.parts:
            turn = _turn(part, by_model=isinstance(message, ModelResponse))
            if turn is not None:
                turns.append(turn)
    return turns


def _turn(part: object, *, by_model: bool) -> Turn | None:
    if by_model:
        if isinstance(part, TextPart):
            return Turn(kind=Kind.TEXT, text=part.content) if part.content.strip() else None
        if isinstance(part, ToolCallPart):
            return Turn(kind=Kind.CALL, tool=part.tool_name, text=part.args_as_json_str())
        if isinstance(part, ThinkingPart):
            return Turn(kind=Kind.THINKING, text=part.content) if part.content.strip() else None
        return None
    if isinstance(part, UserPromptPart):
        content = part.content
        text = content if isinstance(content, str) else "\n".join(
            c for c in content if isinstance(c, str))
        return Turn(kind=Kind.PROMPT, text=text)
    if isinstance(part, ToolReturnPart):
        retried = getattr(part, "outcome", None) == "retried"
        return Turn(kind=Kind.RETRY if retried else Kind.RESULT, tool=part.tool_name,
                    text=part.model_response_str())
    if isinstance(part, RetryFeedbackPart | RetryPromptPart):
        return Turn(kind=Kind.RETRY, tool=getattr(part, "tool_name", None),
                    text=part.model_response())
    return None
