"""Process configuration from the environment and ``.env`` (12-factor), checked in full before
anything starts.

``load_config`` reads every variable, and if anything is missing or malformed it raises one
``ConfigError`` listing every problem with what to do about it — fixing a deployment one
restart per variable is slow and discouraging. The webhook secret is required: a questbot that
cannot check signatures must not start at all.

| variable | default | |
|---|---|---|
| ``GITHUB_APP_ID`` | required | the App's numeric ID (or its client ID) |
| ``GITHUB_PRIVATE_KEY`` / ``GITHUB_PRIVATE_KEY_PATH`` | one required | PEM text, or a path to it |
| ``GITHUB_WEBHOOK_SECRET`` | required | the App's webhook secret |
| ``GITHUB_APP_SLUG`` | unset | the App's slug, as ``register`` wrote it (read, not required) |
| ``REDIS_URL`` | ``redis://127.0.0.1:6379/0`` | ``redis+cluster://HOST:PORT`` for a Redis Cluster |
| ``GITHUB_API_URL`` | ``https://api.github.com`` | GitHub Enterprise: ``https://HOST/api/v3`` |
| ``PORT`` | ``8080`` | the web process |
| ``QUESTBOT_METRICS_PORT`` | ``9100`` | the worker's ``/metrics`` and ``/healthz`` |
| ``QUESTBOT_DURABLE_ACKS`` | ``true`` | acknowledge a webhook only once it is journaled |
| ``QUESTBOT_MODEL*`` | unset: no model | the model agent's endpoint (``bot.config.model``) |
| ``QUESTBOT_SANDBOX`` | ``bubblewrap`` | ``unsafe-off`` runs repository code unconfined |
| ``QUESTBOT_SANDBOX_READONLY`` | none | extra read-only directories for checks (``:``-separated) |
| ``QUESTBOT_SANDBOX_MEMORY_MB`` | ``4096`` | address-space limit of each sandboxed command |

The ``QUESTBOT_SANDBOX*`` variables are also read alone (``load_sandbox_config``), by
``python -m bot proof``, which needs no App.
| ``QUESTBOT_REDELIVERY`` | ``true`` | the worker asks GitHub to redeliver what it lost |
| ``QUESTBOT_REDELIVERY_INTERVAL`` | ``300`` | seconds between two redelivery passes |
| ``QUESTBOT_REDELIVERY_HOURS`` | ``24`` | how far back a pass looks (GitHub keeps three days) |
| ``QUESTBOT_REDELIVERY_MAX`` | ``50`` | redeliveries asked for in one pass, at most |

``.env``. Without an explicit environment (``python -m bot serve|worker|receive``), the values
of ``./.env`` (or of the file ``QUESTBOT_ENV_FILE`` names) lie under the process environment:
a variable set in the environment wins over the file (``bot.config.envfile`` reads it, and puts
nothing into ``os.environ``). The two private-key variables are one setting: if the
environment sets either, neither is taken from the file. A problem with a value from the file
says so (``PORT=x (from .env)``).

Every value is checked for what it is: ports from 1 to 65535, URLs with a scheme questbot can
use, a host and a valid port (``bot.config.checks``), flags true or false, numbers within
their range. An empty variable counts as unset. A private key whose newlines arrive as
``\\n`` (how some platforms store multi-line values) is unescaped. Secrets are ``SecretStr``:
``repr``, ``str`` and logging of the config show ``**********``; ``ConfigError`` never quotes
a secret (nor a password inside a URL) and is raised without the pydantic error chained, whose
text would quote the input.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Any

from pydantic import Field, PrivateAttr, SecretStr, ValidationError, ValidationInfo, field_validator
from pydantic.fields import FieldInfo
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

from bot.agent.sandbox import SandboxMode, SandboxPolicy
from bot.config import checks
from bot.config.envfile import ENV_FILE, read_env_file
from bot.config.model import MODEL_HINTS, MODEL_SECRETS, ModelConfig, WholeSentence
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
    "GITHUB_APP_SLUG": "set it to the App's slug (the last part of https://github.com/apps/"
    "SLUG), or unset it",
    "REDIS_URL": "set it to a redis://, rediss://, unix:// or redis+cluster:// URL, or unset "
    "it for "
    "redis://127.0.0.1:6379/0",
    "GITHUB_API_URL": "set it to the REST API root (https://api.github.com, or "
    "https://HOST/api/v3 for GitHub Enterprise Server), or unset it",
    "PORT": "set it to a TCP port from 1 to 65535, or unset it for 8080",
    "QUESTBOT_METRICS_PORT": "set it to a TCP port from 1 to 65535, or unset it for 9100",
    "QUESTBOT_DURABLE_ACKS": "set it to true or false, or unset it for true",
    "QUESTBOT_SANDBOX": "set it to bubblewrap (the default), or to unsafe-off to run "
    "repository code and agents unconfined, as the worker's user, with its files and network",
    "QUESTBOT_SANDBOX_READONLY": "set it to absolute directory paths separated by ':', or "
    "unset it",
    "QUESTBOT_SANDBOX_MEMORY_MB": "set it to a whole number of MiB (at least 64), or unset it "
    "for 4096",
    "QUESTBOT_REDELIVERY": "set it to true or false, or unset it for true",
    "QUESTBOT_REDELIVERY_INTERVAL": "set it to the seconds between two redelivery passes, "
    "from 10 to 86400, or unset it for 300",
    "QUESTBOT_REDELIVERY_HOURS": "set it to how many hours back a redelivery pass looks, "
    "from 1 to 72 (GitHub keeps deliveries three days), or unset it for 24",
    "QUESTBOT_REDELIVERY_MAX": "set it to the most redeliveries one pass asks for, from 1 to "
    "1000, or unset it for 50",
}
_HINTS.update(MODEL_HINTS)
_SECRET = frozenset({"GITHUB_PRIVATE_KEY", "GITHUB_WEBHOOK_SECRET"}) | MODEL_SECRETS
_URLS = frozenset({"REDIS_URL", "GITHUB_API_URL"})
_REGISTERED = frozenset({"GITHUB_APP_ID", "GITHUB_WEBHOOK_SECRET"})
_KEY_VARIABLES = ("GITHUB_PRIVATE_KEY", "GITHUB_PRIVATE_KEY_PATH")
ENV_FILE_VARIABLE = "QUESTBOT_ENV_FILE"
REDIS_DEFAULT = "redis://127.0.0.1:6379/0"


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


class _Environment(BaseSettings):
    """Settings read from the environment only (given to ``load_config``, else the process's)."""

    model_config = SettingsConfigDict(frozen=True, extra="ignore", case_sensitive=True)

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


class SandboxConfig(_Environment):
    """How repository code runs (``bot.agent.sandbox``); the one opt-out says it is unsafe."""

    sandbox: SandboxMode = Field(default=SandboxMode.BUBBLEWRAP,
                                 validation_alias="QUESTBOT_SANDBOX")
    sandbox_readonly: tuple[Path, ...] = Field(default=(),
                                               validation_alias="QUESTBOT_SANDBOX_READONLY")
    sandbox_memory_mb: int = Field(default=4096, validation_alias="QUESTBOT_SANDBOX_MEMORY_MB")

    @field_validator("sandbox", mode="before")
    @classmethod
    def _mode(cls, value: object) -> SandboxMode:
        text = str(value).strip().lower()
        try:
            return SandboxMode(text)
        except ValueError:
            raise ValueError(f"is not one of {', '.join(m.value for m in SandboxMode)}") from None

    @field_validator("sandbox_readonly", mode="before")
    @classmethod
    def _readonly(cls, value: object) -> tuple[Path, ...]:
        if isinstance(value, tuple):
            return value
        paths = tuple(Path(p) for p in str(value).split(os.pathsep) if p.strip())
        relative = [str(p) for p in paths if not p.is_absolute()]
        if relative:
            raise ValueError(f"holds relative paths {relative}")
        missing = [str(p) for p in paths if not p.is_dir()]
        if missing:
            raise ValueError(f"names directories that do not exist: {missing}")
        return paths

    @field_validator("sandbox_memory_mb", mode="before")
    @classmethod
    def _memory(cls, value: object) -> int:
        text = str(value).strip()
        if not text.isdigit() or int(text) < 64:
            raise ValueError("is not a whole number of MiB of at least 64")
        return int(text)

    def sandbox_policy(self, secrets: tuple[Path, ...] = ()) -> SandboxPolicy:
        """The policy this configuration describes; ``secrets`` are never visible inside."""
        return SandboxPolicy(mode=self.sandbox, readonly=self.sandbox_readonly,
                             secrets=secrets, memory_bytes=self.sandbox_memory_mb * 1024 * 1024)


class Config(SandboxConfig, ModelConfig):
    github_app_id: str = Field(validation_alias="GITHUB_APP_ID")
    github_private_key_text: SecretStr | None = Field(
        default=None, validation_alias="GITHUB_PRIVATE_KEY"
    )
    github_private_key_path: Path | None = Field(
        default=None, validation_alias="GITHUB_PRIVATE_KEY_PATH", validate_default=True
    )
    github_webhook_secret: SecretStr = Field(validation_alias="GITHUB_WEBHOOK_SECRET")
    github_app_slug: str | None = Field(default=None, validation_alias="GITHUB_APP_SLUG")
    redis_url: str = Field(default=REDIS_DEFAULT, validation_alias="REDIS_URL")
    github_api_url: str = Field(default="https://api.github.com", validation_alias="GITHUB_API_URL")
    port: int = Field(default=8080, validation_alias="PORT")
    durable_acks: bool = Field(default=True, validation_alias="QUESTBOT_DURABLE_ACKS")
    metrics_port: int = Field(default=9100, validation_alias="QUESTBOT_METRICS_PORT")
    """The worker's /metrics and /healthz (the web process serves its own on PORT)."""
    redelivery: bool = Field(default=True, validation_alias="QUESTBOT_REDELIVERY")
    """The worker's redelivery reconciler (``bot.worker.redelivery``)."""
    redelivery_interval_s: int = Field(default=300, validation_alias="QUESTBOT_REDELIVERY_INTERVAL")
    redelivery_hours: int = Field(default=24, validation_alias="QUESTBOT_REDELIVERY_HOURS")
    redelivery_max: int = Field(default=50, validation_alias="QUESTBOT_REDELIVERY_MAX")

    _private_key: SecretStr = PrivateAttr()

    def model_post_init(self, context: Any, /) -> None:
        if self.github_private_key_text is not None:
            self._private_key = self.github_private_key_text
        elif self.github_private_key_path is not None:
            self._private_key = SecretStr(self.github_private_key_path.read_text())

    def sandbox_policy(self, secrets: tuple[Path, ...] = ()) -> SandboxPolicy:
        """The sandbox policy, with the App's key file among what is never visible inside."""
        key = (self.github_private_key_path.resolve(),) if self.github_private_key_path else ()
        return super().sandbox_policy((*key, *secrets))

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
                    "its .pem file in GITHUB_PRIVATE_KEY_PATH (python -m bot register writes "
                    "the file, and its path to .env)"
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

    @field_validator("github_app_slug")
    @classmethod
    def _slug(cls, value: str | None) -> str | None:
        if value is not None and not value.replace("-", "").isalnum():
            raise ValueError("is not an App slug (letters, digits and dashes)")
        return value

    @field_validator("redis_url")
    @classmethod
    def _redis_url(cls, value: str) -> str:
        return checks.redis_url(value)

    @field_validator("github_api_url")
    @classmethod
    def _api_url(cls, value: str) -> str:
        return checks.http_url(value)

    @field_validator("port", "metrics_port", mode="before")
    @classmethod
    def _port(cls, value: object) -> int:
        return checks.port(value)

    @field_validator("durable_acks", "redelivery", mode="before")
    @classmethod
    def _flag(cls, value: object) -> bool:
        return checks.flag(value)

    @field_validator("redelivery_interval_s", mode="before")
    @classmethod
    def _interval(cls, value: object) -> int:
        return checks.whole(value, 10, 86_400)

    @field_validator("redelivery_hours", mode="before")
    @classmethod
    def _hours(cls, value: object) -> int:
        return checks.whole(value, 1, 72)

    @field_validator("redelivery_max", mode="before")
    @classmethod
    def _most(cls, value: object) -> int:
        return checks.whole(value, 1, 1000)


@contextmanager
def _reading(environ: Mapping[str, str]) -> Iterator[None]:
    token = _ENVIRON.set(environ)
    try:
        yield
    finally:
        _ENVIRON.reset(token)


def settings_values(
    environ: Mapping[str, str] | None = None, env_file: Path | None = None
) -> tuple[dict[str, str], dict[str, Path], list[str]]:
    """The variables ``load_config`` reads: ``environ`` laid over ``env_file``'s values (an
    empty variable counts as unset, so the file's value shows through it), which names came
    from the file, and the file's own problems. With neither given: the process environment
    over ``./.env`` (or the file ``QUESTBOT_ENV_FILE`` names)."""
    if environ is None:
        environ = os.environ
        if env_file is None:
            env_file = Path(environ.get(ENV_FILE_VARIABLE) or ENV_FILE)
    merged = {name: value for name, value in environ.items() if value}
    if env_file is None:
        return merged, {}, []
    found = read_env_file(env_file)
    from_file = {name: value for name, value in found.values.items() if value}
    if any(name in merged for name in _KEY_VARIABLES):
        for name in _KEY_VARIABLES:  # one setting in two forms: the environment's wins whole
            from_file.pop(name, None)
    origins = {name: env_file for name in from_file if name not in merged}
    return {**from_file, **merged}, origins, list(found.problems)


def redis_url() -> str:
    """``REDIS_URL`` as the web process and the worker read it (the environment over
    ``./.env``), for a tool that needs Redis and none of the App's settings."""
    values, _origins, _problems = settings_values()
    return values.get("REDIS_URL") or REDIS_DEFAULT


def load_config(environ: Mapping[str, str] | None = None, *,
                env_file: Path | None = None) -> Config:
    """The configuration ``environ`` (default: the process environment over ``./.env``)
    describes, or a ``ConfigError`` naming every variable that is missing or malformed, and
    every unreadable line of the file, with what to do. A given ``environ`` is read alone
    unless an ``env_file`` is given too."""
    values, origins, problems = settings_values(environ, env_file)
    try:
        with _reading(values):
            config = Config()
    except ValidationError as exc:
        problems += [_describe(error, values, origins) for error in exc.errors(include_url=False)]
    else:
        if not problems:
            return config
    raise ConfigError(problems) from None  # the ValidationError's text would quote secrets


def load_sandbox_config(environ: Mapping[str, str] | None = None) -> SandboxConfig:
    """The ``QUESTBOT_SANDBOX*`` settings alone (for commands that need no App), or a
    ``ConfigError`` naming each one that is malformed."""
    environ = os.environ if environ is None else environ
    try:
        with _reading(environ):
            return SandboxConfig()
    except ValidationError as exc:
        problems = [_describe(error, environ, {}) for error in exc.errors(include_url=False)]
    raise ConfigError(problems) from None


def _describe(error: Any, environ: Mapping[str, str], origins: Mapping[str, Path]) -> str:
    name = str(error["loc"][0]) if error["loc"] else "environment"
    hint = _HINTS.get(name, "check its value")
    value = environ.get(name) or None
    where = f" (from {origins[name]})" if name in origins else ""
    if error["type"] == "missing":
        registered = " (python -m bot register writes it to .env)" if name in _REGISTERED else ""
        return f"{name} is not set; {hint}{registered}"
    cause = error.get("ctx", {}).get("error")
    if isinstance(cause, _Whole | WholeSentence):
        return str(cause)
    problem = str(cause) if cause is not None else error["msg"].lower()
    if name in _SECRET or value is None:
        shown = name
    else:
        shown = f"{name}={_cut(checks.shown_url(value) if name in _URLS else value)}"
    return f"{shown}{where}: {problem}; {hint}"


def _cut(value: str, limit: int = 80) -> str:
    return value if len(value) <= limit else value[: limit - 1] + "…"
