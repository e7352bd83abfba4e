"""A harness's run stopped by SIGTERM or SIGINT with every process it started stopped too.

``scripts/chaos.py`` and ``scripts/soak.py`` start Redis, the fake GitHub, web processes and
workers, and stop them in a ``finally``. A signal's default action would end the harness
without running it and leave those processes running on (a CI timeout, a ``kill``, Ctrl-C);
cancelling the run's task instead runs every ``finally`` on the way out.
"""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Awaitable, Callable
from typing import TypeVar

T = TypeVar("T")


async def until_signalled(work: Callable[[], Awaitable[T]]) -> T:
    """``work()``, cancelled by SIGTERM or SIGINT (``asyncio.CancelledError`` out of
    ``asyncio.run``), so that its ``finally`` blocks stop what it started."""
    task = asyncio.current_task()
    assert task is not None
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, task.cancel)
    return await work()
