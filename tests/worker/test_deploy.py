"""What a deploy does to a quest whose agent is running: its worker is killed (``kill -9``) or
stopped (SIGTERM) mid-adapter, and another worker finishes the quest's effects within seconds
— not the half hour a lease as long as the slowest adapter used to park it for. And to a
webhook delivery a killed worker was handling: another worker handles it within seconds, not
the minute it used to wait."""

from __future__ import annotations

import signal
import time
from datetime import UTC, datetime

import pytest
import redis.asyncio

from bot.core import EffectType
from bot.journal import Journal
from bot.runner import delivered
from bot.runner.inbound import Inbound
from questbot_testing.journals import JournalBuilder
from tests.journal.conftest import POLICY
from tests.worker.conftest import Workers, counts, until


async def started_slow(redis_async: redis.asyncio.Redis) -> tuple[Journal, JournalBuilder, str]:
    journal = Journal(redis_async)  # the worker's sixteen shards
    b = JournalBuilder("q-1").sense()
    await journal.apply_many(b.events, POLICY)
    slow = next(e.key for e in b.effects if e.type is EffectType.START_AGENT)
    return journal, b, slow


async def finished(client: redis.asyncio.Redis, journal: Journal, b: JournalBuilder) -> bool:
    writes = set(await counts(client, "rec:writes"))
    return writes >= {e.key for e in b.effects} and not await journal.outbox(b.quest_id)


@pytest.mark.slow
async def test_a_worker_killed_in_a_slow_adapter_is_replaced_within_seconds(
        redis_async: redis.asyncio.Redis, redis_url: str, workers: Workers) -> None:
    journal, b, slow = await started_slow(redis_async)
    first = workers.start(redis_url, "first", slow="start_agent", seconds=300)
    await until(lambda: redis_async.exists(f"rec:started:{slow}"), within=10)
    # a new event while the agent runs: its effect waits behind the run, and must not be lost
    await journal.apply(b.add("spend_requested", amount_cents=5, purpose="tokens"), POLICY)
    first.kill()
    first.wait()
    killed = time.monotonic()
    workers.start(redis_url, "second")
    await until(lambda: finished(redis_async, journal, b), within=30)
    took = time.monotonic() - killed
    assert took < 20, f"the quest waited {took:.1f} s for another worker"
    calls = await counts(redis_async, "rec:calls")
    assert calls.pop(slow) == 2  # the run the kill interrupted, and the one that finished
    assert set(calls.values()) == {1}
    assert set((await delivered(redis_async, "q-1")).values()) == {"ok"}
    receipts = [e.id for e in await journal.events("q-1") if e.id.startswith("receipt:")]
    assert len(receipts) == 1


@pytest.mark.slow
async def test_a_worker_stopped_in_a_slow_adapter_hands_its_quest_over_at_once(
        redis_async: redis.asyncio.Redis, redis_url: str, workers: Workers) -> None:
    journal, b, slow = await started_slow(redis_async)
    first = workers.start(redis_url, "first", slow="start_agent", seconds=300)
    await until(lambda: redis_async.exists(f"rec:started:{slow}"), within=10)
    workers.start(redis_url, "second")
    first.send_signal(signal.SIGTERM)
    stopped = time.monotonic()
    await until(lambda: finished(redis_async, journal, b), within=30)
    took = time.monotonic() - stopped
    assert took < 6, f"the quest waited {took:.1f} s after a graceful stop"
    assert first.wait(timeout=10) == 0
    assert (await counts(redis_async, "rec:calls"))[slow] == 2


@pytest.mark.slow
async def test_a_worker_killed_while_handling_a_delivery_is_replaced_within_seconds(
        redis_async: redis.asyncio.Redis, redis_url: str, workers: Workers) -> None:
    inbound = Inbound(redis_async, durable=False)
    await inbound.ensure_group()
    first = workers.start(redis_url, "first", intake_seconds=300)
    await inbound.store("d-1", "issues", b'{"action": "opened"}', datetime.now(UTC))
    await until(lambda: redis_async.exists("rec:intake-started:d-1"), within=10)
    first.kill()
    first.wait()
    killed = time.monotonic()
    workers.start(redis_url, "second")

    async def handled() -> bool:
        return bool(await redis_async.hexists("rec:handled", "d-1")
                    and not await inbound.backlog())

    await until(handled, within=40)
    took = time.monotonic() - killed
    assert took < 20, f"the delivery waited {took:.1f} s for another worker"
    assert await counts(redis_async, "rec:intake") == {"d-1": 2}
