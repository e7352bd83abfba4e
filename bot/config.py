"""Process configuration from the environment (12-factor), checked in full before anything starts.

``load_config`` reads every variable, and if anything is missing or malformed it raises one
``ConfigError`` listing every problem with what to do about it — fixing a deployment one
restart per variable is slow and discouraging. The webhook secret is required: a questbot that
cannot check signatures must not start at all.

| variable | default | |
|---|---|---|
| ``GITHUB_APP_ID`` | required | the App's numeric ID (or its client ID) |
| ``GITHUB_PRIVATE_KEY`` / ``GITHUB_PRIVATE_KEY_PATH`` | one required | PEM text, or a path to it |
| ``GITHUB_WEBHOOK_SECRET`` | required | the App's webhook secret |
| ``REDIS_URL`` | ``redis://127.0.0.1:6379/0`` | |
| ``GITHUB_API_URL`` | ``https://api.github.com`` | GitHub Enterprise: ``https://HOST/api/v3`` |
| ``PORT`` | ``8080`` | |
| ``QUESTBOT_DURABLE_ACKS`` | ``true`` | acknowledge a webhook only once it is journaled |
| ``QUESTBOT_MODEL`` | unset: no model | the model agent's default model name |
| ``QUESTBOT_MODEL_PROTOCOL`` | ``openai`` | ``openai`` (chat completions) or ``anthropic`` |
| ``QUESTBOT_MODEL_URL`` | the protocol's own | the endpoint (``…/v1`` for ``openai``) |
| ``QUESTBOT_MODEL_API_KEY`` | none | the endpoint's key (a secret) |
| ``QUESTBOT_MODEL_PRICES`` | the price tables | ``INPUT,OUTPUT``: USD per million tokens |

Without ``QUESTBOT_MODEL`` the worker runs no model: quests that would use one park and say
what to set (``bot.agent.runs``). The model's key is the worker's, never a repository's.

An empty variable counts as unset. A private key whose newlines arrive as ``\\n`` (how some
platforms store multi-line values) is unescaped. Secrets are ``SecretStr``: ``repr``, ``str``
and logging of the config show ``**********``; ``ConfigError`` never quotes a secret and is
raised without the pydantic error chained, whose text would quote the input.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

from pydantic import Field, PrivateAttr, SecretStr, ValidationError, ValidationInfo, field_validator
from pydantic.fields import FieldInfo
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

from bot.agent.model.endpoint import ModelEndpoint, Prices, Wire
from bot.errors import ConfigurationError
from bot.github.auth import AuthError, load_private_key

_HINTS = {
    "GITHUB_APP_ID": "set it to the App's numeric ID (or client ID) from the App's settings page",
    "GITHUB_PRIVATE_KEY": "put the PEM text of the App's private key in it, or unset it and "
    "put the path of the .pem file in GITHUB_PRIVATE_KEY_PATH",
    "GITHUB_PRIVATE_KEY_PATH": "set it to the path of the App's .pem file, or put the PEM "
    "text in GITHUB_PRIVATE_KEY",
    "GITHUB_WEBHOOK_SECRET": "set it to the webhook secret configured on the GitHub App; "
    "questbot refuses to run without one, since it could not tell GitHub's deliveries from "
    "anyone else's",
    "REDIS_URL": "set it to a redis://, rediss:// or unix:// URL, or unset it for "
    "redis://127.0.0.1:6379/0",
    "GITHUB_API_URL": "set it to the REST API root (https://api.github.com, or "
    "https://HOST/api/v3 for GitHub Enterprise Server), or unset it",
    "PORT": "set it to a TCP port from 1 to 65535, or unset it for 8080",
    "QUESTBOT_DURABLE_ACKS": "set it to true or false, or unset it for true",
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
_SECRET = frozenset({"GITHUB_PRIVATE_KEY", "GITHUB_WEBHOOK_SECRET", "QUESTBOT_MODEL_API_KEY"})
_TRUE = frozenset({"1", "true", "t", "yes", "y", "on"})
_FALSE = frozenset({"0", "false", "f", "no", "n", "off"})


class ConfigError(ConfigurationError):
    """The environment cannot configure questbot; ``problems`` lists each variable to fix."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = tuple(problems)
        listed = "\n".join(f"- {problem}" for problem in self.problems)
        super().__init__(f"questbot cannot start; fix the environment:\n{listed}")


class _Whole(ValueError):
    """A validator's message that is a whole sentence, hint included: print it as it is."""


_ENVIRON: ContextVar[Mapping[str, str] | None] = ContextVar("questbot_environ", default=None)


class _EnvironSource(PydanticBaseSettingsSource):
    """Reads the fields' variables from a given mapping (``os.environ`` unless one is given),
    so ``load_config`` can be called with a test's environment without touching the process's."""

    def __init__(self, settings_cls: type[BaseSettings], environ: Mapping[str, str]) -> None:
        super().__init__(settings_cls)
        self._environ = environ

    def get_field_value(self, field: FieldInfo, field_name: str) -> tuple[Any, str, bool]:
        name = str(field.validation_alias)
        return self._environ.get(name) or None, name, False

    def __call__(self) -> dict[str, Any]:
        values: dict[str, Any] = {}
        for field_name, field in self.settings_cls.model_fields.items():
            value, name, _ = self.get_field_value(field, field_name)
            if value is not None:
                values[name] = value
        return values


class Config(BaseSettings):
    model_config = SettingsConfigDict(frozen=True, extra="ignore", case_sensitive=True)

    github_app_id: str = Field(validation_alias="GITHUB_APP_ID")
    github_private_key_text: SecretStr | None = Field(
        default=None, validation_alias="GITHUB_PRIVATE_KEY"
    )
    github_private_key_path: Path | None = Field(
        default=None, validation_alias="GITHUB_PRIVATE_KEY_PATH", validate_default=True
    )
    github_webhook_secret: SecretStr = Field(validation_alias="GITHUB_WEBHOOK_SECRET")
    redis_url: str = Field(default="redis://127.0.0.1:6379/0", validation_alias="REDIS_URL")
    github_api_url: str = Field(default="https://api.github.com", validation_alias="GITHUB_API_URL")
    port: int = Field(default=8080, validation_alias="PORT")
    durable_acks: bool = Field(default=True, validation_alias="QUESTBOT_DURABLE_ACKS")
    metrics_port: int = Field(default=9100, validation_alias="QUESTBOT_METRICS_PORT")
    """The worker's /metrics and /healthz (the web process serves its own on PORT)."""
    model_protocol: Wire = Field(default=Wire.OPENAI, validation_alias="QUESTBOT_MODEL_PROTOCOL")
    model_url: str | None = Field(default=None, validation_alias="QUESTBOT_MODEL_URL")
    model_api_key: SecretStr | None = Field(default=None,
                                            validation_alias="QUESTBOT_MODEL_API_KEY")
    model_prices: Prices | None = Field(default=None, validation_alias="QUESTBOT_MODEL_PRICES")
    model_name: str | None = Field(default=None, validation_alias="QUESTBOT_MODEL",
                                   validate_default=True)

    _private_key: SecretStr = PrivateAttr()

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        """Only the environment (given to ``load_config``, else the process's): no .env files."""
        environ = _ENVIRON.get()
        return init_settings, _EnvironSource(
            settings_cls, os.environ if environ is None else environ
        )

    def model_post_init(self, context: Any, /) -> None:
        if self.github_private_key_text is not None:
            self._private_key = self.github_private_key_text
        elif self.github_private_key_path is not None:
            self._private_key = SecretStr(self.github_private_key_path.read_text())

    @property
    def model_endpoint(self) -> ModelEndpoint | None:
        """The model agent's endpoint; ``None`` when no model is configured."""
        if self.model_name is None:
            return None
        return ModelEndpoint(wire=self.model_protocol, url=self.model_url,
                             api_key=self.model_api_key, model=self.model_name,
                             prices=self.model_prices)

    @property
    def github_private_key(self) -> SecretStr:
        """The App's private key as PEM text, from whichever variable held it."""
        return self._private_key

    @field_validator("github_app_id", mode="before")
    @classmethod
    def _app_id(cls, value: str) -> str:
        value = value.strip()
        if not (value.isdigit() and int(value) > 0) and not (
            value.startswith("Iv") and value.replace(".", "").isalnum()
        ):
            raise ValueError("is not an App ID (a positive number) or client ID (Iv…)")
        return value

    @field_validator("github_private_key_text")
    @classmethod
    def _pem_text(cls, value: SecretStr | None) -> SecretStr | None:
        if value is None:
            return None
        text = value.get_secret_value()
        if "\\n" in text and "\n" not in text.strip():
            text = text.replace("\\n", "\n")
        try:
            load_private_key(text)
        except AuthError:
            raise ValueError("does not parse as an RSA private key in PEM form") from None
        return SecretStr(text)

    @field_validator("github_private_key_path")
    @classmethod
    def _pem_file(cls, path: Path | None, info: ValidationInfo) -> Path | None:
        text_given = (
            "github_private_key_text" not in info.data
            or info.data["github_private_key_text"] is not None
        )  # absent from data: it was given and failed its own check
        if path is None:
            if not text_given:
                raise _Whole(
                    "neither GITHUB_PRIVATE_KEY nor GITHUB_PRIVATE_KEY_PATH is set; put the "
                    "PEM text of the App's private key in GITHUB_PRIVATE_KEY, or the path of "
                    "its .pem file in GITHUB_PRIVATE_KEY_PATH"
                )
            return None
        if text_given:
            raise _Whole(
                "GITHUB_PRIVATE_KEY and GITHUB_PRIVATE_KEY_PATH are both set; keep only one: "
                "the PEM text, or the path of the .pem file"
            )
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            raise ValueError("file not found") from None
        except IsADirectoryError:
            raise ValueError("is a directory, not a file") from None
        except PermissionError:
            raise ValueError("cannot be read (permission denied)") from None
        except OSError as exc:
            raise ValueError(f"cannot be read ({exc.strerror})") from None
        try:
            load_private_key(data)
        except AuthError:
            raise ValueError("does not hold an RSA private key in PEM form") from None
        return path

    @field_validator("github_webhook_secret")
    @classmethod
    def _secret(cls, value: SecretStr) -> SecretStr:
        if not value.get_secret_value().strip():
            raise ValueError("is blank")
        return value

    @field_validator("redis_url")
    @classmethod
    def _redis_url(cls, value: str) -> str:
        if not value.startswith(("redis://", "rediss://", "unix://")):
            raise ValueError("is not a redis://, rediss:// or unix:// URL")
        return value

    @field_validator("github_api_url")
    @classmethod
    def _api_url(cls, value: str) -> str:
        if not value.startswith(("https://", "http://")) or value[-3:] == "://":
            raise ValueError("is not an http(s) URL")
        return value.rstrip("/")

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
        parts = [part.strip() for part in value.split(",")]
        try:
            numbers = [Decimal(part) for part in parts]
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
            raise _Whole("QUESTBOT_MODEL is not set, but QUESTBOT_MODEL_URL, "
                         "QUESTBOT_MODEL_API_KEY or QUESTBOT_MODEL_PRICES is: "
                         + _HINTS["QUESTBOT_MODEL"])
        return value.strip() if value is not None else None

    @field_validator("port", mode="before")
    @classmethod
    def _port(cls, value: object) -> int:
        text = str(value).strip()
        if not text.isdigit() or not 1 <= int(text) <= 65535:
            raise ValueError("is not a port number")
        return int(text)

    @field_validator("durable_acks", mode="before")
    @classmethod
    def _flag(cls, value: object) -> bool:
        if isinstance(value, bool):
            return value
        text = str(value).strip().lower()
        if text not in _TRUE | _FALSE:
            raise ValueError("is not true or false")
        return text in _TRUE


@contextmanager
def _reading(environ: Mapping[str, str]) -> Iterator[None]:
    token = _ENVIRON.set(environ)
    try:
        yield
    finally:
        _ENVIRON.reset(token)


def load_config(environ: Mapping[str, str] | None = None) -> Config:
    """The configuration ``environ`` (default: the process environment) describes, or a
    ``ConfigError`` naming every variable that is missing or malformed and what to do."""
    environ = os.environ if environ is None else environ
    try:
        with _reading(environ):
            return Config()
    except ValidationError as exc:
        problems = [_describe(error, environ) for error in exc.errors(include_url=False)]
    raise ConfigError(problems) from None  # the ValidationError's text would quote secrets


def _describe(error: Any, environ: Mapping[str, str]) -> str:
    name = str(error["loc"][0]) if error["loc"] else "environment"
    hint = _HINTS.get(name, "check its value")
    value = environ.get(name) or None
    if error["type"] == "missing":
        return f"{name} is not set; {hint}"
    cause = error.get("ctx", {}).get("error")
    if isinstance(cause, _Whole):
        return str(cause)
    problem = str(cause) if cause is not None else error["msg"].lower()
    shown = name if name in _SECRET or value is None else f"{name}={_cut(value)}"
    return f"{shown}: {problem}; {hint}"


def _cut(value: str, limit: int = 80) -> str:
    return value if len(value) <= limit else value[: limit - 1] + "…"
