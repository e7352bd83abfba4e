"""A journal keeps in memory the snapshots of the quests it writes while they live, not of every
quest it ever wrote: a worker's memory must not grow with the quests it closed (the soak,
``docs/performance.md``; ``Journal._remember``)."""

from __future__ import annotations

import pytest
import redis.asyncio

from bot.core import State
from bot.journal import Journal
from bot.journal.wire import Head
from questbot_testing.journals import main_line
from tests.journal.conftest import POLICY

pytestmark = pytest.mark.cluster_too


async def test_closed_quests_leave_nothing_behind_in_the_journal(
        redis_async: redis.asyncio.Redis) -> None:
    journal = Journal(redis_async, shards=4)
    live = main_line("q-live")
    live.events = live.events[:6]  # still on its way
    await journal.apply_many(live.events, POLICY)
    for n in range(60):
        b = main_line(f"q-{n}")
        await journal.apply_many(b.events, POLICY)
        assert b.quest is not None and b.quest.state is State.CLOSED
    assert journal.held() == (1, 1)  # the live one only
    # a closed quest written again (a regression) is read from Redis, and is held while live
    again = main_line("q-0")
    reopened = again.add("reopened", fingerprint="fp-1", source="check_run:2",
                         severity="high", base="base9")
    applied = await journal.apply(reopened, POLICY)
    assert applied.quest.state is not State.CLOSED
    assert journal.held() == (2, 2)


async def test_quests_another_worker_ended_leave_once_idle(
        redis_async: redis.asyncio.Redis) -> None:
    """A worker never hears that another worker ended a quest it wrote to; it lets the quest
    go once it has not written it for ``idle_s``, rather than after ``cache_size`` others."""
    now = [0.0]
    mine = Journal(redis_async, shards=4, idle_s=120.0, timer=lambda: now[0])
    other = Journal(redis_async, shards=4)
    for n in range(40):
        b = main_line(f"q-{n}")
        await mine.apply_many(b.events[:6], POLICY)
        await other.apply_many(b.events[6:], POLICY)
        assert b.quest is not None and b.quest.state is State.CLOSED
        now[0] += 1.0
    assert mine.held() == (40, 40)  # all of them, though every one has ended
    now[0] += 120.0
    live = main_line("q-live")
    await mine.apply_many(live.events[:6], POLICY)
    assert mine.held() == (1, 1)
    # a quest held past ``idle_s`` is read again when it moves, and written right
    now[0] += 121.0
    await mine.apply_many(main_line("q-other").events[:2], POLICY)  # lets q-live go
    assert mine.held() == (1, 1)
    more = main_line("q-live")
    applied = await mine.apply_many(more.events[6:], POLICY)
    assert all(not isinstance(a, Exception) for a in applied)
    assert mine.held() == (1, 1)  # q-other; q-live ended


def test_the_key_names_kept_built_cost_a_worker_little() -> None:
    """``quest_keys`` are kept for the quests a worker is moving, and the bound in all is what a
    worker can hold (before: 8,192, with the apply script's packed call beside them, ~15 MB;
    the packed call now lives in the journal's held quest, and goes with it)."""
    import tracemalloc

    from bot.journal.keys import QUEST_KEYS_HELD, quest_keys

    quest_keys.cache_clear()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for n in range(3 * QUEST_KEYS_HELD):
            quest_keys(f"check-{n:06d}-0123456789abcdef")
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert quest_keys.cache_info().currsize == QUEST_KEYS_HELD
    assert held < 1_500_000, held  # ~1.2 KB a quest at the bound
    assert quest_keys("check-x").events == "q:{check-x}:events"


async def test_a_held_quest_packs_its_script_call_once(
        redis_async: redis.asyncio.Redis) -> None:
    """The apply script's call (its keys) is packed once a quest while the journal holds it, however
    many quests move at once: a cache of its own, smaller than the quests moving, was missed by
    every apply (issue 26, item 5)."""
    packed: list[str] = []

    class Counting(Journal):
        def _head(self, quest_id: str) -> Head:
            packed.append(quest_id)
            return super()._head(quest_id)

    journal = Counting(redis_async, shards=4)
    quests = [main_line(f"q-{n}") for n in range(40)]
    for k in range(6):  # one event of each quest a round, as many quests moving do
        applied = await journal.apply_many([b.events[k] for b in quests], POLICY)
        assert all(not isinstance(a, Exception) for a in applied)
    assert sorted(packed) == sorted(f"q-{n}" for n in range(40))
    # a quest read back from Redis (another writer held it) is packed once more, then held
    journal.forget("q-3")
    await journal.apply(quests[3].events[6], POLICY)
    assert packed.count("q-3") == 2
