"""What questbot needs of redis-py's Redis Cluster client beyond its own: a batch split by node
with its ``WAIT`` sent to each master written (``execute``), and a client that survives a
race in redis-py 8.1 (``ClusterClient``).

The race, found with ``tests/journal/test_pacing.py`` on the cluster: commands sent at once
on a client that has not read its slot map yet (a fresh client, or one that must read it again
after a failover) all initialise it; redis-py lets them through one by one while the
disconnects of the replaced nodes' idle connections run in a background task, and they end up
sharing connections — a reply read by the wrong command (20 concurrent pacing scripts took
duplicate and skipped slots), or ``AttributeError: 'NoneType' object has no attribute
'writelines'`` from a socket closed under a command. ``ClusterClient`` reads the slot map
first, under a lock that also waits for those disconnects, before any command goes out; with
that, the same 20 scripts take 20 distinct slots every time. Should the ``AttributeError``
still occur (a topology change while commands are in flight), the command is sent again —
at least once, as redis-py's own resend after a connection error is — and a pipeline raises
``ConnectionError``, which its callers already wait out.

Reconnects, for the metrics. On one Redis the connection's ``Retry`` tells ``on_error`` and
``on_reconnect`` (``wire.CountingRetry``); a cluster client's node connections get no retries
of their own (redis-py gives them none: the client re-reads the slot map and sends again),
so ``ClusterClient`` counts at that level: ``on_error`` for each attempt of a command or
pipeline that met a connection error or timeout, ``on_reconnect`` for each command or
pipeline that then succeeded — the same two series, whichever Redis the process runs on.
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar

import redis.asyncio
from redis.asyncio.cluster import ClusterPipeline
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

RACE_RETRIES = 5
RACE_BACKOFF_S = 0.05
T = TypeVar("T")

_failed: contextvars.ContextVar[list[int] | None] = contextvars.ContextVar(
    "questbot_cluster_failed", default=None)
"""The attempts of the command or pipeline in hand that met a connection error (a list, so
that tasks redis-py starts for it, each with a copy of the context, add to the same one)."""


def _torn(exc: AttributeError) -> bool:
    """The race above: a connection's socket taken away while it was in use."""
    return "NoneType" in str(exc)


class ClusterClient(redis.asyncio.RedisCluster):
    """``RedisCluster`` that sends a command again when redis-py's own race tore its
    connection down (module docstring)."""

    def _hook(self, name: str) -> Callable[[], None] | None:
        hook: Callable[[], None] | None = getattr(getattr(self, "retry", None), name, None)
        return hook

    def _attempt_failed(self) -> None:
        failed = _failed.get()
        if failed is not None:
            failed.append(1)
        on_error = self._hook("on_error")
        if on_error is not None:
            on_error()

    async def _counted(self, call: Callable[[], Awaitable[T]]) -> T:
        """``call``, telling ``on_reconnect`` when it succeeded after failed attempts."""
        failed: list[int] = []
        token = _failed.set(failed)
        try:
            result = await call()
        finally:
            _failed.reset(token)
        on_reconnect = self._hook("on_reconnect")
        if failed and on_reconnect is not None:
            on_reconnect()
        return result

    async def _execute_command(self, target_node: Any, *args: Any, **kwargs: Any) -> Any:
        """One attempt of a command (redis-py's loop makes them)."""
        try:
            return await super()._execute_command(target_node, *args, **kwargs)
        except (RedisConnectionError, RedisTimeoutError):
            self._attempt_failed()
            raise

    async def execute_command(self, *args: Any, **kwargs: Any) -> Any:
        return await self._counted(lambda: self._execute_resent(*args, **kwargs))

    async def _execute_resent(self, *args: Any, **kwargs: Any) -> Any:
        if getattr(self, "_initialize", False):  # first use, or after a topology change
            await self.initialize()
        for attempt in range(RACE_RETRIES + 1):
            try:
                return await super().execute_command(*args, **kwargs)
            except AttributeError as exc:
                if not _torn(exc):
                    raise
                if attempt == RACE_RETRIES:
                    raise RedisConnectionError(f"connection torn down under {args[0]!r} "
                                               f"{RACE_RETRIES + 1} times") from exc
                await asyncio.sleep(RACE_BACKOFF_S * 2 ** attempt)
        raise AssertionError("unreachable")

    async def initialize(self, *args: Any, **kwargs: Any) -> ClusterClient:
        """Read the slot map, then let redis-py's background disconnects of the replaced
        nodes' idle connections finish before any command can take one of them."""
        lock = self.__dict__.setdefault("_questbot_init", asyncio.Lock())
        async with lock:  # the others wait here until the disconnects are done
            await super().initialize(*args, **kwargs)
            pending = list(getattr(self.nodes_manager, "_background_tasks", ()))
            if pending:
                await asyncio.gather(*pending, return_exceptions=True)
        return self

    def pipeline(self, transaction: Any | None = None,
                 shard_hint: Any | None = None) -> ClusterPipeline:
        if shard_hint:
            raise redis.exceptions.RedisClusterException("shard_hint is not supported")
        return _Pipeline(self, transaction)  # type: ignore[abstract]  # as redis-py does


class _Pipeline(ClusterPipeline):
    def __init__(self, client: ClusterClient, transaction: Any | None = None) -> None:
        super().__init__(client, transaction)
        self._questbot_client = client
        strategy = self._execution_strategy
        attempt = getattr(strategy, "_execute", None)  # one attempt of redis-py's loop
        if attempt is None:  # a transaction: its attempts go uncounted
            return

        async def counted(*args: Any, **kwargs: Any) -> list[Any]:
            try:
                replies: list[Any] = await attempt(*args, **kwargs)
            except (RedisConnectionError, RedisTimeoutError):
                client._attempt_failed()
                raise
            return replies

        strategy._execute = counted  # type: ignore[attr-defined]

    async def execute(self, raise_on_error: bool = True,
                      allow_redirections: bool = True) -> list[Any]:
        return await self._questbot_client._counted(
            lambda: self._execute_torn(raise_on_error, allow_redirections))

    async def _execute_torn(self, raise_on_error: bool, allow_redirections: bool) -> list[Any]:
        try:
            return await super().execute(raise_on_error, allow_redirections)
        except AttributeError as exc:
            if not _torn(exc):
                raise
            raise RedisConnectionError("a pipeline's connection was torn down under it "
                                       "(redis-py's reconnect race); send it again") from exc


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


WAITS = frozenset({"WAIT", "WAITAOF"})
"""Commands that wait for the writes sent before them on the same connection."""


async def execute(client: redis.asyncio.RedisCluster,
                  commands: Sequence[tuple[Any, Sequence[Any]]]) -> list[Any]:
    """A batch on a Redis Cluster: redis-py's cluster pipeline splits it by node (one
    connection each, the commands of a node in order) and follows ``MOVED``. A ``WAIT`` or
    ``WAITAOF`` holds for the writes sent before it on its own connection, so it is sent to
    every master the batch wrote to, after that master's commands; its reply is the least
    any master gave (or the first error): "every write of the batch reached that many".

    A write redirected (the slot map was stale: a failover, a slot moved) went out on another
    connection, which no ``WAIT`` of the batch covers, and the ``WAIT`` may have gone to a
    master since demoted. Then the slot map is read again and the batch sent once more —
    every command questbot batches is safe twice — with a write of its own before each
    ``WAIT`` (``SET {<tag>}:wait``, a key of the same slot, expiring): the replication stream
    is ordered, so a replica that has it has the redirected write too."""
    replies, redirected = await _execute(client, commands, marked=False)
    if not redirected:
        return replies
    await client.nodes_manager.initialize()
    replies, _ = await _execute(client, commands, marked=True)
    return replies


async def _execute(client: redis.asyncio.RedisCluster,
                   commands: Sequence[tuple[Any, Sequence[Any]]], *,
                   marked: bool) -> tuple[list[Any], bool]:
    """The replies, and whether a wait's coverage was lost to a redirect."""
    await client.initialize()  # the slot map, on a client's first command
    pipe = client.pipeline(transaction=False)
    written: dict[str, tuple[Any, str]] = {}  # node name -> (node, a key written there)
    keys: list[str] = []
    fanned: list[tuple[int, int, int]] = []  # (position, copies sent, commands a copy)
    queued = 0
    for head, args in commands:
        full = (*head.args, *args)  # head: a wire.Head
        name = _text(full[0]).upper()
        if name in WAITS:
            nodes = list(written.values()) or [(client.get_default_node(), "")]
            for node, where in nodes:
                if marked and where:
                    pipe.execute_command("SET", _marker(where), 1, "PX", 60_000,
                                         target_nodes=node)
                pipe.execute_command(*full, target_nodes=node)
            per = 2 if marked and nodes[0][1] else 1
            fanned.append((queued, len(nodes), per))
            queued += len(nodes) * per
            continue
        key = full[3] if name in ("EVALSHA", "EVAL") and int(full[2]) > 0 else (
            full[1] if len(full) > 1 else None)
        if key is not None:
            node = client.get_node_from_key(_text(key))
            if node is not None:
                written.setdefault(node.name, (node, _text(key)))
                keys.append(_text(key))
        pipe.execute_command(*full)
        queued += 1
    replies = list(await pipe.execute(raise_on_error=False))
    if not fanned:
        return replies, False
    out: list[Any] = []
    at = 0
    lost = any(isinstance(r, RedisConnectionError) for r in replies)
    for start, count, per in fanned:
        out += replies[at:start]
        copies = replies[start + per - 1:start + count * per:per]
        errors = [r for r in copies if isinstance(r, Exception)]
        lost = lost or any(_redirect(e) for e in errors)
        out.append(errors[0] if errors else min(copies, key=_least))
        at = start + count * per
    now = {getattr(client.get_node_from_key(k), "name", None) for k in keys}
    lost = lost or not now <= set(written)  # a key's slot moved to another master
    return out + replies[at:], lost


def _marker(key: str) -> str:
    """A key in ``key``'s slot for the write before a ``WAIT``: ``{<its hash tag>}:wait``."""
    start = key.find("{")
    end = key.find("}", start + 1)
    tag = key[start + 1:end] if start != -1 and end > start + 1 else key
    return "{" + tag + "}:wait"


def _redirect(error: Exception) -> bool:
    """A ``WAIT`` refused because its node is no master of the batch's slots any more, or
    lost with a connection to a node that went away."""
    if isinstance(error, RedisConnectionError | redis.exceptions.TimeoutError):
        return True
    text = str(error).lower()
    return any(word in text for word in ("replica", "moved", "clusterdown", "readonly"))


def _least(reply: Any) -> int:
    """``WAIT`` answers a count; ``WAITAOF`` a pair (local fsyncs, replica fsyncs)."""
    if isinstance(reply, list | tuple):
        return min(int(r) for r in reply) if reply else 0
    return int(reply)


