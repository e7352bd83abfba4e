"""The worker hands the C heap's free memory back to the system once a minute.

Why. A soak of a few hundred quests (``scripts/soak.py``, ``docs/performance.md``) showed the
workers' resident memory climbing with every quest that ended while the Python heap did not
(``tracemalloc`` flat after the warm-up). Part of it is memory glibc holds **free**
(``mallinfo2``): freed buffers over 512 bytes (the model's conversations, GitHub's and Redis's
answers, the sandbox's output, which CPython takes from ``malloc``) left between live ones,
which glibc gives back to the system only from the heap's top. ``malloc_trim(0)`` gives back
every free page wherever it lies (glibc 2.8+, ``MADV_DONTNEED``); it costs a walk of the
heap, milliseconds for a worker's, so once a minute is nothing. It was not what ended the
growth the soak measured — an HTTP client made for every model conversation was
(``bot.agent.model.steady.http_client``, ``docs/decisions.md``).

Elsewhere than glibc (musl, macOS) there is no ``malloc_trim`` and this does nothing.
"""

from __future__ import annotations

import asyncio
import ctypes
import ctypes.util
import logging
from collections.abc import Callable

from bot.runner.outage import pause

log = logging.getLogger(__name__)

TRIM_S = 60.0


def _malloc_trim() -> Callable[[int], int] | None:
    name = ctypes.util.find_library("c")
    if name is None:
        return None
    try:
        trim = ctypes.CDLL(name).malloc_trim
    except (OSError, AttributeError):
        return None
    trim.argtypes = [ctypes.c_size_t]
    trim.restype = ctypes.c_int
    return trim


MALLOC_TRIM = _malloc_trim()


def trim() -> bool:
    """Give the C heap's free pages back; whether any were (``False`` too without glibc)."""
    return bool(MALLOC_TRIM(0)) if MALLOC_TRIM is not None else False


async def trimming(stop: asyncio.Event, every_s: float = TRIM_S) -> None:
    """The worker's ``memory`` loop: ``trim`` every ``every_s`` until ``stop``."""
    if MALLOC_TRIM is None:
        log.debug("no malloc_trim here (not glibc); the C heap keeps its free memory")
        return
    while not stop.is_set():
        await pause(stop, every_s)
        trim()
