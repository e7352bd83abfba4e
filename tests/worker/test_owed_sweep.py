"""The worker's look at owed runs, on a real Redis: each part's sweep is asked about the due
repositories only, once per interval across two workers; a repository owing nothing is no
longer looked at, one that still owes is; and one repository whose sweep fails does not keep
the others from theirs."""

from __future__ import annotations

from datetime import UTC, datetime

import redis.asyncio

from bot.adapters import AdapterContext, AppIdentity
from bot.journal import Journal
from bot.journal.owed_runs import INTERVAL, OwedRuns
from bot.worker.owed_sweep import OwedSweep

NOW = datetime(2026, 12, 1, 12, tzinfo=UTC)


class Clock:
    def __init__(self) -> None:
        self.now = NOW

    def __call__(self) -> datetime:
        return self.now


def context(client: redis.asyncio.Redis, clock: Clock) -> AdapterContext:
    return AdapterContext(journal=Journal(client), hosts=None,  # type: ignore[arg-type]
                          settings=None,  # type: ignore[arg-type]
                          app=AppIdentity(id=1, slug="questbot"), clock=clock)


async def test_due_repositories_are_swept_once_and_forgotten_when_they_owe_nothing(
        redis_async: redis.asyncio.Redis) -> None:
    clock = Clock()
    asked: list[str] = []
    owing = {"octo/owes"}

    async def sweep(repo: str) -> bool:
        asked.append(repo)
        if repo == "octo/broken":
            raise RuntimeError("its settings could not be read")
        return repo in owing

    workers = []
    for _ in range(2):
        ctx = context(redis_async, clock)
        ctx.sweeps.append(sweep)
        workers.append(OwedSweep(ctx))
    owed = OwedRuns(redis_async)
    for repo in ("octo/broken", "octo/done", "octo/owes"):
        await owed.owed(repo, NOW)
    assert [await w.sweep_once() for w in workers] == [0, 0]  # not due yet
    assert asked == []
    clock.now = NOW + INTERVAL
    assert [await w.sweep_once() for w in workers] == [3, 0]  # one worker looks
    assert sorted(asked) == ["octo/broken", "octo/done", "octo/owes"]
    asked.clear()
    clock.now = NOW + 2 * INTERVAL
    assert await workers[1].sweep_once() == 2
    assert sorted(asked) == ["octo/broken", "octo/owes"]  # the one owing nothing is forgotten
