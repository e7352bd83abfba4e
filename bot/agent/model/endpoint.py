"""Where the model is: the worker's endpoint, key and default model, and the pydantic-ai model.

The endpoint is the worker's (``bot.settings.process`` reads it from the environment, and
``endpoint_from`` builds it); a repository's ``.github/questbot.yml`` may only pick another
model name at that endpoint and the attempts.
So the key never sits in a repository, and a repository cannot send the worker's key to a
host of its choosing.

Two wire protocols cover what serves models today:

* ``openai`` — chat completions (``POST {url}/chat/completions``): OpenAI, Azure, vLLM,
  Ollama, llama.cpp's server, LiteLLM, OpenRouter. ``url`` ends in ``/v1`` as those servers'
  documentation gives it.
* ``anthropic`` — Messages (``POST {url}/v1/messages``). ``url`` is the host without ``/v1``,
  as the Anthropic SDK takes it.

An output limit is always sent: without it the Anthropic model asks for the model's largest
output, which makes the SDK stream the response; a stage's answer is small. It goes in the
field the endpoint honours (``Adaptation.limit_field``: ``max_completion_tokens`` at OpenAI,
``max_tokens`` everywhere else, or what the probe found), and it is lowered to fit the context
window when one is known.

Every request goes through ``Steady`` (``bot.agent.model.steady``), which is the only place a
request is tried again: the SDKs' own retries are off (``max_retries: 0``), so a fault is
retried once per budget, not three times inside each of eight tries (issue 25: 24 requests).

Cost: when the operator states prices (USD per million input and output tokens, e.g. ``0``
for a local model) they are used; otherwise pydantic-ai's estimate from the ``genai-prices``
tables, when it knows the model; otherwise the cost is unknown and receipts carry tokens only.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field, SecretStr

from bot.agent.model.adaptation import Adaptation, current
from bot.settings.process.model import DEFAULT_MAX_TOKENS, ModelConfig, Prices, Wire

__all__ = ["DEFAULT_MAX_TOKENS", "DEFAULT_URLS", "NO_KEY", "ModelEndpoint", "Prices", "Wire",
           "endpoint_from"]

if TYPE_CHECKING:  # imported where used: pydantic-ai and the SDKs take seconds to import
    from pydantic_ai.models import Model
    from pydantic_ai.settings import ModelSettings

NO_KEY = "questbot-no-key"
"""Sent when the operator set no key: the SDKs require one, local servers ignore it."""


DEFAULT_URLS = {Wire.OPENAI: "https://api.openai.com/v1", Wire.ANTHROPIC: "https://api.anthropic.com"}


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
    """The output limit of each request (``QUESTBOT_MODEL_MAX_TOKENS``)."""
    request_timeout_seconds: float = Field(default=300.0, gt=0)
    """How long one request may go unanswered (``QUESTBOT_MODEL_TIMEOUT``)."""
    context_window: int | None = Field(default=None, ge=256)
    """Prompt plus output tokens the endpoint takes (``QUESTBOT_MODEL_CONTEXT_WINDOW``);
    ``None``: what the probe finds, else unknown."""
    retries: int = Field(default=4, ge=0, le=20)
    """Tries after the first for a request the endpoint did not answer or was too busy for
    (``QUESTBOT_MODEL_RETRIES``): the one budget of retries."""
    retry_wait_seconds: float = Field(default=2.0, ge=0)
    """The first wait between tries; each next one doubles, up to a minute, and a
    ``retry-after`` the endpoint sends is honoured."""
    stage_seconds: float = Field(default=1800.0, gt=0)
    """A stage's conversation ends after this long whatever its repository allows
    (``QUESTBOT_MODEL_STAGE_SECONDS``)."""
    adaptation: Adaptation = Field(default_factory=Adaptation)
    """What questbot sends this endpoint (``bot.agent.model.adaptation``)."""
    observer: Callable[[str, str], None] | None = Field(default=None, exclude=True, repr=False)
    """Told of each retry and adaptation (``kind``, ``what``): the worker's ``/metrics``."""

    @property
    def base_url(self) -> str:
        return (self.url or DEFAULT_URLS[self.wire]).rstrip("/")

    @property
    def chosen(self) -> Adaptation:
        """The adaptation in force: the endpoint's, the context window setting over the
        probe's, and what this process learned of it since (``adaptation.current``)."""
        chosen = self.adaptation
        if self.context_window is not None:
            chosen = chosen.model_copy(update={"context_window": self.context_window})
        return current(self.base_url, chosen)

    def settings(self) -> ModelSettings:
        from pydantic_ai.settings import ModelSettings

        return ModelSettings(max_tokens=self.max_tokens, timeout=self.request_timeout_seconds,
                             max_retries=0)

    def chat_model(self, name: str | None = None) -> Model:
        """The pydantic-ai model for ``name`` (default: the endpoint's) at this endpoint,
        behind ``Steady``: one budget of retries, the endpoint's adaptation, calls written as
        text read back."""
        from bot.agent.model.steady import Steady

        return Steady(self, name or self.model)


def endpoint_from(settings: ModelConfig) -> ModelEndpoint | None:
    """The model agent's endpoint the process's settings describe; ``None`` when they name no
    model (``QUESTBOT_MODEL`` unset). Built here, not in the settings: the settings sit below
    the agent and know nothing of it."""
    if settings.model_name is None:
        return None
    return ModelEndpoint(wire=settings.model_protocol, url=settings.model_url,
                         api_key=settings.model_api_key, model=settings.model_name,
                         prices=settings.model_prices, max_tokens=settings.model_max_tokens,
                         request_timeout_seconds=settings.model_timeout,
                         context_window=settings.model_context_window,
                         retries=settings.model_retries, stage_seconds=settings.model_stage_seconds)
