"""The model agent's endpoint, from the worker's environment (a part of ``bot.settings.process``).

| variable | default | |
|---|---|---|
| ``QUESTBOT_MODEL`` | unset: no model | the model agent's default model name |
| ``QUESTBOT_MODEL_PROTOCOL`` | ``openai`` | ``openai`` (chat completions) or ``anthropic`` |
| ``QUESTBOT_MODEL_URL`` | the protocol's own | the endpoint (``…/v1`` for ``openai``) |
| ``QUESTBOT_MODEL_API_KEY`` | none | the endpoint's key (a secret) |
| ``QUESTBOT_MODEL_PRICES`` | the price tables | ``INPUT,OUTPUT``: USD per million tokens |
| ``QUESTBOT_MODEL_TIMEOUT`` | 300 | seconds one request may go unanswered |
| ``QUESTBOT_MODEL_MAX_TOKENS`` | 8192 | the output limit of each request |
| ``QUESTBOT_MODEL_CONTEXT_WINDOW`` | the probe's, else unknown | prompt + output tokens |
| ``QUESTBOT_MODEL_RETRIES`` | 4 | tries after the first for an endpoint down or busy |
| ``QUESTBOT_MODEL_STAGE_SECONDS`` | 1800 | a stage's conversation ends after this long |
| ``QUESTBOT_MODEL_PROBE`` | true | ask the endpoint what it can do when the worker starts |

The values these settings hold (``Wire``, ``Prices``) are defined here, below the agent, which
builds its endpoint from them (``bot.agent.model.endpoint.endpoint_from``).

Without ``QUESTBOT_MODEL`` the worker runs no model: quests that would use one park and say
what to set (``bot.agent.runs``). The key is the worker's, never a repository's; a repository
may pick only the model's name (``agent.model``). Naming a URL, key or prices without a model
is a mistake worth reporting, not a silent "no model".
"""

from __future__ import annotations

from decimal import Decimal, InvalidOperation
from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationInfo, field_validator

from bot.settings.process import checks

DEFAULT_MAX_TOKENS = 8192


class Wire(StrEnum):
    OPENAI = "openai"
    ANTHROPIC = "anthropic"


class Prices(BaseModel):
    """USD per million tokens."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    input: Decimal = Field(ge=0)
    output: Decimal = Field(ge=0)

    def cost(self, input_tokens: int, output_tokens: int) -> Decimal:
        return (self.input * input_tokens + self.output * output_tokens) / 1_000_000


MODEL_HINTS = {
    "QUESTBOT_MODEL": "set it to the model's name at the endpoint (gpt-4.1-mini, "
    "claude-sonnet-4-5, llama3.1 …), or unset QUESTBOT_MODEL_URL, QUESTBOT_MODEL_API_KEY and "
    "QUESTBOT_MODEL_PRICES to run without a model",
    "QUESTBOT_MODEL_PROTOCOL": "set it to openai (chat completions: OpenAI, Azure, vLLM, "
    "Ollama, LiteLLM …) or anthropic (Messages), or unset it for openai",
    "QUESTBOT_MODEL_URL": "set it to the endpoint's http(s) URL (for openai it ends in /v1), "
    "or unset it for the protocol's own API",
    "QUESTBOT_MODEL_PRICES": "set it to two numbers, INPUT,OUTPUT: USD per million input and "
    "output tokens (0,0 for a local model), or unset it to use the known price tables",
    "QUESTBOT_MODEL_TIMEOUT": "set it to the seconds one model request may go unanswered "
    "(more than 0, at most 3600), or unset it for 300",
    "QUESTBOT_MODEL_MAX_TOKENS": "set it to the output limit of each request, from 256 to "
    "1000000 tokens, or unset it for 8192",
    "QUESTBOT_MODEL_CONTEXT_WINDOW": "set it to the tokens of prompt and output the model's "
    "server takes (vLLM's --max-model-len, llama.cpp's --ctx-size, Ollama's num_ctx), at least "
    "1024, or unset it to use what the endpoint says",
    "QUESTBOT_MODEL_RETRIES": "set it to how many times a request the endpoint did not answer "
    "or was too busy for is tried again, from 0 to 20, or unset it for 4",
    "QUESTBOT_MODEL_STAGE_SECONDS": "set it to the seconds a stage's model conversation may "
    "take, from 60 to 86400, or unset it for 1800",
    "QUESTBOT_MODEL_PROBE": "set it to true or false, or unset it for true",
}
MODEL_SECRETS = frozenset({"QUESTBOT_MODEL_API_KEY"})


class WholeSentence(ValueError):
    """A problem told in a whole sentence, hint included: ``bot.settings.process.problems``
    prints it as it is (a default that fails its check is reported under the field's name, not
    its variable)."""


class ModelConfig(BaseModel):
    """The fields ``bot.settings.process.Config`` reads for the model agent (a mixin: the
    environment source and the problem reporting are ``Config``'s)."""

    model_protocol: Wire = Field(default=Wire.OPENAI, validation_alias="QUESTBOT_MODEL_PROTOCOL")
    model_url: str | None = Field(default=None, validation_alias="QUESTBOT_MODEL_URL")
    model_api_key: SecretStr | None = Field(default=None,
                                            validation_alias="QUESTBOT_MODEL_API_KEY")
    model_prices: Prices | None = Field(default=None, validation_alias="QUESTBOT_MODEL_PRICES")
    model_timeout: float = Field(default=300.0, gt=0, le=3600,
                                 validation_alias="QUESTBOT_MODEL_TIMEOUT")
    model_max_tokens: int = Field(default=DEFAULT_MAX_TOKENS, ge=256, le=1_000_000,
                                  validation_alias="QUESTBOT_MODEL_MAX_TOKENS")
    model_context_window: int | None = Field(default=None, ge=1024,
                                             validation_alias="QUESTBOT_MODEL_CONTEXT_WINDOW")
    model_retries: int = Field(default=4, ge=0, le=20, validation_alias="QUESTBOT_MODEL_RETRIES")
    model_stage_seconds: float = Field(default=1800.0, ge=60, le=86400,
                                       validation_alias="QUESTBOT_MODEL_STAGE_SECONDS")
    model_probe: bool = Field(default=True, validation_alias="QUESTBOT_MODEL_PROBE")
    model_name: str | None = Field(default=None, validation_alias="QUESTBOT_MODEL",
                                   validate_default=True)
    """Last: its check reads the fields above."""

    @field_validator("model_protocol", mode="before")
    @classmethod
    def _protocol(cls, value: object) -> object:
        text = str(value).strip().lower()
        if text not in {wire.value for wire in Wire}:
            raise ValueError("is not openai or anthropic")
        return text

    @field_validator("model_url")
    @classmethod
    def _model_url(cls, value: str | None) -> str | None:
        if value is not None and (not value.startswith(("https://", "http://"))
                                  or value[-3:] == "://"):
            raise ValueError("is not an http(s) URL")
        return value

    @field_validator("model_prices", mode="before")
    @classmethod
    def _prices(cls, value: object) -> object:
        if not isinstance(value, str):
            return value
        try:
            numbers = [Decimal(part.strip()) for part in value.split(",")]
        except InvalidOperation:
            raise ValueError("is not two numbers") from None
        if len(numbers) != 2 or any(not n.is_finite() or n < 0 for n in numbers):
            raise ValueError("is not two numbers of zero or more")
        return {"input": numbers[0], "output": numbers[1]}

    @field_validator("model_probe", mode="before")
    @classmethod
    def _probe(cls, value: object) -> bool:
        return checks.flag(value)

    @field_validator("model_max_tokens", mode="before")
    @classmethod
    def _max_tokens(cls, value: object) -> int:
        return checks.whole(value, 256, 1_000_000)

    @field_validator("model_context_window", mode="before")
    @classmethod
    def _window(cls, value: object) -> int | None:
        return None if value is None else checks.whole(value, 1024, 100_000_000)

    @field_validator("model_retries", mode="before")
    @classmethod
    def _retries(cls, value: object) -> int:
        return checks.whole(value, 0, 20)

    @field_validator("model_name")
    @classmethod
    def _model_name(cls, value: str | None, info: ValidationInfo) -> str | None:
        if value is None and any(info.data.get(name) is not None
                                 for name in ("model_url", "model_api_key", "model_prices")):
            raise WholeSentence("QUESTBOT_MODEL is not set, but QUESTBOT_MODEL_URL, "
                                "QUESTBOT_MODEL_API_KEY or QUESTBOT_MODEL_PRICES is: "
                                + MODEL_HINTS["QUESTBOT_MODEL"])
        return value.strip() if value is not None else None
