"""The worker's sweep that compacts ended quests (``bot.journal.compaction``): every
``POLL_S`` it reads the quests over for longer than ``after`` (one sorted-set read), compacts
each and takes it off the list. Every worker runs it; two at once on one quest is harmless (the
script compacts once and answers ``already`` to the other).

``QUESTBOT_COMPACT_AFTER_HOURS`` (default 72, ``0``: never) sets ``after``: longer than
GitHub redelivers a webhook (three days), so a redelivery rarely has to bring a quest back.
The first pass after an upgrade from a release without compaction puts the quests that ended
before it on the list, once per Redis (``compaction.backfill``). With ``QUESTBOT_EXPORT_DIR``
set, records compacted ``QUESTBOT_EXPORT_AFTER_DAYS`` ago (default 30) are exported to files
there (``bot.journal.export``).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

from bot.agent.transcript import keep_what_explains
from bot.journal.compaction import Outcome, backfill, compact, due, settle
from bot.journal.export import due_exports, export, exported, note_compacted
from bot.journal.store import utcnow
from bot.journal.wire import RedisClient
from bot.runner.outage import REDIS_AWAY, pause

log = logging.getLogger(__name__)

POLL_S = 60.0
BATCH = 100
RETRY_S = 3600.0
"""A quest found busy (its last effects still going out) or changed is looked at again this
long after, or after ``after_s`` if shorter: a soak compacting minutes after a quest ends
(``scripts/soak.py``) would otherwise keep every quest whose last comment was still being
written an hour of its clock."""


async def compact_ended(client: RedisClient, quest_id: str) -> Outcome:
    """Compact one ended quest as the worker does: the conversations of its stages that
    answered are let go first (``bot.agent.transcript.keep_what_explains`` says why), then its
    keys are folded into one record."""
    await keep_what_explains(client, quest_id)
    return await compact(client, quest_id)


class CompactionSweep:
    def __init__(self, client: RedisClient, after_s: float, *,
                 clock: Callable[[], datetime] = utcnow, export_dir: Path | None = None,
                 export_after_s: float = 30 * 86_400.0, poll_s: float = POLL_S) -> None:
        self.client = client
        self.after_s = after_s
        self.poll_s = poll_s
        """Real seconds between two passes: a minute against ``after_s`` of days; a soak of
        minutes on a fast clock (``questbot_testing.chaos.worker``) passes more often."""
        self.clock = clock
        self.export_dir = export_dir
        """Where records go once compacted ``export_after_s`` ago (``bot.journal.export``);
        ``None``: they stay in Redis."""
        self.export_after_s = export_after_s
        self.backfilled = False

    async def sweep_once(self) -> int:
        """Compact the quests due now, a batch at most; how many were compacted."""
        now = self.clock()
        if not self.backfilled:  # once per Redis, whichever worker comes first
            await backfill(self.client, now)
            self.backfilled = True
        done = 0
        for quest_id in await due(self.client, now, self.after_s, limit=BATCH):
            try:
                outcome = await compact_ended(self.client, quest_id)
            except REDIS_AWAY:
                raise  # the loop's guard waits for Redis
            except Exception:  # one quest's damaged record must not stop the others
                log.exception("could not compact ended quest %s; it is kept as it is and "
                              "looked at again in an hour", quest_id)
                outcome = Outcome.CHANGED
            await settle(self.client, quest_id, outcome, now, self.after_s,
                         retry_s=min(RETRY_S, self.after_s))
            if outcome is Outcome.COMPACTED and self.export_dir is not None:
                await note_compacted(self.client, quest_id, now)
            done += outcome is Outcome.COMPACTED
        if self.export_dir is not None:
            await self._export(now)
        if done:
            log.info("compacted %d ended quests", done)
        return done

    async def _export(self, now: datetime) -> int:
        """Export the records compacted long enough ago to files; how many."""
        assert self.export_dir is not None
        count = 0
        for quest_id in await due_exports(self.client, now, self.export_after_s, limit=BATCH):
            try:
                count += await export(self.client, quest_id, self.export_dir)
            except REDIS_AWAY:
                raise
            except OSError as exc:  # the directory is full or gone: say so, try later
                log.error("could not export quest %s's record to %s (%s); it stays in "
                          "Redis and is tried again next pass", quest_id, self.export_dir,
                          exc.strerror)
                return count
            await exported(self.client, quest_id)
        return count

    async def step(self, stop: asyncio.Event) -> None:
        """One pass, then the pause: the worker's ``compaction`` loop (``Outage.guard``)."""
        await self.sweep_once()
        await pause(stop, self.poll_s)
