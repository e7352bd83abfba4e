"""The worker's look, now and then, at runs a repository still owes (``bot.journal.owed_runs``):
lessons whose effect the runner gave up on, a reflection wave due with attempts left. Each part
that owes runs adds a sweep to the adapter context (``AdapterContext.sweeps``): given a
repository, it queues again what is owed there — the same call a quest's change makes, so an
effect still queued or retrying is not doubled (its key) and one the runner gave up on goes
again as its next occurrence — and says whether anything is still owed.

``sweep_once`` runs in the worker's loops (every ``POLL_S``; cheap: one sorted-set read) and in
``Worker.settle``; the claim makes it at most once per repository per interval, across every
worker.
"""

from __future__ import annotations

import asyncio
import logging

from bot.adapters import AdapterContext
from bot.journal.owed_runs import OwedRuns
from bot.runner.outage import REDIS_AWAY, pause

log = logging.getLogger(__name__)

POLL_S = 30.0


class OwedSweep:
    def __init__(self, ctx: AdapterContext, owed: OwedRuns | None = None) -> None:
        self.ctx = ctx
        self.owed = owed or OwedRuns(ctx.journal.client)

    async def sweep_once(self) -> int:
        """Queue again what the due repositories owe; how many repositories were looked at."""
        if not self.ctx.sweeps:
            return 0
        claimed = await self.owed.claim(self.ctx.clock())
        for repo, until in claimed:
            try:
                still = [await sweep(repo) for sweep in self.ctx.sweeps]
            except REDIS_AWAY:
                raise  # the loop's guard waits for Redis; the repository is looked at later
            except Exception:  # one repository's trouble (its settings) must not stop the rest
                log.exception("could not queue again the runs %s owes; trying again in %s",
                              repo, self.owed.interval)
                continue
            if any(still):
                log.info("%s still owes model runs; they are queued again", repo)
            else:
                await self.owed.forget(repo, until)
        return len(claimed)

    async def step(self, stop: asyncio.Event) -> None:
        """One pass, then the pause: the worker's ``owed`` loop (``Outage.guard``)."""
        await self.sweep_once()
        await pause(stop, POLL_S)
