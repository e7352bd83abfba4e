"""The watcher beside an agent run always ends when the run does.

It used to be stopped with ``Task.cancel()``. On Python 3.11 ``asyncio.wait_for`` — which
redis-py wraps every command in when the client has a socket timeout, as the worker's has —
swallows a cancellation that lands as the command finishes (CPython gh-86296), so now and then
the watcher slept on for good and its quest's agent effect never completed (three fault-free
``scripts/chaos.py`` runs in twenty). Stopping it by an event cannot be lost.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator
from datetime import UTC, datetime

import pytest
import redis.asyncio

from bot.adapters import AdapterContext, AppIdentity
from bot.agent.runs import AgentRuns
from bot.agent.task import Stage
from bot.core import Quest, SignalKind, State
from bot.journal import Journal
from tests.agent.conftest import StaticSettings


@pytest.fixture
async def slow_timeout_client(redis_url: str) -> AsyncIterator[redis.asyncio.Redis]:
    client = redis.asyncio.Redis.from_url(redis_url, socket_timeout=30)
    yield client
    await client.aclose()


async def _no_hosts(repo: str) -> object:
    raise AssertionError("the watcher reads the journal only")


async def test_the_watcher_ends_every_time_its_run_does(
        slow_timeout_client: redis.asyncio.Redis) -> None:
    journal = Journal(slow_timeout_client, shards=4)
    ctx = AdapterContext(journal=journal, hosts=_no_hosts,  # type: ignore[arg-type]
                         settings=StaticSettings(), app=AppIdentity(id=1, slug="questbot"),
                         clock=lambda: datetime.now(UTC))
    runs = AgentRuns(ctx, poll_seconds=0)
    quest = Quest(id="q-watch", repo="o/r", state=State.RESEARCHING, fingerprint="f",
                  kind=SignalKind.CHECK_FAILURE, last_signal="s")
    rng = random.Random(7)
    for _ in range(150):
        done = asyncio.Event()
        watch = asyncio.create_task(runs._watch(quest, Stage.RESEARCH, done))
        await asyncio.sleep(rng.uniform(0, 0.002))  # land anywhere in a snapshot read
        done.set()
        await asyncio.wait_for(watch, 2)  # a lost stop would hang here
