"""How questbot talks to Redis: clients that ride out a restart, and many commands sent in one
write without redis-py's per-command cost.

``connect(url, ...)`` is how a long-lived process should build its client. redis-py's
``Redis.from_url`` retries nothing unless told to, so after a restart or failover the first
command on each pooled connection — which the server closed — fails, and a web process
answering GitHub would answer that delivery 503 although Redis is back (GitHub never retries a
503 by itself). ``connect`` gives every connection a ``Retry``: a connection error or timeout
closes the connection and the command is sent again on a new one, after an exponential
back-off (100 ms doubling to 1 s, five retries: about 2.5 s before the error is raised while
Redis stays away). ``on_error`` and
``on_reconnect`` hear of each error and of each command that succeeded after errors, for the
metrics. Resending is safe for what the web process sends — the inbound script answers a
delivery it already stored as a duplicate — and for the journal's batches (below); a caller
sending a command that is not safe twice must build its own client.

A redis-py pipeline spends about 20 µs of Python on each command: every argument goes
through its encoder, every reply through a parse step with its own socket-timeout timer and a
response callback — as much as the rest of a journal apply. ``Batch`` packs the request (RESP
arrays of bulk strings) straight from ``bytes``, ``str`` and ``int``, writes it on one pooled
connection and reads the replies in order under one timeout for the whole batch (the
connection's ``socket_timeout``; each read is told ``timeout=math.inf`` so that it does not arm
a timer of its own). Replies come back as the server sent them (bytes, ints, lists; strings if
the client decodes responses), and error replies are returned in place, like
``Pipeline.execute(raise_on_error=False)``. About 7 µs of CPU per apply-sized command.

A connection error is retried by the connection's own ``Retry`` policy (a client from
``connect`` has one; redis-py's default has none, and then the error is raised at once), which
resends the whole batch — safe for every command the journal batches: the apply script answers
a second copy of itself with ``dup``, and the index and doorbell writes are idempotent or
harmless twice. A client with no connection pool (a cluster client) gets a plain redis-py
pipeline instead.
"""

from __future__ import annotations

import asyncio
import copy
import inspect
import math
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar
from urllib.parse import urlsplit, urlunsplit

import redis.asyncio
from redis.asyncio.cluster import ClusterNode
from redis.asyncio.connection import Connection
from redis.asyncio.retry import Retry
from redis.backoff import AbstractBackoff, ExponentialBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import ResponseError
from redis.exceptions import TimeoutError as RedisTimeoutError

from bot.journal import cluster

Arg = bytes | str | int
T = TypeVar("T")

RedisClient = redis.asyncio.Redis | redis.asyncio.RedisCluster
"""What every store takes: one Redis, or a Redis Cluster (``connect`` with a
``redis+cluster://`` URL). Every script and ``MULTI`` the stores send touches one slot."""

CLUSTER_SCHEMES = {"redis+cluster": "redis", "rediss+cluster": "rediss"}

RETRIES = 5
BACKOFF_BASE_S = 0.05
BACKOFF_CAP_S = 1.0
CONNECT_TIMEOUT_S = 2.0


class CountingRetry(Retry):
    """redis-py's ``Retry`` on connection errors and timeouts, telling ``on_error`` of each
    error and ``on_reconnect`` of each call that succeeded after one.

    redis-py gives every connection a deep copy of the client's policy; the copies share the
    two callbacks (a deep copy of a bound method would copy the object it is bound to).
    """

    def __init__(self, backoff: AbstractBackoff, retries: int, *,
                 on_error: Callable[[], None] | None = None,
                 on_reconnect: Callable[[], None] | None = None) -> None:
        super().__init__(backoff, retries, (RedisConnectionError, RedisTimeoutError))
        self.on_error = on_error
        self.on_reconnect = on_reconnect

    def __deepcopy__(self, memo: dict[int, Any]) -> CountingRetry:
        twin = CountingRetry(copy.deepcopy(self._backoff, memo), self._retries,
                             on_error=self.on_error, on_reconnect=self.on_reconnect)
        twin._supported_errors = self._supported_errors
        return twin

    async def call_with_retry(self, do: Callable[[], Awaitable[T]], fail: Callable[..., Any],
                              is_retryable: Callable[[Exception], bool] | None = None,
                              with_failure_count: bool = False) -> T:
        errors = 0

        async def failed(error: Exception, *count: int) -> None:
            nonlocal errors
            errors += 1
            if self.on_error is not None:
                self.on_error()
            outcome = fail(error, *count)
            if inspect.isawaitable(outcome):
                await outcome

        result = await super().call_with_retry(do, failed, is_retryable, with_failure_count)
        if errors and self.on_reconnect is not None:
            self.on_reconnect()
        return result


def connect(url: str, *, socket_timeout: float, retries: int = RETRIES,
            connect_timeout: float = CONNECT_TIMEOUT_S, health_check_interval: int = 30,
            on_error: Callable[[], None] | None = None,
            on_reconnect: Callable[[], None] | None = None) -> RedisClient:
    """A client for ``url`` whose every command rides out a Redis restart (module docstring).
    ``socket_timeout`` must be longer than any blocking read the caller makes.

    ``redis+cluster://host:port[,host:port…]`` (or ``rediss+cluster://``) names nodes of a
    Redis Cluster: the client starts from whichever answers, learns the others and follows the
    slots as they move — name several, so a process (re)started while one is down still finds
    the cluster. The cluster client re-reads the slot map and resends, up to ``retries``
    times, a command that met a dead or demoted master (redis-py gives the node connections
    no retries of their own)."""
    retry = CountingRetry(ExponentialBackoff(cap=BACKOFF_CAP_S, base=BACKOFF_BASE_S), retries,
                          on_error=on_error, on_reconnect=on_reconnect)
    if is_cluster_url(url):
        plain, nodes = cluster_startup(url)
        return cluster.ClusterClient.from_url(
            plain, startup_nodes=nodes, socket_connect_timeout=connect_timeout,
            socket_timeout=socket_timeout, health_check_interval=health_check_interval,
            retry=retry, retry_on_error=[RedisConnectionError, RedisTimeoutError])
    return redis.asyncio.Redis.from_url(
        url, socket_connect_timeout=connect_timeout, socket_timeout=socket_timeout,
        health_check_interval=health_check_interval, retry=retry,
        retry_on_error=[RedisConnectionError, RedisTimeoutError])


def is_cluster_url(url: str) -> bool:
    """``redis+cluster://`` or ``rediss+cluster://``: a Redis Cluster, not one server."""
    return url.partition("://")[0].lower() in CLUSTER_SCHEMES


def plain_client(url: str) -> RedisClient:
    """A client with redis-py's defaults (no retries) for one-shot tools — the replay CLI,
    benchmarks, tests — on one Redis or, for a ``redis+cluster://`` URL, a cluster."""
    if is_cluster_url(url):
        plain, nodes = cluster_startup(url)
        return cluster.ClusterClient.from_url(plain, startup_nodes=nodes)
    return redis.asyncio.Redis.from_url(url)


def cluster_nodes(url: str) -> list[tuple[str, int]]:
    """The ``host:port`` pairs of a ``redis+cluster://`` URL (port 6379 when left out)."""
    netloc = url.partition("://")[2].partition("/")[0].rpartition("@")[2]
    nodes = []
    for node in netloc.split(","):
        host, _, port = node.rpartition(":") if ":" in node else (node, "", "6379")
        nodes.append((host.strip("[]"), int(port)))
    return nodes


def cluster_startup(url: str) -> tuple[str, list[ClusterNode]]:
    """A plain ``redis://`` URL of the first node (credentials, TLS and options kept) for
    redis-py, and every node named, to start from."""
    parts = urlsplit(url)
    nodes = cluster_nodes(url)
    user = parts.netloc.rpartition("@")[0]
    host, port = nodes[0]
    first = f"{user}@{host}:{port}" if user else f"{host}:{port}"
    plain = urlunsplit(parts._replace(scheme=CLUSTER_SCHEMES[parts.scheme.lower()],
                                      netloc=first))
    return plain, [ClusterNode(h, p) for h, p in nodes[1:]]


def _bulk(args: Sequence[Arg], out: list[bytes]) -> None:
    """Append ``args`` as RESP bulk strings, in pieces to be joined with CRLF."""
    add = out.append
    for arg in args:
        if isinstance(arg, str):
            data = arg.encode()
        elif isinstance(arg, bytes):
            data = arg
        elif isinstance(arg, int) and not isinstance(arg, bool):
            data = b"%d" % arg
        else:
            raise TypeError(f"cannot send {type(arg).__name__} {arg!r} to redis; "
                            "pass bytes, str or int")
        add(b"$%d" % len(data))
        add(data)


@dataclass(frozen=True, slots=True)
class Head:
    """Leading arguments packed once for many commands: a script call's ``EVALSHA``, SHA,
    key count and keys are the same for every apply to one quest."""

    args: tuple[Arg, ...]
    packed: bytes

    @classmethod
    def of(cls, *args: Arg) -> Head:
        pieces: list[bytes] = []
        _bulk(args, pieces)
        return cls(args, b"\r\n".join(pieces))


NO_HEAD = Head((), b"")
Command = tuple[Head, tuple[Arg, ...]]


def pack(commands: Sequence[Command]) -> bytes:
    """The RESP request for ``commands``: each an array of bulk strings."""
    out: list[bytes] = []
    for head, args in commands:
        out.append(b"*%d" % (len(head.args) + len(args)))
        if head.args:
            out.append(head.packed)
        _bulk(args, out)
    out.append(b"")
    return b"\r\n".join(out)


class Batch:
    """Commands to send together; ``execute`` returns their replies in order."""

    __slots__ = ("commands",)

    def __init__(self) -> None:
        self.commands: list[Command] = []

    def __len__(self) -> int:
        return len(self.commands)

    def add(self, *args: Arg) -> None:
        self.commands.append((NO_HEAD, args))

    def call(self, head: Head, *args: Arg) -> None:
        """A command whose leading arguments were packed before (``Head.of``)."""
        self.commands.append((head, args))

    async def execute(self, client: RedisClient) -> list[Any]:
        if not self.commands:
            return []
        if isinstance(client, redis.asyncio.RedisCluster):
            return await cluster.execute(client, self.commands)
        pool = getattr(client, "connection_pool", None)
        if pool is None:
            pipe = client.pipeline(transaction=False)
            for head, args in self.commands:
                pipe.execute_command(*head.args, *args)
            return list(await pipe.execute(raise_on_error=False))
        request = pack(self.commands)
        conn: Connection = await pool.get_connection()
        try:
            return list(await conn.retry.call_with_retry(
                lambda: _send(conn, request, len(self.commands)),
                lambda _error: conn.disconnect()))
        finally:
            await pool.release(conn)


async def _send(conn: Connection, request: bytes, count: int) -> list[Any]:
    await conn.send_packed_command(request)
    replies: list[Any] = []
    try:
        async with asyncio.timeout(conn.socket_timeout):
            for _ in range(count):
                try:
                    replies.append(await conn.read_response(timeout=math.inf))
                except ResponseError as exc:
                    replies.append(exc)
    except TimeoutError as exc:
        await conn.disconnect(nowait=True)
        raise RedisTimeoutError(f"redis did not answer {count} commands within "
                                f"{conn.socket_timeout} s") from exc
    except BaseException:
        await conn.disconnect(nowait=True)
        raise
    return replies


def text(value: Any) -> str:
    """A reply value as text, whether the client decodes replies or not."""
    return value.decode() if isinstance(value, bytes) else str(value)


def stream_rows(rows: Any) -> list[tuple[str, dict[str, Any]]]:
    """Stream entries as ``(entry id, {field name: raw value})`` whatever the client decodes."""
    return [(text(entry_id), {text(k): v for k, v in (fields or {}).items()})
            for entry_id, fields in rows or ()]


ATOMIC = """
-- KEYS: every key the commands touch (one slot); ARGV: each command as its length, then it
local out, i = {}, 1
while i <= #ARGV do
  local n = tonumber(ARGV[i])
  out[#out + 1] = redis.call(unpack(ARGV, i + 1, i + n))
  i = i + n + 1
end
return out
"""


async def atomic(client: RedisClient, keys: Sequence[str],
                 *commands: Sequence[Arg]) -> list[Any]:
    """Write ``commands`` all or nothing, as ``MULTI``/``EXEC`` would, as one Lua script over
    ``keys`` (which must share a slot). A script and not ``MULTI``: redis-py 8.1's cluster
    transactions hand a closed client's connection to the next client (a transaction after
    another client's ``aclose`` fails with "Event loop is closed"), and a script is one
    command that routes by its keys on one Redis and a cluster alike. Each reply is the
    command's (integers and strings; a nil reply would cut the list short, so send writes)."""
    args: list[Arg] = []
    for command in commands:
        args += [len(command), *command]
    return list(await client.eval(ATOMIC, len(keys), *keys, *args))
