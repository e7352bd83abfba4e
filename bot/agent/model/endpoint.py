"""Where the model is: the worker's endpoint, key and default model, and the pydantic-ai model.

The endpoint is the worker's (``bot.config`` reads it from the environment); a repository's
``.github/questbot.yml`` may only pick another model name at that endpoint and the attempts.
So the key never sits in a repository, and a repository cannot send the worker's key to a
host of its choosing.

Two wire protocols cover what serves models today:

* ``openai`` — chat completions (``POST {url}/chat/completions``): OpenAI, Azure, vLLM,
  Ollama, llama.cpp's server, LiteLLM, OpenRouter. ``url`` ends in ``/v1`` as those servers'
  documentation gives it.
* ``anthropic`` — Messages (``POST {url}/v1/messages``). ``url`` is the host without ``/v1``,
  as the Anthropic SDK takes it.

``max_tokens`` is always sent: without it the Anthropic model asks for the model's largest
output, which makes the SDK stream the response; a stage's answer is small.

Cost: when the operator states prices (USD per million input and output tokens, e.g. ``0``
for a local model) they are used; otherwise pydantic-ai's estimate from the ``genai-prices``
tables, when it knows the model; otherwise the cost is unknown and receipts carry tokens only.
"""

from __future__ import annotations

from decimal import Decimal
from enum import StrEnum
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field, SecretStr

if TYPE_CHECKING:  # imported where used: pydantic-ai and the SDKs take seconds to import
    from pydantic_ai.models import Model
    from pydantic_ai.settings import ModelSettings

DEFAULT_MAX_TOKENS = 8192
NO_KEY = "questbot-no-key"
"""Sent when the operator set no key: the SDKs require one, local servers ignore it."""


class Wire(StrEnum):
    OPENAI = "openai"
    ANTHROPIC = "anthropic"


DEFAULT_URLS = {Wire.OPENAI: "https://api.openai.com/v1", Wire.ANTHROPIC: "https://api.anthropic.com"}


class Prices(BaseModel):
    """USD per million tokens."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    input: Decimal = Field(ge=0)
    output: Decimal = Field(ge=0)

    def cost(self, input_tokens: int, output_tokens: int) -> Decimal:
        return (self.input * input_tokens + self.output * output_tokens) / 1_000_000


class ModelEndpoint(BaseModel):
    """One model endpoint; ``repr`` and logs show ``api_key`` as ``**********``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    wire: Wire = Wire.OPENAI
    url: str | None = None
    api_key: SecretStr | None = None
    model: str = Field(min_length=1)
    """The default model name; a repository's ``agent.model`` replaces it."""
    prices: Prices | None = None
    max_tokens: int = Field(default=DEFAULT_MAX_TOKENS, ge=256)
    request_timeout_seconds: float = Field(default=300.0, gt=0)

    @property
    def base_url(self) -> str:
        return (self.url or DEFAULT_URLS[self.wire]).rstrip("/")

    def settings(self) -> ModelSettings:
        from pydantic_ai.settings import ModelSettings

        return ModelSettings(max_tokens=self.max_tokens, timeout=self.request_timeout_seconds)

    def chat_model(self, name: str | None = None) -> Model:
        """The pydantic-ai model for ``name`` (default: the endpoint's) at this endpoint."""
        from pydantic_ai.models.anthropic import AnthropicModel
        from pydantic_ai.models.openai import OpenAIChatModel
        from pydantic_ai.providers.anthropic import AnthropicProvider
        from pydantic_ai.providers.openai import OpenAIProvider

        key = self.api_key.get_secret_value() if self.api_key is not None else NO_KEY
        model = name or self.model
        if self.wire is Wire.ANTHROPIC:
            return AnthropicModel(model, provider=AnthropicProvider(api_key=key,
                                                                    base_url=self.base_url))
        return OpenAIChatModel(model, provider=OpenAIProvider(base_url=self.base_url,
                                                              api_key=key))
