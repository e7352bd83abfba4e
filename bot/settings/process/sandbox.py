"""How repository code runs: the ``QUESTBOT_SANDBOX*`` settings (a part of
``bot.settings.process``).

| variable | default | |
|---|---|---|
| ``QUESTBOT_SANDBOX`` | ``bubblewrap`` | ``unsafe-off`` runs repository code unconfined |
| ``QUESTBOT_SANDBOX_READONLY`` | none | extra read-only directories for checks (``:``-separated) |
| ``QUESTBOT_SANDBOX_MEMORY_MB`` | ``4096`` | address-space limit of each sandboxed command |
| ``QUESTBOT_SANDBOX_PROCESSES`` | ``1024`` | processes and threads of each sandboxed command |

``Config`` reads them with the rest; they are also read alone (``load_sandbox_config``), by
``python -m bot proof``, which needs no App.

The policy they describe (``SandboxPolicy``, ``SandboxMode``) is a plain value defined here, at
the bottom of the house, and used by ``bot.agent.sandbox``, which runs commands under it: the
settings import nothing above them.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from pydantic import Field, ValidationError, field_validator

from bot.settings.process.environment import Environment, reading
from bot.settings.process.problems import ConfigError, describe

MIN_PROCESSES = 16
"""Below this a check's own shell and runner would not start."""
MIB = 1024 * 1024
DEFAULT_MEMORY_BYTES = 4096 * MIB
DEFAULT_FILE_BYTES = 1024 * MIB
DEFAULT_TMP_BYTES = 512 * MIB
DEFAULT_PROCESSES = 1024
"""Processes and threads one command may have at once: a parallel build or test run stays
well below it, a fork bomb meets it."""


class SandboxMode(StrEnum):
    BUBBLEWRAP = "bubblewrap"
    """Repository code and agents run under bubblewrap; where it cannot run, they do not run."""
    UNSAFE_OFF = "unsafe-off"
    """An operator's explicit opt-out: everything runs unconfined, as the worker's user."""


@dataclass(frozen=True, slots=True)
class SandboxPolicy:
    """How every confined command of this process runs (the worker builds it from its config)."""

    mode: SandboxMode = SandboxMode.BUBBLEWRAP
    readonly: tuple[Path, ...] = ()
    """Extra read-only directories (toolchains); each one's ``bin`` goes on ``PATH``."""
    secrets: tuple[Path, ...] = ()
    """Files that must never be visible inside, even under a directory that is (the App key)."""
    memory_bytes: int = DEFAULT_MEMORY_BYTES
    file_bytes: int = DEFAULT_FILE_BYTES
    processes: int = DEFAULT_PROCESSES
    """Processes and threads at once, the sandbox's first process (bubblewrap's) included."""
    tmp_bytes: int = DEFAULT_TMP_BYTES
    bwrap: str = "bwrap"

    @property
    def confined(self) -> bool:
        return self.mode is SandboxMode.BUBBLEWRAP




class SandboxConfig(Environment):
    """How repository code runs (``bot.agent.sandbox``); the one opt-out says it is unsafe."""

    sandbox: SandboxMode = Field(default=SandboxMode.BUBBLEWRAP,
                                 validation_alias="QUESTBOT_SANDBOX")
    sandbox_readonly: tuple[Path, ...] = Field(default=(),
                                               validation_alias="QUESTBOT_SANDBOX_READONLY")
    sandbox_memory_mb: int = Field(default=4096, validation_alias="QUESTBOT_SANDBOX_MEMORY_MB")
    sandbox_processes: int = Field(default=DEFAULT_PROCESSES,
                                   validation_alias="QUESTBOT_SANDBOX_PROCESSES")

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

    @field_validator("sandbox_processes", mode="before")
    @classmethod
    def _processes(cls, value: object) -> int:
        text = str(value).strip()
        if not text.isdigit() or int(text) < MIN_PROCESSES:
            raise ValueError(f"is not a whole number of at least {MIN_PROCESSES} (a check's "
                             "processes and threads at once)")
        return int(text)

    def sandbox_policy(self, secrets: tuple[Path, ...] = ()) -> SandboxPolicy:
        """The policy this configuration describes; ``secrets`` are never visible inside."""
        return SandboxPolicy(mode=self.sandbox, readonly=self.sandbox_readonly,
                             secrets=secrets, memory_bytes=self.sandbox_memory_mb * 1024 * 1024,
                             processes=self.sandbox_processes)


def load_sandbox_config(environ: Mapping[str, str] | None = None) -> SandboxConfig:
    """The ``QUESTBOT_SANDBOX*`` settings alone (for commands that need no App), or a
    ``ConfigError`` naming each one that is malformed."""
    environ = os.environ if environ is None else environ
    try:
        with reading(environ):
            return SandboxConfig()
    except ValidationError as exc:
        problems = [describe(error, environ, {}) for error in exc.errors(include_url=False)]
    raise ConfigError(problems) from None
