"""Many tasks and two OS processes apply to one quest at once: nothing lost, nothing twice."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

import redis.asyncio

from bot.core import Policy, fold
from bot.journal import Journal, rebuild
from questbot_testing.journals import JournalBuilder
from tests.journal.conftest import POLICY
from tests.journal.proc_applier import receipt

ROOT = Path(__file__).resolve().parents[2]


async def started(journal: Journal, quest_id: str) -> None:
    await journal.apply_many(JournalBuilder(quest_id).sense().events, POLICY)


async def check(journal: Journal, quest_id: str, expected_ids: set[str]) -> None:
    events = await journal.events(quest_id)
    ids = [e.id for e in events]
    assert len(ids) == len(set(ids)), "an event was journaled twice"
    start = {e.id for e in JournalBuilder(quest_id).sense().events}  # sensed, triaged, research
    assert set(ids) - start == expected_ids
    rebuilt = await rebuild(journal, quest_id, Policy())
    assert rebuilt.matches
    assert rebuilt.result.quest is not None
    assert rebuilt.result.quest.usage_tokens == len(expected_ids)


async def test_many_tasks_one_quest(redis_async: redis.asyncio.Redis) -> None:
    journals = [Journal(redis_async, shards=4) for _ in range(4)]
    await started(journals[0], "q-1")
    ids = [f"t-{n}" for n in range(200)]

    async def worker(w: int) -> None:
        for n, event_id in enumerate(ids):
            if n % 4 == w or n % 10 == 0:  # every tenth id is applied by all four
                await journals[w].apply(receipt("q-1", event_id, 1), POLICY)

    await asyncio.gather(*(worker(w) for w in range(4)), *(worker(w) for w in range(4)))
    await check(journals[0], "q-1", set(ids))


async def test_two_processes_one_quest(redis_async: redis.asyncio.Redis,
                                       redis_url: str) -> None:
    journal = Journal(redis_async, shards=4)
    await started(journal, "q-1")
    count, shared = 150, 50
    procs = [subprocess.Popen([sys.executable, "-m", "tests.journal.proc_applier", redis_url,
                               "q-1", prefix, str(count), str(shared)], cwd=ROOT)
             for prefix in ("a", "b")]
    for p in procs:
        assert p.wait(timeout=60) == 0
    expected = {f"{p}-{n}" for p in "ab" for n in range(count)}
    expected |= {f"shared-{n}" for n in range(shared)}
    await check(journal, "q-1", expected)
    assert fold(await journal.events("q-1"), POLICY).invalid is None
