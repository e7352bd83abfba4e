"""Waiting until a write is durable before acknowledging it.

On a Redis Cluster (``cluster=True``) durable means "on a replica as well": ``WAIT 1
<timeout>`` after the writes, sent to every master written to (``bot.journal.wire.Batch``),
returns how many replicas acknowledged them, and fewer than one is a ``DurabilityError``. A
master that dies after answering is then replaced by a replica that has the write. Redis 7.2's
``WAITAOF 1 1 <timeout>`` would add that the write is fsynced on the master and on a replica,
surviving a power loss of both machines; the cluster here runs 7.0, where ``WAIT`` alone is
what there is (replicas fsync on their own ``appendfsync`` schedule).

On Redis 7.2 and later, ``WAITAOF 1 0 <timeout>`` sent on the same connection right after the
write blocks until the local AOF has fsynced it. Older servers do not know the command; there
the guarantee comes from the server setting ``appendfsync always`` (Redis then fsyncs the AOF
before it sends the reply), and the journal checks that setting once and warns if it is not
in force. ``docs/storage.md`` explains the trade-off.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import redis.asyncio

from bot.journal.errors import DurabilityError
from bot.journal.wire import RedisClient

log = logging.getLogger(__name__)


@dataclass
class Durability:
    """How one journal waits for durability; ``supported`` is learned from the server."""

    timeout_ms: int = 1000
    supported: bool | None = None
    """``WAITAOF`` works on this server (``None`` until the first durable write)."""
    fsync_always: bool | None = None
    """The fallback: the server's ``appendfsync`` is ``always``."""
    cluster: bool = False
    """A Redis Cluster: wait for one replica (``WAIT``) instead of the local fsync."""

    def command(self) -> tuple[str | int, ...] | None:
        """The ``WAITAOF`` (``WAIT`` on a cluster) to send right after the writes, unless the
        server lacks it."""
        if self.cluster:
            return ("WAIT", 1, self.timeout_ms)
        if self.supported is False:
            return None
        return ("WAITAOF", 1, 0, self.timeout_ms)

    def queue(self, pipe: redis.asyncio.client.Pipeline) -> bool:
        """Queue ``WAITAOF`` as the pipeline's last command, if it may work; returns whether
        it was queued (its reply is then the pipeline's last)."""
        command = self.command()
        if command is None:
            return False
        pipe.execute_command(*command)
        return True

    async def check(self, client: RedisClient, reply: object) -> None:
        """Judge the reply ``WAITAOF`` gave (or the error that says the server lacks it)."""
        if self.cluster:
            if isinstance(reply, Exception):
                raise DurabilityError(f"wait failed: {reply}") from reply
            if isinstance(reply, int) and reply >= 1:
                return
            raise DurabilityError(f"no replica acknowledged the write within "
                                  f"{self.timeout_ms} ms (wait replied {reply!r}); a failover "
                                  "now could lose it — retry it, a retry is absorbed")
        if isinstance(reply, redis.exceptions.ResponseError):
            if "unknown command" not in str(reply).lower():
                raise DurabilityError(f"waitaof failed: {reply}") from reply
            self.supported = False
            await self.fallback(client)
            return
        self.supported = True
        if isinstance(reply, list | tuple) and reply and int(reply[0]) >= 1:
            return
        raise DurabilityError(f"redis did not fsync the write to its aof within "
                              f"{self.timeout_ms} ms (waitaof replied {reply!r}); the event "
                              "may be lost on a crash — retry it, a retry is absorbed")

    async def fallback(self, client: RedisClient) -> None:
        if self.fsync_always is not None:
            return
        try:
            config = await client.config_get("appendfsync")
            appendonly = await client.config_get("appendonly")
        except redis.exceptions.ResponseError:  # CONFIG may be renamed on managed Redis
            self.fsync_always = False
            log.warning("cannot read the redis config; assuming writes are not fsynced before "
                        "the reply — set appendonly yes and appendfsync always")
            return
        self.fsync_always = (_first(config) == "always" and _first(appendonly) == "yes")
        if not self.fsync_always:
            log.warning("redis has no WAITAOF and is not running with appendonly yes and "
                        "appendfsync always: an acknowledged event can be lost if redis "
                        "crashes; set both for the webhook path")


def _first(config: Mapping[Any, Any]) -> str:
    for value in config.values():
        return value.decode() if isinstance(value, bytes) else str(value)
    return ""
