"""Group commit: concurrent writers' small writes batched into one round trip.

Many webhook deliveries arrive at once, and each must be on disk before it is answered. One
Redis round trip (and one fsync, with ``appendfsync always``) per delivery would bound the web
process by the disk; ``GroupCommit`` gathers whatever was submitted while the previous batch
was on the wire and flushes it as one, so the cost of a flush is shared by everyone waiting
for it. ``bot.runner.inbound`` explains the atomicity and durability this gives a delivery.
"""

from __future__ import annotations

import asyncio
import contextvars
from collections import deque
from collections.abc import Awaitable, Callable, Sequence
from typing import Generic, TypeVar

MAX_BATCH = 256
MAX_BATCH_BYTES = 8 * 1024 * 1024


T = TypeVar("T")
R = TypeVar("R")


class GroupCommit(Generic[T, R]):
    """Batches concurrent ``submit`` calls into calls of ``flush(items) -> results``.

    ``flush`` gets up to ``max_items`` items (and about ``max_bytes`` of them, by ``size``;
    never fewer than one) and returns one result per item, in order. One flush runs at a
    time; items submitted meanwhile wait for the next, which starts no sooner than
    ``min_interval_s`` after the previous one started (unless a full batch waits). If
    ``flush`` raises, every item of that batch gets the exception. A cancelled caller's item
    is still flushed (it may already be on the wire); only its answer is dropped.
    """

    def __init__(
        self,
        flush: Callable[[list[T]], Awaitable[Sequence[R]]],
        *,
        size: Callable[[T], int] = lambda _: 0,
        max_items: int = MAX_BATCH,
        max_bytes: int = MAX_BATCH_BYTES,
        on_batch: Callable[[int], None] | None = None,
        min_interval_s: float = 0.0,
    ) -> None:
        self._flush = flush
        self._min_interval = min_interval_s
        self._size = size
        self._max_items = max_items
        self._max_bytes = max_bytes
        self._on_batch = on_batch
        self._queue: deque[tuple[T, asyncio.Future[R]]] = deque()
        self._task: asyncio.Task[None] | None = None
        self._last_start = float("-inf")

    async def submit(self, item: T) -> R:
        future: asyncio.Future[R] = asyncio.get_running_loop().create_future()
        self._queue.append((item, future))
        if self._task is None:
            # Started, not awaited: callers that resume in this same loop iteration append
            # to the queue before the task first runs, and so join its first batch.
            # In a fresh context: it serves every caller, not the one whose log context
            # (``bot.observe.logs.bind``) happens to be current when it starts.
            self._task = asyncio.create_task(self._drain(), context=contextvars.Context())
        return await future

    async def close(self) -> None:
        """Wait for the batches already submitted to be flushed."""
        while self._task is not None:
            await asyncio.shield(self._task)

    def _take(self) -> list[tuple[T, asyncio.Future[R]]]:
        batch = [self._queue.popleft()]
        total = self._size(batch[0][0])
        while self._queue and len(batch) < self._max_items:
            total += self._size(self._queue[0][0])
            if total > self._max_bytes:
                break
            batch.append(self._queue.popleft())
        return batch

    async def _drain(self) -> None:
        loop = asyncio.get_running_loop()
        try:
            while self._queue:
                wait = self._last_start + self._min_interval - loop.time()
                if wait > 0 and len(self._queue) < self._max_items:
                    await asyncio.sleep(wait)
                self._last_start = loop.time()
                batch = self._take()
                if self._on_batch is not None:
                    self._on_batch(len(batch))
                try:
                    results = await self._flush([item for item, _ in batch])
                except BaseException as exc:
                    for _, future in batch:
                        if not future.done():
                            future.set_exception(exc)
                    if not isinstance(exc, Exception):
                        raise
                    continue
                for (_, future), result in zip(batch, results, strict=True):
                    if not future.done():
                        future.set_result(result)
        finally:
            self._task = None
            while self._queue:  # only on cancellation: nobody may wait forever
                _, future = self._queue.popleft()
                if not future.done():
                    future.cancel()
