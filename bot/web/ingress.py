"""What the web process lets in, and how long it waits for it: a request's headers, then its
body.

aiohttp waits as long as a client likes. A client that sends a byte every half second — a
signed delivery's body, or a request's headers — held its connection and its handler open
indefinitely, and enough of them hold every connection the process can take. GitHub sends a
delivery at once and gives up after 10 seconds, so nothing it sends needs more than a few:

* **headers** must be complete within ``HEADER_DEADLINE_S`` of a connection opening, or of the
  first byte of a kept-alive connection's next request. ``Deadlined`` wraps aiohttp's
  per-connection protocol to time that: it starts the clock, and the app's first middleware
  (``header_deadline``, which runs once the headers are parsed) stops it. A connection that
  idles between requests is not timed here: that is aiohttp's keep-alive timeout
  (``KEEPALIVE_S``); nor is one still sending a body its answer did not wait for (a 413):
  aiohttp reads and discards that for ten seconds at most, then closes the connection;
* the **body** must be read within ``BODY_DEADLINE_S`` of the handler asking for it
  (``read_body``).

Either way the answer is ``408 Request Timeout`` with ``Connection: close``, and the
connection is closed once it is written: a client that does not finish in time is not
waited for any longer.

``serve`` runs an app the way ``python -m bot serve`` does, with the deadlines in place.
"""

from __future__ import annotations

import asyncio
import logging
import signal
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Final

import orjson
from aiohttp import web
from aiohttp.web_protocol import RequestHandler

from bot.errors import Refused

log = logging.getLogger(__name__)

HEADER_DEADLINE_S: Final = 5.0
BODY_DEADLINE_S: Final = 5.0
KEEPALIVE_S: Final = 75.0
"""How long a kept-alive connection may idle between requests (aiohttp's ``run_app``
default, longer than a load balancer's usual idle timeout of 60 s)."""


class BodyTimedOut(Refused):
    """The client did not send the request's body within ``BODY_DEADLINE_S``: answer 408."""


def _timed_out_body(what: str) -> bytes:
    return orjson.dumps({"status": "timed_out",
                         "detail": f"the request's {what} did not arrive within a few seconds; "
                                   "send it whole, promptly"})


def _timed_out_bytes(what: str) -> bytes:
    """A whole 408 response, for a connection no request was parsed on yet."""
    body = _timed_out_body(what)
    head = ("HTTP/1.1 408 Request Timeout\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n")
    return head.encode() + body


async def read_body(request: web.Request, deadline: float = BODY_DEADLINE_S) -> bytes:
    """The request's body, or ``BodyTimedOut`` when it did not arrive within ``deadline``."""
    try:
        async with asyncio.timeout(deadline):
            return await request.read()
    except TimeoutError:
        raise BodyTimedOut from None


async def timed_out(request: web.Request) -> web.Response:
    """Answer 408 and close the connection once the answer is written: the rest of a body that
    did not arrive in time is not waited for (aiohttp would read on, discarding it, for up to
    ten more seconds)."""
    response = web.Response(status=408, body=_timed_out_body("body"),
                            headers={"Content-Type": "application/json"})
    response.force_close()
    await response.prepare(request)
    await response.write_eof()
    request.protocol.force_close()  # the transport closes once what was written is sent
    return response


class Deadlined(asyncio.Protocol):
    """aiohttp's protocol for one connection, with a deadline on each request's headers."""

    def __init__(self, inner: RequestHandler, deadline: float = HEADER_DEADLINE_S) -> None:
        self.inner = inner
        self.deadline = deadline
        self.transport: asyncio.Transport | None = None
        self._timer: asyncio.TimerHandle | None = None
        self._state = "headers"
        """``headers`` (timed), ``request`` (its handler runs), ``idle`` (between requests),
        ``draining`` (the rest of a body no one waits for; aiohttp closes it)."""

    def _arm(self) -> None:
        self._disarm()
        self._state = "headers"
        self._timer = asyncio.get_running_loop().call_later(self.deadline, self._expired)

    def _disarm(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _expired(self) -> None:
        self._timer = None
        if self._state != "headers" or self.transport is None or self.transport.is_closing():
            return
        log.warning("closed a connection whose request headers did not arrive within %g s",
                    self.deadline, extra={"remote": self.transport.get_extra_info("peername")})
        self.transport.write(_timed_out_bytes("headers"))
        self.inner.force_close()  # closes the transport once the answer is sent

    def request_started(self) -> None:
        """The headers of a request are in: its body is ``read_body``'s to time."""
        self._disarm()
        self._state = "request"

    def request_done(self, *, body_read: bool) -> None:
        """Answered: idle until the next request's first byte — unless the answer did not
        wait for the whole body, whose rest is no request's headers."""
        self._state = "idle" if body_read else "draining"

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        self.inner.connection_made(transport)
        self._arm()

    def data_received(self, data: bytes) -> None:
        if self._state == "idle" and data:
            self._arm()
        self.inner.data_received(data)

    def eof_received(self) -> bool | None:
        self.inner.eof_received()
        return None

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        self.transport = None
        self.inner.connection_lost(exc)

    def pause_writing(self) -> None:
        self.inner.pause_writing()

    def resume_writing(self) -> None:
        self.inner.resume_writing()


@web.middleware
async def header_deadline(request: web.Request,
                          handler: Callable[[web.Request], Awaitable[web.StreamResponse]],
                          ) -> web.StreamResponse:
    """Tell the connection's ``Deadlined`` (when it has one) that a request is being served."""
    guard = request.transport.get_protocol() if request.transport is not None else None
    if not isinstance(guard, Deadlined):
        return await handler(request)
    guard.request_started()
    try:
        return await handler(request)
    finally:
        guard.request_done(body_read=request.content.is_eof())


@asynccontextmanager
async def serve(app: web.Application, host: str, port: int) -> AsyncIterator[web.AppRunner]:
    """``app`` listening on ``host:port`` with the deadlines above, until the block ends (then
    it is shut down as ``web.run_app`` would: requests in flight finish, cleanups run). The
    app needs ``header_deadline`` as its first middleware (``bot.web.app.make_app`` has it)."""
    runner = web.AppRunner(app, access_log=None, keepalive_timeout=KEEPALIVE_S)
    await runner.setup()
    server = runner.server
    assert server is not None
    listener = await asyncio.get_running_loop().create_server(
        lambda: Deadlined(server()), host, port, reuse_address=True)
    try:
        yield runner
    finally:
        listener.close()
        await runner.cleanup()


async def serve_until_stopped(app: web.Application, host: str, port: int) -> None:
    """Serve until SIGINT or SIGTERM (``python -m bot serve``)."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)
    async with serve(app, host, port):
        await stop.wait()
