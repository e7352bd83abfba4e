"""Which repositories owe a model run that may need asking again, and when to look.

A lesson (``bot.lessons.runs``) or a reflection attempt (``bot.reflection.runs``)
is *owed* from when its effect is queued until its fate is written. The effect runner retries
it with back-off; once it gives up (the endpoint was down longer than that), the run used to be
queued again only by the next change of a quest in the repository — on a quiet repository, a
wave stayed due and its held quests waited for nobody knew what. So the worker also looks
again now and then (``bot.worker.owed_sweep``), at most once per ``INTERVAL`` per repository,
across every worker.

One sorted set, ``owed:{owed}:repos`` (one slot on a cluster): repository → when it is next
looked at, in epoch milliseconds. Queuing an owed run sets it ``INTERVAL`` from now (the run
was just asked for); ``claim`` hands the repositories that are due to one worker and moves
each ``INTERVAL`` on in the same script, so two workers never look at one repository in the
same interval; ``forget`` removes one that owes nothing now — unless a run was queued since
(the time moved), so a run owed meanwhile keeps its look.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from bot.journal.wire import RedisClient

OWED_REPOS = "owed:{owed}:repos"
INTERVAL = timedelta(minutes=10)
CLAIMED = 50
"""Repositories one claim hands out at most: the rest wait for the next pass."""

_CLAIM = """
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, ARGV[3])
for _, repo in ipairs(due) do redis.call('ZADD', KEYS[1], ARGV[2], repo) end
return due
"""

_FORGET = """
if redis.call('ZSCORE', KEYS[1], ARGV[1]) == ARGV[2] then
  return redis.call('ZREM', KEYS[1], ARGV[1])
end
return 0
"""


def _ms(when: datetime) -> int:
    return int(when.timestamp() * 1000)


class OwedRuns:
    def __init__(self, client: RedisClient, interval: timedelta = INTERVAL) -> None:
        self.client = client
        self.interval = interval
        self._claim = client.register_script(_CLAIM)
        self._forget = client.register_script(_FORGET)

    async def owed(self, repo: str, now: datetime) -> None:
        """A run of ``repo`` was just queued: look at it again ``interval`` from now."""
        await self.client.zadd(OWED_REPOS, {repo: _ms(now + self.interval)})

    async def claim(self, now: datetime) -> list[tuple[str, int]]:
        """The repositories due at ``now``, each moved ``interval`` on for this worker
        alone: (repository, the time it was moved to)."""
        until = _ms(now + self.interval)
        raw: Any = await self._claim(keys=[OWED_REPOS], args=[_ms(now), until, CLAIMED])
        return [(r.decode() if isinstance(r, bytes) else str(r), until) for r in raw]

    async def forget(self, repo: str, claimed: int) -> bool:
        """``repo`` owes nothing: stop looking, unless a run was queued since the claim."""
        return bool(await self._forget(keys=[OWED_REPOS], args=[repo, str(claimed)]))
