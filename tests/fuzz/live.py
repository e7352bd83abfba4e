"""A questbot app served on loopback from a thread of the test process, for clients that block.

schemathesis sends its requests with ``requests``, synchronously; an aiohttp app in the test's
own event loop would never get to answer them. So the app (and the Redis client it needs, which
belongs to one event loop) is built and served in a thread with its own loop, on a free port,
and stopped at the end of the test: still in-process, still the real app on the real Redis.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager

from aiohttp import web

from questbot_testing.stack import free_port

AppFactory = Callable[[], Awaitable[tuple[web.Application, Callable[[], Awaitable[None]]]]]
"""Builds the app in the serving loop; returns it and what closes its parts."""


@contextmanager
def serve(factory: AppFactory, *, timeout: float = 10.0) -> Iterator[str]:
    """Serve ``factory``'s app until the block ends; yields its base URL."""
    loop = asyncio.new_event_loop()
    port = free_port()
    ready = threading.Event()
    stop = asyncio.Event()
    failed: list[BaseException] = []

    async def run() -> None:
        try:
            app, close = await factory()
            runner = web.AppRunner(app, access_log=None)
            await runner.setup()
            await web.TCPSite(runner, "127.0.0.1", port).start()
        except BaseException as exc:  # reported in the test's thread
            failed.append(exc)
            ready.set()
            return
        ready.set()
        try:
            await stop.wait()
        finally:
            await runner.cleanup()
            await close()

    thread = threading.Thread(target=loop.run_until_complete, args=(run(),), daemon=True)
    thread.start()
    ready.wait(timeout)
    if failed:
        raise failed[0]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        loop.call_soon_threadsafe(stop.set)
        thread.join(timeout)
        loop.close()
