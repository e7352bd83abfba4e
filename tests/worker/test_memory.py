"""The worker gives the C heap's free memory back to the system (``bot.worker.memory``): what
the soak showed workers keeping for every quest that ended was memory glibc held free between
live allocations, which only ``malloc_trim`` hands back."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from bot.worker import memory

needs_glibc = pytest.mark.skipif(memory.MALLOC_TRIM is None, reason="no malloc_trim: not glibc")


def rss() -> int:
    for line in Path(f"/proc/{os.getpid()}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


@needs_glibc
def test_free_memory_left_between_live_buffers_goes_back_to_the_system() -> None:
    """Buffers of 64 KB (from ``malloc``'s heap, under its mmap threshold), nine in ten freed:
    the heap cannot shrink past the live tenth, so the freed pages stay resident — until
    ``trim``. The same shape as a worker's: a quest's answers and conversations freed, a few
    long-lived objects allocated among them."""
    memory.trim()
    buffers = [bytearray(64 * 1024) for _ in range(1600)]  # ~100 MB, touched
    kept = buffers[9::10]
    del buffers
    before = rss()
    assert memory.trim()
    after = rss()
    assert before - after > 40 * 2**20, (before, after)
    assert len(kept) == 160


async def test_the_loop_trims_until_stopped() -> None:
    stop = asyncio.Event()
    loop = asyncio.create_task(memory.trimming(stop, every_s=0.01))
    await asyncio.sleep(0.05)
    assert not loop.done() or memory.MALLOC_TRIM is None
    stop.set()
    await asyncio.wait_for(loop, 1)
