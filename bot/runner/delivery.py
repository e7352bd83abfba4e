"""What effect delivery is made of and what it leaves behind: the adapters by type, the
backoff of failed attempts, the permanent failures and the delivered-key record.

``bot.runner.outbox`` runs deliveries; these are the parts callers name (the worker registers
``Adapters``, the GitHub projection reads ``failures``), kept apart so that module holds only
the running.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field

from bot.core import Effect, EffectType, Event
from bot.journal.keys import quest_keys
from bot.journal.wire import RedisClient, stream_rows, text

Adapter = Callable[[Effect], Awaitable[Sequence[Event] | None]]
"""Performs one effect; returns the events that report its outcome (or nothing)."""


class Adapters:
    """The registry of adapters, keyed by effect type."""

    def __init__(self, adapters: dict[EffectType | str, Adapter] | None = None) -> None:
        self._by_type: dict[str, Adapter] = {}
        for type_, adapter in (adapters or {}).items():
            self.register(type_, adapter)

    def register(self, type_: EffectType | str, adapter: Adapter) -> None:
        self._by_type[EffectType(type_).value] = adapter

    def get(self, type_: EffectType | str) -> Adapter | None:
        return self._by_type.get(str(type_))


@dataclass(frozen=True, slots=True)
class Backoff:
    base_s: float = 1.0
    cap_s: float = 300.0
    max_tries: int = 8
    """Attempts before an effect is recorded as permanently failed."""


@dataclass(frozen=True, slots=True)
class Failure:
    """A permanent delivery failure, as recorded in the quest's failures stream."""

    quest_id: str
    effect_key: str
    effect_type: str
    error: str
    tries: int
    at: float

    def fields(self) -> dict[str, str]:
        return {"key": self.effect_key, "type": self.effect_type, "error": self.error,
                "tries": str(self.tries), "at": f"{self.at:.3f}"}


@dataclass
class RunStats:
    delivered: int = 0
    skipped: int = 0
    """Effects found already delivered (a redelivery)."""
    retried: int = 0
    failures: list[Failure] = field(default_factory=list)
    claimed: int = 0
    """Doorbells taken over from a runner that went quiet."""
    lost: int = 0
    """Adapter calls stopped because another runner took the lease."""


def error_text(exc: BaseException) -> str:
    """How a failure is recorded: the exception's type and message, cut to 500 characters."""
    text = str(exc) or type(exc).__name__
    return f"{type(exc).__name__}: {text}"[:500]


async def failures(client: RedisClient, quest_id: str) -> list[Failure]:
    """The permanent delivery failures recorded for a quest, oldest first."""
    rows = stream_rows(await client.xrange(quest_keys(quest_id).failures, "-", "+"))
    return [Failure(quest_id, text(f["key"]), text(f["type"]), text(f["error"]), int(f["tries"]),
                    float(f["at"])) for _, f in rows]


async def delivered(client: RedisClient, quest_id: str) -> dict[str, str]:
    """The delivered-key record of a quest: effect key → ``ok`` or ``failed``."""
    raw = await client.hgetall(quest_keys(quest_id).done)
    return {text(a): text(b) for a, b in raw.items()}
