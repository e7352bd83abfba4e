"""Where the configuration's values come from: the environment laid over ``.env`` (a part of
``bot.settings.process``).

``.env``. Without an explicit environment (``python -m bot serve|worker|receive``), the values
of ``./.env`` (or of the file ``QUESTBOT_ENV_FILE`` names) lie under the process environment:
a variable set in the environment wins over the file (``bot.settings.process.envfile`` reads
it, and puts nothing into ``os.environ``). The two private-key variables are one setting: if the
environment sets either, neither is taken from the file. An empty variable counts as unset.

The settings classes read their variables from the mapping ``reading`` names (``os.environ``
unless one is given), never from ``.env`` files of their own: ``settings_values`` has merged
the file already, and a test's environment is read without touching the process's.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Any

from pydantic.fields import FieldInfo
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

from bot.settings.process.envfile import ENV_FILE, read_env_file

_KEY_VARIABLES = ("GITHUB_PRIVATE_KEY", "GITHUB_PRIVATE_KEY_PATH")
ENV_FILE_VARIABLE = "QUESTBOT_ENV_FILE"
REDIS_DEFAULT = "redis://127.0.0.1:6379/0"

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


class Environment(BaseSettings):
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


@contextmanager
def reading(environ: Mapping[str, str]) -> Iterator[None]:
    """Within this block, ``Environment`` classes read their variables from ``environ``."""
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
