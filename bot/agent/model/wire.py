"""The OpenAI chat model, speaking as the endpoint's ``Adaptation`` says (``adaptation.py``).

pydantic-ai's ``OpenAIChatModel`` has the switches for two of the three differences — a
profile without forced tool choice sends ``auto`` where it would send ``required``, and one
without ``max_completion_tokens`` sends the limit as ``max_tokens`` — and none for the third:
an assistant message that carries tool calls goes out with ``content: null`` (valid OpenAI,
refused by llama-cpp-python's server with HTTP 500). ``AdaptedChatModel`` sets the two and
maps that ``null`` to ``""``, which every server takes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from openai.types import chat
from pydantic_ai.messages import ModelMessage
from pydantic_ai.models import ModelRequestParameters
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.profiles.openai import OpenAIModelProfile
from pydantic_ai.settings import ModelSettings

from bot.agent.model.adaptation import Adaptation


class AdaptedChatModel(OpenAIChatModel):
    def __init__(self, name: str, chosen: Adaptation, base_url: str, **kwargs: Any) -> None:
        self.chosen = chosen
        profile = OpenAIModelProfile(
            supports_forced_tool_choice=chosen.tool_choice_required,
            openai_chat_supports_max_completion_tokens=(
                chosen.limit_field(base_url) == "max_completion_tokens"))
        super().__init__(name, profile=profile, **kwargs)

    async def _map_messages(self, messages: Sequence[ModelMessage],
                            model_request_parameters: ModelRequestParameters, *,
                            model_settings: ModelSettings | None = None
                            ) -> list[chat.ChatCompletionMessageParam]:
        mapped = await super()._map_messages(messages, model_request_parameters,
                                             model_settings=model_settings)
        if self.chosen.null_content:
            return mapped
        for message in mapped:
            if message.get("role") == "assistant" and message.get("content", "") is None:
                message["content"] = ""
        return mapped
