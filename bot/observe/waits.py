"""Time an effect spent waiting its turn at GitHub, told to whoever times the effect.

The worker times each adapter call (``bot.worker.process.Timings``) and the demo splits its
time into the agent's, the proof's, pacing and questbot's own. An agent run pushes its commits
through the paced client, so without this its pacing would be counted twice — once as the
agent's time and once as pacing. ``timing()`` opens a tally for the call (a context variable,
so the tasks the call starts share it) and ``waited`` adds to it from wherever the wait is.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

_TALLY: ContextVar[list[float] | None] = ContextVar("questbot_waits", default=None)


@contextmanager
def timing() -> Iterator[list[float]]:
    """A tally of the seconds waited inside the block: its one element."""
    tally = [0.0]
    token = _TALLY.set(tally)
    try:
        yield tally
    finally:
        _TALLY.reset(token)


def waited(seconds: float) -> None:
    tally = _TALLY.get()
    if tally is not None:
        tally[0] += seconds
