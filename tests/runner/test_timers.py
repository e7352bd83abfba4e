"""Durable timers: due events fire once, through apply, with time driven by the test."""

from __future__ import annotations

import asyncio
from datetime import datetime, timedelta

import pytest

from bot.core import State
from bot.journal import Journal
from bot.runner import Timers, timer_event_id
from questbot_testing.journals import EPOCH, JournalBuilder
from tests.journal.conftest import POLICY

pytestmark = pytest.mark.cluster_too


class Clock:
    def __init__(self, now: datetime) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now


def watching() -> JournalBuilder:
    b = JournalBuilder("q-1").sense().to_ready()
    b.decide("C")
    b.add("landed", merge_sha="m1")
    return b


async def test_timer_fires_once_when_due(journal: Journal) -> None:
    b = watching()
    await journal.apply_many(b.events, POLICY)
    clock = Clock(EPOCH)
    due = EPOCH + timedelta(minutes=60)
    event = b.event("watch_clean", id=timer_event_id("q-1", "watch", due), at=due)
    timers = Timers(journal, POLICY, clock=clock)
    await timers.schedule(event, due)
    await timers.schedule(event, due)  # scheduling twice is one timer
    assert await timers.fire_due() == []
    clock.now = due + timedelta(seconds=1)
    (fired,) = await timers.fire_due()
    assert not isinstance(fired, Exception) and fired.quest.state is State.CLOSED
    assert await timers.fire_due() == []
    assert await timers.pending() == []
    assert (await journal.events("q-1"))[-1] == event


async def test_two_pollers_and_a_crash_fire_once(journal: Journal) -> None:
    b = watching()
    await journal.apply_many(b.events, POLICY)
    due = EPOCH + timedelta(minutes=60)
    event = b.event("watch_clean", id=timer_event_id("q-1", "watch", due), at=due)
    clock = Clock(due + timedelta(seconds=1))
    one, two = Timers(journal, POLICY, clock=clock), Timers(journal, POLICY, clock=clock)
    await one.schedule(event, due)
    # a poller that applied the event and died before removing the timer
    await journal.apply(event, POLICY)
    results = await asyncio.gather(one.fire_due(), two.fire_due())
    fired = [r for rs in results for r in rs]
    assert fired and all(not isinstance(r, Exception) and r.duplicate for r in fired)
    assert [e.id for e in await journal.events("q-1")].count(event.id) == 1
    assert await one.pending() == []


async def test_refused_timer_is_dropped(journal: Journal) -> None:
    b = JournalBuilder("q-1").sense()
    await journal.apply_many(b.events, POLICY)
    due = EPOCH + timedelta(minutes=1)
    event = b.event("watch_clean", id=timer_event_id("q-1", "watch", due), at=due)
    timers = Timers(journal, POLICY, clock=Clock(due))
    await timers.schedule(event, due)
    (result,) = await timers.fire_due()
    assert isinstance(result, Exception)
    assert await timers.pending() == []


async def test_cancelled_timer_is_gone(journal: Journal) -> None:
    timers = Timers(journal, POLICY, clock=Clock(EPOCH))
    b = watching()
    event = b.event("watch_clean", id="timer:watch:q-1", at=EPOCH)
    await timers.schedule(event, EPOCH + timedelta(hours=1))
    assert len(await timers.pending("q-1")) == 1
    assert await timers.cancel("q-1", event.id)
    assert await timers.pending("q-1") == []
