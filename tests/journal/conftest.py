"""Fixtures for the journal tests: a journal on the test Redis and a recording adapter."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import pytest
import redis.asyncio

from bot.core import Effect, Event, Policy
from bot.journal import Journal
from bot.runner import Adapters

POLICY = Policy()


@pytest.fixture
def journal(redis_async: redis.asyncio.Redis) -> Journal:
    return Journal(redis_async, shards=4)


class Recorder:
    """An adapter that counts every call by effect key and can fail on demand."""

    def __init__(self) -> None:
        self.calls: Counter[str] = Counter()
        self.fail: dict[str, BaseException] = {}
        self.follow_up: dict[str, Sequence[Event]] = {}

    async def __call__(self, effect: Effect) -> Sequence[Event] | None:
        self.calls[effect.key] += 1
        if effect.key in self.fail:
            raise self.fail[effect.key]
        return self.follow_up.get(effect.key)

    def adapters(self) -> Adapters:
        from bot.core import EffectType

        return Adapters({t: self for t in EffectType})


@pytest.fixture
def recorder() -> Recorder:
    return Recorder()
