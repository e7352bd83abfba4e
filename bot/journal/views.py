"""Views still owed: quests whose GitHub view (status comment, check run, inbox) a worker set
out to bring up to date and has not been seen to finish.

A view is a projection, written after the journal, by whichever worker applied the event; it
is not an effect in an outbox. So when its write fails — a 429 from GitHub, a worker killed —
nothing in the journal remembers that GitHub still shows an older state, and a quest whose
last transition was the one that failed (it closed) would show it for good (a chaos run left
check runs ``in_progress`` on closed quests that way). Hence this ledger, one sorted set per
shard (``views:{shard-N}``), member the quest id, score when the write was begun:

* ``begin`` before a sync writes the member with a fresh score;
* ``done`` after it succeeded removes the member — only if its score is still the one this
  sync wrote, so a sync begun meanwhile by another worker keeps its claim;
* ``due`` lists members older than a grace period: their sync failed or its worker died, and
  whoever finds them syncs them again (the sync reads the quest as it is then).

Each call touches one shard's key, so it runs unchanged on Redis Cluster.
"""

from __future__ import annotations

import random
import time
from collections.abc import Sequence

from bot.journal.keys import creating_key, quest_gh_key, shard_of
from bot.journal.wire import RedisClient, text

_DONE = """
-- KEYS: the shard's views set; ARGV: quest id, the score its sync wrote
local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
if score and tonumber(score) == tonumber(ARGV[2]) then
  return redis.call('ZREM', KEYS[1], ARGV[1])
end
return 0
"""


def views_key(shard: int) -> str:
    return f"views:{{shard-{shard}}}"


def view_lease_key(quest_id: str) -> str:
    """The lease a worker holds while it writes the quest's view
    (``ForgeMemory.quest_creating(quest_id, "view")``, ``bot.views.projection``)."""
    return creating_key(quest_gh_key(quest_id), "view")


class OwedViews:
    def __init__(self, client: RedisClient, shards: int) -> None:
        self.client = client
        self.shards = shards
        self._done = client.register_script(_DONE)

    async def begin(self, quest_id: str) -> float:
        """Note that ``quest_id``'s view is being written; the score to hand to ``done``."""
        score = time.time() * 1000 + random.random()  # noqa: S311 - uniqueness, not secrecy
        await self.client.zadd(views_key(shard_of(quest_id, self.shards)), {quest_id: score})
        return score

    async def done(self, quest_id: str, score: float) -> None:
        await self._done(keys=[views_key(shard_of(quest_id, self.shards))],
                         args=[quest_id, repr(score)])

    async def due(self, *, older_than_s: float, limit: int = 100) -> Sequence[str]:
        """Quests whose view was begun more than ``older_than_s`` ago and not seen done, but
        those a worker is writing now (it holds the view's lease, ``ForgeMemory.creating``,
        renewed while it lives): a sync waiting its installation's turn for longer than the
        grace is not a failed one, and a second worker taking it up would only wait for the
        lease and write nothing. Its own ``done`` clears it; if it dies, the lease lapses."""
        until = time.time() * 1000 - older_than_s * 1000
        found: list[str] = []
        for shard in range(self.shards):
            members = await self.client.zrangebyscore(views_key(shard), "-inf", until,
                                                      start=0, num=limit - len(found))
            found += [text(m) for m in members]
            if len(found) >= limit:
                break
        if not found:
            return found
        async with self.client.pipeline(transaction=False) as pipe:
            for qid in found:
                pipe.exists(view_lease_key(qid))
            writing = await pipe.execute()
        return [qid for qid, held in zip(found, writing, strict=True) if not held]
