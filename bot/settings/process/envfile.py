"""The ``.env`` file: settings kept beside the code, read under the environment, written by
``python -m bot register``.

Reading. ``read_env_file`` parses the file with python-dotenv's parser (``NAME=value``,
``export NAME=value``, single or double quotes, ``#`` comments, values over several lines in
double quotes) and returns the values and the lines it could not read; ``bot.settings.process`` lays
the process environment over them — the environment wins — and reports the unreadable lines
with every other problem. Nothing is interpolated (``${OTHER}`` stays as written), and nothing
is put into ``os.environ``: the values reach ``Config`` only, so a child process (a proof, the
agent, git) never inherits a secret the file holds.

Writing. ``update_env_file`` replaces the lines of the names it is given, keeps every other
line as it was (comments, other settings) and appends the names that were not there, like
Probot's ``update-dotenv``; it drops the names it is told to (a key given as text would clash
with the key file ``register`` writes). The file is written to a temporary file beside it and
renamed over it, with mode 0600 from the start: it holds the webhook secret.
"""

from __future__ import annotations

import io
import os
import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from dotenv.parser import parse_stream

ENV_FILE = Path(".env")
"""Where ``python -m bot serve|worker|receive`` look for it: the working directory."""
_PLAIN = re.compile(r"[A-Za-z0-9_./:@+,-]*")


@dataclass(frozen=True)
class EnvFile:
    """What a ``.env`` file holds: ``values`` by name, and the problems of the lines that are
    not ``NAME=value`` (each with its line number and the fix)."""

    path: Path
    values: dict[str, str] = field(default_factory=dict)
    problems: tuple[str, ...] = ()


def read_env_file(path: Path) -> EnvFile:
    """The settings in ``path``; an absent file holds none. A file that exists and cannot be
    read is one problem, not an exception: it is reported with the others."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return EnvFile(path)
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        return EnvFile(path, problems=(f"{path} cannot be read ({reason}); fix its permissions "
                                       "or remove it",))
    values: dict[str, str] = {}
    problems: list[str] = []
    for binding in parse_stream(io.StringIO(text)):
        line = binding.original.line
        if binding.error:
            problems.append(f"{path} line {line} is not NAME=value; write it as NAME=value "
                            "(quote a value with spaces), or start it with # to keep it as "
                            "a comment")
        elif binding.key is not None and binding.value is not None:
            values[binding.key] = binding.value
    return EnvFile(path, values, tuple(problems))


def quote(value: str) -> str:
    """``value`` as a ``.env`` value python-dotenv reads back unchanged: as it is when it is
    plain, else in double quotes with backslashes, quotes and newlines escaped."""
    if _PLAIN.fullmatch(value):
        return value
    escaped = value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return f'"{escaped}"'


def update_env_file(path: Path, updates: Mapping[str, str],
                    remove: Collection[str] = ()) -> None:
    """Set ``updates`` in the file at ``path`` (created if absent) and drop the lines of the
    names in ``remove``, keeping everything else."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        text = ""
    lines: list[str] = []
    written: set[str] = set()
    for binding in parse_stream(io.StringIO(text)):
        original, key = binding.original.string, binding.key
        if key is not None and not binding.error:
            if key in remove and key not in updates:
                continue
            if key in updates:
                if key not in written:
                    lines.append(f"{key}={quote(updates[key])}\n")
                    written.add(key)
                continue  # a name set twice is set once, where it first was
        lines.append(original if original.endswith("\n") else original + "\n")
    lines += [f"{name}={quote(value)}\n" for name, value in updates.items()
              if name not in written]
    write_private(path, "".join(lines))


def write_private(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` readable and writable by its owner only (0600), atomically:
    a temporary file beside it, made 0600 before anything is written to it, renamed over it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8") as out:
            # O_CREAT's mode is cut by the umask, and ignored for a file already there
            os.fchmod(out.fileno(), 0o600)
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
