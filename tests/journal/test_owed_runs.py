"""Which repositories owe a run, on a real Redis: a repository is handed to one worker per
interval however many claim at once, not before its time, and stops being looked at only when
no run was queued since the claim."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

import pytest

from bot.journal.owed_runs import INTERVAL, OwedRuns
from bot.journal.wire import RedisClient

pytestmark = pytest.mark.cluster_too

NOW = datetime(2026, 12, 1, 12, tzinfo=UTC)


async def test_an_owed_repository_is_looked_at_once_per_interval(
        redis_async: RedisClient) -> None:
    owed = OwedRuns(redis_async)
    await owed.owed("octo/demo", NOW)
    assert await owed.claim(NOW + INTERVAL - timedelta(seconds=1)) == []  # not yet
    later = NOW + INTERVAL
    claims = await asyncio.gather(*(OwedRuns(redis_async).claim(later) for _ in range(6)))
    handed = [c for claim in claims for c in claim]
    assert [repo for repo, _until in handed] == ["octo/demo"]  # one worker of six
    assert await owed.claim(later + INTERVAL - timedelta(seconds=1)) == []
    ((repo, until),) = await owed.claim(later + INTERVAL)
    assert await owed.forget(repo, until)
    assert await owed.claim(later + 5 * INTERVAL) == []  # forgotten


async def test_a_run_queued_since_the_claim_keeps_the_look(redis_async: RedisClient) -> None:
    owed = OwedRuns(redis_async)
    await owed.owed("octo/demo", NOW)
    ((repo, until),) = await owed.claim(NOW + INTERVAL)
    await owed.owed(repo, NOW + INTERVAL + timedelta(seconds=3))  # another worker queued one
    assert not await owed.forget(repo, until)
    assert [r for r, _ in await owed.claim(NOW + 3 * INTERVAL)] == ["octo/demo"]
