"""The process's settings: its environment and ``.env`` (12-factor), checked in full before
anything starts (a part of ``bot.settings``; a repository's own file is
``bot.settings.repository``).

Where a new setting goes: a field on ``Config`` (or on the mixin of its concern, as
``ModelConfig`` and ``SandboxConfig`` are), with its variable as ``validation_alias``, a check
(``bot.settings.process.checks``), its hint in ``bot.settings.process.problems`` and a row in
the README's table of settings (``tests/settings/test_process_settings.py`` compares them); the
unknown-variable warning and the worker's ``--help`` learn it from the fields by themselves
(name it in ``WEB_READS`` if the web process uses it, in ``NOT_THE_WORKERS`` if the worker
does not).

``load_config`` reads every variable, and if anything is missing or malformed it raises one
``ConfigError`` listing every problem with what to do about it
(``bot.settings.process.problems``). The webhook secret is required, 16 characters at least: a
questbot that cannot check signatures must not start at all.

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
| ``QUESTBOT_MODEL*`` | unset: no model | the model agent's endpoint (``model``) |
| ``QUESTBOT_SANDBOX*`` | ``bubblewrap`` | how repository code runs (``sandbox``) |
| ``QUESTBOT_REDELIVERY`` | ``true`` | the worker asks GitHub to redeliver what it lost |
| ``QUESTBOT_REDELIVERY_INTERVAL`` | ``300`` | seconds between two redelivery passes |
| ``QUESTBOT_REDELIVERY_HOURS`` | ``24`` | how far back a pass looks (GitHub keeps three days) |
| ``QUESTBOT_REDELIVERY_MAX`` | ``50`` | redeliveries asked for in one pass, at most |
| ``QUESTBOT_PUBLIC_URL`` | unset | the web process's address for reviewers (``review request``) |
| ``QUESTBOT_COMPACT_AFTER_HOURS`` | ``72`` | hours (or less: ``0.05``) to compact ended quests |
| ``QUESTBOT_EXPORT_DIR`` | unset | compacted records exported to files there |
| ``QUESTBOT_EXPORT_AFTER_DAYS`` | ``30`` | days (or less: ``0.01``) after compaction to export |
| ``QUESTBOT_RESTORABLE_DAYS`` | ``90`` | days a quest waits for its deleted repository |
| ``QUESTBOT_RESTORED_CHECK_S`` | ``600`` | seconds between two looks for restored repositories |

``.env``. The values of ``./.env`` lie under the process environment, and a variable set in
the environment wins (``bot.settings.process.environment``).

Every value is checked for what it is: ports from 1 to 65535, URLs with a scheme questbot can
use, a host and a valid port (``bot.settings.process.checks``), flags true or false, numbers within
their range. An empty variable counts as unset. A private key whose newlines arrive as
``\\n`` (how some platforms store multi-line values) is unescaped. Secrets are ``SecretStr``:
``repr``, ``str`` and logging of the config show ``**********``; ``ConfigError`` never quotes
a secret (nor a password inside a URL) and is raised without the pydantic error chained, whose
text would quote the input.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import Field, PrivateAttr, SecretStr, ValidationError, ValidationInfo, field_validator

from bot.settings.process import checks
from bot.settings.process.environment import (
    ENV_FILE_VARIABLE,
    REDIS_DEFAULT,
    reading,
    settings_values,
)
from bot.settings.process.model import ModelConfig
from bot.settings.process.names import unknown_settings
from bot.settings.process.problems import ConfigError, _Whole, describe
from bot.settings.process.sandbox import SandboxConfig, SandboxPolicy

MIN_WEBHOOK_SECRET = 16
"""The shortest webhook secret questbot starts with. GitHub's documentation asks for "a random
string of text with high entropy"; a short one is guessed, and the log redaction, which
replaces the secret wherever it appears, would blank every occurrence of a one-letter secret
in every log line. ``python -m bot register`` lets GitHub make one far longer."""


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
    public_url: str | None = Field(default=None, validation_alias="QUESTBOT_PUBLIC_URL")
    """The web process's address as reviewers reach it (``https://HOST``): where ``review
    request``'s prompt sends a reviewer's session."""
    compact_after_hours: float = Field(default=72,
                                       validation_alias="QUESTBOT_COMPACT_AFTER_HOURS")
    """Hours after a quest ends before its keys are compacted (``bot.journal.compaction``);
    0: never. A fraction is taken (``0.05``: three minutes) so that a soak of minutes
    (``scripts/soak.py``) compacts the quests it ends, as a deployment does over days; a
    deployment keeps it above GitHub's three days of redeliveries."""
    export_dir: Path | None = Field(default=None, validation_alias="QUESTBOT_EXPORT_DIR")
    """Where compacted records go beyond ``export_after_days`` (``bot.journal.export``)."""
    export_after_days: float = Field(default=30, validation_alias="QUESTBOT_EXPORT_AFTER_DAYS")
    """Days after a quest is compacted before its record is exported. A fraction is taken, as
    ``compact_after_hours`` takes one, so that a soak of minutes exports the quests it ends
    (``scripts/soak.py --export-after``); a deployment keeps it in days."""
    restorable_days: float = Field(default=90, validation_alias="QUESTBOT_RESTORABLE_DAYS")
    """Days a quest parked by its repository's deletion waits for the repository to be
    restored before it is abandoned (``bot.repository.restorable``): GitHub's 90 by default,
    as long as it lets an owner restore one."""
    restored_check_s: float = Field(default=600,
                                    validation_alias="QUESTBOT_RESTORED_CHECK_S")
    """Seconds between two looks on GitHub for a deleted repository restored with no event
    sent (an installation on all repositories: ``bot.repository.restorable``): at most one
    request per waiting repository a look, 50 at most, so at most ``50 * 3600 / this`` an
    hour (300 by default). From 60 (a minute) to 86,400 (a day)."""

    _private_key: SecretStr = PrivateAttr()
    _warnings: tuple[str, ...] = PrivateAttr(default=())

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
    def warnings(self) -> tuple[str, ...]:
        """What the process should say at start without refusing to: variables that look
        meant for questbot and that no setting reads (``names.unknown_settings``)."""
        return self._warnings

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
            checks.rsa_private_key(text)
        except ValueError:
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
            checks.rsa_private_key(data)
        except ValueError:
            raise ValueError("does not hold an RSA private key in PEM form") from None
        return path

    @field_validator("github_webhook_secret")
    @classmethod
    def _secret(cls, value: SecretStr) -> SecretStr:
        text = value.get_secret_value()
        if not text.strip():
            raise ValueError("is blank")
        if len(text) < MIN_WEBHOOK_SECRET:
            length = f"{len(text)} character{'s' if len(text) != 1 else ''}"
            raise ValueError(f"is {length} long; a webhook secret needs at least "
                             f"{MIN_WEBHOOK_SECRET} (a long random string, as GitHub advises: "
                             "python -c 'import secrets; print(secrets.token_hex(32))' makes "
                             "one), the same here and in the App's settings")
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

    @field_validator("public_url")
    @classmethod
    def _public_url(cls, value: str | None) -> str | None:
        return None if value is None else checks.http_url(value)

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

    @field_validator("compact_after_hours", mode="before")
    @classmethod
    def _compact_after(cls, value: object) -> float:
        hours = checks.decimal(value, 0, 87_600)
        if 0 < hours < 0.001:  # 3.6 s: a smaller value is a typo, not a choice
            raise ValueError("is below 0.001 hours (3.6 seconds); 0 turns compaction off")
        return hours

    @field_validator("export_after_days", mode="before")
    @classmethod
    def _export_after(cls, value: object) -> float:
        days = checks.decimal(value, 0, 36_500)
        if days < 0.0001:  # 8.6 s: a smaller value is a typo, not a choice
            raise ValueError("is below 0.0001 days (8.6 seconds); unset QUESTBOT_EXPORT_DIR "
                             "to keep records in Redis")
        return days

    @field_validator("restorable_days", mode="before")
    @classmethod
    def _restorable(cls, value: object) -> float:
        return checks.decimal(value, 0.001, 36_500)

    @field_validator("restored_check_s", mode="before")
    @classmethod
    def _restored_check(cls, value: object) -> float:
        return checks.decimal(value, 60, 86_400)

    @field_validator("export_dir")
    @classmethod
    def _export_dir(cls, path: Path | None) -> Path | None:
        if path is not None and not path.is_dir():
            raise ValueError("is not a directory; make it (every process that reads quests "
                             "must see it at this path), or unset it")
        return path

    @field_validator("redelivery_max", mode="before")
    @classmethod
    def _most(cls, value: object) -> int:
        return checks.whole(value, 1, 1000)


def load_config(environ: Mapping[str, str] | None = None, *,
                env_file: Path | None = None) -> Config:
    """The configuration ``environ`` (default: the process environment over ``./.env``)
    describes, or a ``ConfigError`` naming every variable that is missing or malformed, and
    every unreadable line of the file, with what to do. A given ``environ`` is read alone
    unless an ``env_file`` is given too."""
    values, origins, problems = settings_values(environ, env_file)
    try:
        with reading(values):
            config = Config()
    except ValidationError as exc:
        problems += [describe(error, values, origins) for error in exc.errors(include_url=False)]
    else:
        if not problems:
            config._warnings = tuple(unknown_settings(values, origins, setting_names()))
            return config
    raise ConfigError(problems) from None  # the ValidationError's text would quote secrets


def setting_names() -> list[str]:
    """Every variable questbot's processes read, in the order of the settings model (the
    README's table holds the same names: ``tests/settings/test_process_settings.py``)."""
    return [str(field.validation_alias) for field in Config.model_fields.values()] + [
        ENV_FILE_VARIABLE]


WEB_READS = frozenset({"GITHUB_WEBHOOK_SECRET", "GITHUB_PRIVATE_KEY", "GITHUB_PRIVATE_KEY_PATH",
                       "REDIS_URL", "PORT", "QUESTBOT_DURABLE_ACKS", ENV_FILE_VARIABLE})
"""What the web process uses (the key only to keep it out of its logs); it checks every
setting at start all the same, so a deployment is refused whole or not at all."""
NOT_THE_WORKERS = frozenset({"PORT", "QUESTBOT_PUBLIC_URL"})
"""The worker uses every other setting."""


def read_by(process: str) -> list[str]:
    """The settings ``process`` (``serve`` or ``worker``) uses, for its ``--help``."""
    names = setting_names()
    if process == "serve":
        return [name for name in names if name in WEB_READS]
    return [name for name in names if name not in NOT_THE_WORKERS]
