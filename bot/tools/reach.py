"""What a command says when a service it needs does not answer, and how it ends when whoever
reads its output stops reading: one line, never a traceback.

Every command that touches Redis (``status``, ``replay --redis``, ``lessons``, ``review
request``) reaches it through ``bot.journal.wire.connect``; when nothing answers there, redis-py
raises its ``ConnectionError`` or ``TimeoutError`` from deep inside the first command, and a
person would read 75 lines of asyncio for "Redis is not running". ``bot.__main__.main`` catches
those around every command and prints ``unreachable_redis``'s one line instead, exit 2 as for
any input a command cannot use.

A closed pipe (``python -m bot replay … --json | head``) is the reader's choice, not an error:
Python's documentation (``signal``, "Note on SIGPIPE") says to point stdout at ``/dev/null``
so the interpreter's last flush finds nowhere to fail, and to exit 1, as the interpreter does.
"""

from __future__ import annotations

import os
import re
import sys

from bot.control_chars import one_line
from bot.settings.process.checks import shown_url

CLOSED_PIPE_EXIT = 1
"""What ``python`` itself exits with on a broken pipe (its documentation's own recipe)."""


_ERRNO = re.compile(r"Error (\d+) ")


def _reason(error: BaseException) -> str:
    """Why, in the system's words ("connection refused"), rather than redis-py's sentence
    with its error number and a tuple in it."""
    seen: BaseException | None = error
    while seen is not None:
        if isinstance(seen, TimeoutError) or type(seen).__name__ == "TimeoutError":
            return "it did not answer in time"
        if isinstance(seen, OSError) and seen.errno:
            return os.strerror(seen.errno).lower()
        seen = seen.__cause__ or seen.__context__
    number = _ERRNO.match(str(error))
    if number:
        return os.strerror(int(number.group(1))).lower()
    return one_line(str(error)) or type(error).__name__


def unreachable_redis(command: str, url: str, error: BaseException) -> str:
    """One line: which command, which Redis (its password hidden), why, and what to do."""
    reason = _reason(error)
    return (f"{command}: could not reach Redis at {shown_url(url)} ({reason}); start it, or "
            "point REDIS_URL (or --redis URL) at the Redis questbot uses")


def quiet_on_closed_pipe() -> int:
    """After a ``BrokenPipeError`` on stdout: send whatever is still buffered nowhere, so the
    interpreter's last flush does not print a second traceback, and return the exit status."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # stdout is no file descriptor (a test's capture): nothing to do
        pass
    return CLOSED_PIPE_EXIT
