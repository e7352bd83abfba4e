"""``Batch``: the journal's lean pipeline sends what redis-py would send and answers like
``Pipeline.execute(raise_on_error=False)``."""

from __future__ import annotations

import contextlib
from typing import Any

import pytest
import redis.asyncio
from redis.asyncio.connection import Connection

from bot.journal.wire import (
    NO_HEAD,
    Batch,
    Head,
    cluster_nodes,
    cluster_startup,
    is_cluster_url,
    pack,
)


def test_pack_is_the_request_redis_py_sends() -> None:
    head = ("EVALSHA", "ab" * 20, 2, "q:{é}:snap", "q:{é}:ids")
    args = (b"\x00\r\n{}", -3, "")
    request = pack([(Head.of(*head), args), (NO_HEAD, ("PING",)), (NO_HEAD, head + args)])
    assert request == b"".join(Connection().pack_commands([head + args, ("PING",),
                                                           head + args]))


def test_pack_refuses_what_redis_py_would_guess_at() -> None:
    with pytest.raises(TypeError, match="pass bytes, str or int"):
        pack([(NO_HEAD, ("SET", "k", True))])
    with pytest.raises(TypeError, match="float"):
        Head.of("SET", 1.5)  # type: ignore[arg-type]


async def test_replies_in_order_with_errors_in_place(redis_async: redis.asyncio.Redis) -> None:
    batch = Batch()
    batch.add("SET", "w:s", "x")
    batch.add("SADD", "w:s", "m")  # wrong type: an error reply, not an exception
    batch.add("SADD", "w:set", "a", "b")
    batch.add("HMGET", "w:h", "v", "quest")
    replies = await batch.execute(redis_async)
    assert replies[0] in (True, b"OK", "OK")
    assert isinstance(replies[1], redis.exceptions.ResponseError)
    assert replies[2:] == [2, [None, None]]
    assert await redis_async.get("w:s") == b"x"  # the connection is still in step


async def test_a_killed_connection_is_dropped_not_reused(
        redis_async: redis.asyncio.Redis) -> None:
    """The connection's retry policy decides whether the batch is resent (redis-py's default
    is not to, as for its pipeline); either way the dead connection does not go back to the
    pool, and the next batch reads its own replies."""
    batch = Batch()
    batch.add("PING")
    assert await batch.execute(redis_async) in ([True], [b"PONG"])
    await redis_async.execute_command("CLIENT", "KILL", "TYPE", "normal", "SKIPME", "no")
    with contextlib.suppress(redis.exceptions.ConnectionError):
        await batch.execute(redis_async)
    batch = Batch()
    batch.add("SET", "w:k", "v")
    batch.add("GET", "w:k")
    assert (await batch.execute(redis_async))[1] == b"v"


class _ClusterLike:
    """A client without a connection pool, as ``RedisCluster`` is: only ``pipeline``."""

    def __init__(self, client: redis.asyncio.Redis) -> None:
        self._client = client

    def pipeline(self, transaction: bool = True) -> Any:
        return self._client.pipeline(transaction=transaction)


async def test_a_client_without_a_pool_gets_a_pipeline(redis_async: redis.asyncio.Redis) -> None:
    batch = Batch()
    batch.call(Head.of("SADD", "w:c"), "a")
    batch.add("INCR", "w:c")
    batch.add("SCARD", "w:c")
    replies = await batch.execute(_ClusterLike(redis_async))  # type: ignore[arg-type]
    assert replies[0] == 1 and replies[2] == 1
    assert isinstance(replies[1], redis.exceptions.ResponseError)


def test_a_cluster_url_names_the_nodes_to_start_from() -> None:
    url = "rediss+cluster://u:pw@a.internal:7000,b.internal:7001,c.internal/0"
    assert cluster_nodes(url) == [("a.internal", 7000), ("b.internal", 7001),
                                  ("c.internal", 6379)]
    plain, rest = cluster_startup(url)
    assert plain == "rediss://u:pw@a.internal:7000/0"
    assert [(n.host, n.port) for n in rest] == [("b.internal", 7001), ("c.internal", 6379)]
    assert is_cluster_url(url) and not is_cluster_url("redis://a:6379/0")
