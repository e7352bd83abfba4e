"""Reading and writing files below a directory without ever following a link.

The worker reads and writes a checkout that sandboxed code may be changing at the same moment:
a model's ``run_command`` and its file tools run side by side (pydantic-ai runs the tools of
one answer at once), and the command can swap a directory for a link to the worker's own
files between the moment a tool judged a path and the moment it opened it. Judging a path
(``bot.agent.validation.CheckoutView.resolve``) is therefore not enough; opening it must not
follow a link either.

``open_beneath`` opens a path relative to a root one component at a time, each with
``O_NOFOLLOW`` relative to the directory before it (``openat``), so a link anywhere on the
way — one that was there, or one swapped in after the path was judged — fails the open
(``ELOOP``/``ENOTDIR``) instead of leading out. Linux's ``openat2(RESOLVE_BENEATH)`` would do it
in one call; Python does not offer it, and this works on every kernel questbot runs on.

Only regular files are read or written (``O_NONBLOCK`` first, then ``fstat``): a FIFO made in
the checkout would otherwise hang the worker's thread on ``read``, a device could be endless.
"""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path, PurePosixPath

from bot.errors import Refused

_DIRECTORY = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


class NotBeneath(Refused, OSError):
    """The path holds a link, climbs out, or names something other than a regular file: refused
    (the model's path is bad input), and an ``OSError`` for the file tools that catch those."""


def _parts(relative: str | PurePosixPath) -> tuple[str, ...]:
    parts = PurePosixPath(relative).parts
    if not parts or PurePosixPath(relative).is_absolute() or ".." in parts:
        raise NotBeneath(f"{str(relative)!r} is not a path below the directory")
    return parts


def open_beneath(root: Path, relative: str | PurePosixPath, flags: int, *, mode: int = 0o644,
                 make_parents: bool = False) -> int:
    """A descriptor of ``root/relative`` opened with ``flags``, no link followed on the way
    or at the end; ``make_parents`` creates missing directories (never through a link).
    Raises ``OSError`` (``ELOOP``, ``ENOTDIR``, ``FileNotFoundError``…) when it cannot."""
    parts = _parts(relative)
    fd = os.open(root, _DIRECTORY)
    try:
        for part in parts[:-1]:
            try:
                step = os.open(part, _DIRECTORY, dir_fd=fd)
            except FileNotFoundError:
                if not make_parents:
                    raise
                with contextlib.suppress(FileExistsError):  # made meanwhile: judged below
                    os.mkdir(part, 0o755, dir_fd=fd)
                step = os.open(part, _DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = step
        return os.open(parts[-1], flags | os.O_NOFOLLOW | os.O_CLOEXEC, mode, dir_fd=fd)
    finally:
        os.close(fd)


def _regular(fd: int, relative: str | PurePosixPath) -> None:
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise NotBeneath(f"{str(relative)!r} is not a regular file")


def read_beneath(root: Path, relative: str | PurePosixPath, limit: int) -> bytes:
    """At most ``limit`` bytes of the regular file ``root/relative`` (no link followed)."""
    fd = open_beneath(root, relative, os.O_RDONLY | os.O_NONBLOCK)
    _regular(fd, relative)
    with os.fdopen(fd, "rb") as handle:
        return handle.read(limit)


def read_at(dir_fd: int, name: str, limit: int) -> bytes | None:
    """At most ``limit`` bytes of the regular file ``name`` in the directory ``dir_fd`` (as
    ``os.fwalk`` gives it); ``None`` when it is a link or anything but a regular file."""
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC,
                     dir_fd=dir_fd)
    except OSError:
        return None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        return None
    with os.fdopen(fd, "rb") as handle:
        return handle.read(limit)


def write_beneath(root: Path, relative: str | PurePosixPath, data: bytes) -> None:
    """Make ``root/relative`` a regular file holding ``data``, its missing directories too;
    a link on the way or at the end fails it, and so does anything but a regular file."""
    fd = open_beneath(root, relative, os.O_WRONLY | os.O_CREAT | os.O_NONBLOCK,
                      make_parents=True)
    _regular(fd, relative)
    with os.fdopen(fd, "wb") as handle:
        handle.truncate(0)
        handle.write(data)
