"""The projector's drain on a real Redis: views of several quests are written at once, so one
quest waiting its installation's turn does not hold the others' (a soak left closed quests'
views unwritten for over a minute that way, and their compaction with them); Redis going away
mid-drain leaves what was not written pending and owed."""

from __future__ import annotations

import asyncio

import pytest
import redis.asyncio
import redis.exceptions

from bot.core import Quest
from bot.journal import Journal
from bot.journal.views import OwedViews
from bot.worker.projector import Projector
from questbot_testing.journals import main_line


async def quests(client: redis.asyncio.Redis, *ids: str) -> dict[str, Quest]:
    journal = Journal(client, shards=4)
    found: dict[str, Quest] = {}
    for qid in ids:
        b = main_line(qid)
        await journal.apply_many(b.events[:3], b.policy)
        quest = (await journal.snapshot(qid))[1]
        assert quest is not None
        found[qid] = quest
    return found


async def test_one_quest_waiting_its_turn_does_not_hold_the_others_views(
        redis_async: redis.asyncio.Redis) -> None:
    views = OwedViews(redis_async, 4)
    written: list[str] = []
    others_done = asyncio.Event()

    async def sync(quest: Quest) -> None:
        if quest.id == "q-slow":  # its installation's next slot is a while off
            await others_done.wait()
        written.append(quest.id)
        if {"q-1", "q-2", "q-3"} <= set(written):
            others_done.set()

    projector = Projector(sync, views=views, parallel=4)
    projector.pending.update(await quests(redis_async, "q-1", "q-2", "q-3", "q-slow"))
    assert await asyncio.wait_for(projector.drain(), 10) == 4
    assert written[-1] == "q-slow" and sorted(written) == ["q-1", "q-2", "q-3", "q-slow"]
    await asyncio.sleep(0.01)
    assert await views.due(older_than_s=0.0) == []  # every view done


async def test_at_most_parallel_views_are_written_at_once(
        redis_async: redis.asyncio.Redis) -> None:
    running, most = 0, 0

    async def sync(quest: Quest) -> None:
        nonlocal running, most
        running += 1
        most = max(most, running)
        await asyncio.sleep(0.02)
        running -= 1

    projector = Projector(sync, views=OwedViews(redis_async, 4), parallel=2)
    projector.pending.update(await quests(redis_async, *(f"q-{n}" for n in range(6))))
    assert await projector.drain() == 6
    assert most == 2


async def test_redis_going_away_mid_drain_leaves_the_rest_pending_and_raises(
        redis_async: redis.asyncio.Redis) -> None:
    async def sync(quest: Quest) -> None:
        if quest.id == "q-away":
            raise redis.exceptions.ConnectionError("Redis restarting")
        await asyncio.sleep(0.01)

    projector = Projector(sync, views=OwedViews(redis_async, 4), parallel=1)
    found = await quests(redis_async, "q-away", "q-1", "q-2")
    projector.pending.update(found)
    with pytest.raises(redis.exceptions.ConnectionError):
        await projector.drain()
    assert "q-away" in projector.pending  # written once Redis is back
    assert set(projector.pending) <= set(found)
