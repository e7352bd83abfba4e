"""The model agent's endpoint, from the worker's environment (a part of ``bot.config``).

| variable | default | |
|---|---|---|
| ``QUESTBOT_MODEL`` | unset: no model | the model agent's default model name |
| ``QUESTBOT_MODEL_PROTOCOL`` | ``openai`` | ``openai`` (chat completions) or ``anthropic`` |
| ``QUESTBOT_MODEL_URL`` | the protocol's own | the endpoint (``…/v1`` for ``openai``) |
| ``QUESTBOT_MODEL_API_KEY`` | none | the endpoint's key (a secret) |
| ``QUESTBOT_MODEL_PRICES`` | the price tables | ``INPUT,OUTPUT``: USD per million tokens |

Without ``QUESTBOT_MODEL`` the worker runs no model: quests that would use one park and say
what to set (``bot.agent.runs``). The key is the worker's, never a repository's; a repository
may pick only the model's name (``agent.model``). Naming a URL, key or prices without a model
is a mistake worth reporting, not a silent "no model".
"""

from __future__ import annotations

from decimal import Decimal, InvalidOperation

from pydantic import BaseModel, Field, SecretStr, ValidationInfo, field_validator

from bot.agent.model.endpoint import ModelEndpoint, Prices, Wire

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
}
MODEL_SECRETS = frozenset({"QUESTBOT_MODEL_API_KEY"})


class WholeSentence(ValueError):
    """A problem told in a whole sentence, hint included: ``bot.config.problems`` prints it as it is
    (a default that fails its check is reported under the field's name, not its variable)."""


class ModelConfig(BaseModel):
    """The fields ``bot.config.Config`` reads for the model agent (a mixin: the environment
    source and the problem reporting are ``Config``'s)."""

    model_protocol: Wire = Field(default=Wire.OPENAI, validation_alias="QUESTBOT_MODEL_PROTOCOL")
    model_url: str | None = Field(default=None, validation_alias="QUESTBOT_MODEL_URL")
    model_api_key: SecretStr | None = Field(default=None,
                                            validation_alias="QUESTBOT_MODEL_API_KEY")
    model_prices: Prices | None = Field(default=None, validation_alias="QUESTBOT_MODEL_PRICES")
    model_name: str | None = Field(default=None, validation_alias="QUESTBOT_MODEL",
                                   validate_default=True)
    """Last: its check reads the fields above."""

    @property
    def model_endpoint(self) -> ModelEndpoint | None:
        """The model agent's endpoint; ``None`` when no model is configured."""
        if self.model_name is None:
            return None
        return ModelEndpoint(wire=self.model_protocol, url=self.model_url,
                             api_key=self.model_api_key, model=self.model_name,
                             prices=self.model_prices)

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

    @field_validator("model_name")
    @classmethod
    def _model_name(cls, value: str | None, info: ValidationInfo) -> str | None:
        if value is None and any(info.data.get(name) is not None
                                 for name in ("model_url", "model_api_key", "model_prices")):
            raise WholeSentence("QUESTBOT_MODEL is not set, but QUESTBOT_MODEL_URL, "
                                "QUESTBOT_MODEL_API_KEY or QUESTBOT_MODEL_PRICES is: "
                                + MODEL_HINTS["QUESTBOT_MODEL"])
        return value.strip() if value is not None else None
