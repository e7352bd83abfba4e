"""The write schedule keeps every installation under GitHub's content-creation limits — 80 a
minute, 500 an hour (BEHAVIOUR.md §15) — whatever the requests' times, and the schedule in
Redis is the same arithmetic as the one in memory, shared by every worker."""

from __future__ import annotations

import asyncio
import os

import pytest
import redis.asyncio
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.journal.pacing import LocalSchedule, Pace, SharedSchedule, next_slot, pace_key
from bot.journal.wire import plain_client

pytestmark = pytest.mark.cluster_too

EXAMPLES = int(os.environ.get("QUESTBOT_PROPERTY_EXAMPLES", "60"))


def most_in_window(times: list[float], span: float) -> int:
    """The most of ``times`` (sorted) inside any half-open window ``(t - span, t]``."""
    most, start = 0, 0
    for end, at in enumerate(times):
        while times[start] <= at - span:
            start += 1
        most = max(most, end - start + 1)
    return most


gaps = st.lists(st.floats(min_value=0.0, max_value=90.0, allow_nan=False), min_size=1,
                max_size=700)


@settings(max_examples=EXAMPLES, deadline=None, derandomize=True)
@given(gaps=gaps, bursts=st.lists(st.integers(min_value=1, max_value=40), max_size=700))
def test_no_schedule_lets_more_than_githubs_limits_through(gaps: list[float],
                                                          bursts: list[int]) -> None:
    """Writes asked for at any times (several at once, in bursts) are sent in order and never
    more than 80 in a minute or 500 in an hour — the default figures allow 75 and 480."""
    pace = Pace()
    state = (0.0, 0.0, 0.0)
    now, sent = 1_000_000.0, []
    for n, gap in enumerate(gaps):
        now += gap
        for _ in range(bursts[n] if n < len(bursts) else 1):
            send, state = next_slot(state, now, pace)
            assert send >= now
            sent.append(send)
    assert sent == sorted(sent)
    assert most_in_window(sent, 60.0) <= pace.burst + 60 / pace.spacing <= 80
    assert most_in_window(sent, 3600.0) <= pace.hourly_burst + 3600 / pace.hourly_spacing <= 500


def test_a_burst_goes_at_once_then_one_write_a_second() -> None:
    pace = Pace(burst=3)
    state = (0.0, 0.0, 0.0)
    sent = []
    for _ in range(6):
        send, state = next_slot(state, 100.0, pace)
        sent.append(send)
    assert sent == [100.0, 100.0, 100.0, 101.0, 102.0, 103.0]
    send, _ = next_slot(state, 200.0, pace)  # a while later the burst is back
    assert send == 200.0


async def test_the_shared_schedule_is_the_local_one_for_every_worker(
        redis_async: redis.asyncio.Redis, redis_async_url: str) -> None:
    pace = Pace(burst=4, spacing=0.5, hourly_burst=6, hourly_spacing=10.0)
    local, shared = LocalSchedule(), SharedSchedule(redis_async)
    other_client = plain_client(redis_async_url)  # another worker's own client
    other_worker = SharedSchedule(other_client)
    times = [5.0, 5.0, 5.1, 5.2, 5.2, 6.0, 9.0, 30.0, 30.0, 31.0]
    mine = [await local.slot(7, t, pace) for t in times]
    theirs = []
    for n, t in enumerate(times):  # two workers taking turns share one schedule
        theirs.append(await (shared if n % 2 else other_worker).slot(7, t, pace))
    assert theirs == mine
    assert await shared.slot(8, 5.0, pace) == 5.0  # another installation has its own
    assert 0 < await redis_async.ttl(pace_key(7)) <= 7200
    await other_client.aclose()


async def test_a_block_holds_every_workers_writes_until_it_ends(
        redis_async: redis.asyncio.Redis) -> None:
    pace = Pace()
    for schedule in (LocalSchedule(), SharedSchedule(redis_async)):
        assert await schedule.slot(3, 10.0, pace) == 10.0
        await schedule.block(3, 70.0)
        await schedule.block(3, 40.0)  # an earlier block does not shorten it
        assert await schedule.slot(3, 11.0, pace) == 70.0
        assert await schedule.slot(3, 80.0, pace) == 80.0


async def test_many_workers_at_once_get_distinct_slots(redis_async: redis.asyncio.Redis) -> None:
    pace = Pace(burst=1, spacing=1.0)
    workers = [SharedSchedule(redis_async) for _ in range(5)]
    slots = await asyncio.gather(*(w.slot(9, 50.0, pace) for w in workers for _ in range(4)))
    assert sorted(slots) == [50.0 + n for n in range(20)]
