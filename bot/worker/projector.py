"""The projection of every quest onto GitHub: a journal that tells listeners about each applied
event, and the projector that brings the quests' views (status comment, check run) up to date.

Whoever applies an event — intake, an adapter's outcome, a timer — the ``ObservedJournal``
hears it, and the ``Projector`` syncs the quest's view, latest state wins. A view that could not
be written is owed in Redis (``bot.journal.views``) until a sync of it succeeds.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from bot.adapters import Sync
from bot.core import Event, InvalidTransition, Quest
from bot.journal import Applied, Journal, PermanentError
from bot.journal.records import NewerRecord
from bot.journal.store import PolicySource
from bot.journal.views import OwedViews
from bot.runner import REDIS_AWAY, Outage

log = logging.getLogger(__name__)

class ObservedJournal(Journal):
    """A journal that tells listeners about every applied event, whoever applied it (intake,
    an adapter's outcome, a timer), so the GitHub projection follows every transition."""

    listeners: list[Callable[[Applied], None]]
    event_listeners: list[Callable[[Event, Quest], Awaitable[None]]]
    """Awaited with each applied event and the quest after it (``bot.reviews.agreement``)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.listeners = []
        self.event_listeners = []

    async def apply_many(self, events: Sequence[Event], policy: PolicySource, *,
                         durable: bool | None = None) -> list[Applied | InvalidTransition]:
        results = await super().apply_many(events, policy, durable=durable)
        for result in results:
            if isinstance(result, Applied) and not result.duplicate:
                for listener in self.listeners:
                    listener(result)
        if self.event_listeners:
            for event, result in zip(events, results, strict=True):
                if isinstance(result, Applied) and not result.duplicate:
                    for heard in self.event_listeners:
                        await heard(event, result.quest)
        return results


@dataclass
class Projector:
    """Brings quests' GitHub views up to date, latest state wins, one quest at a time each.

    A view that could not be written (GitHub answered 429, the worker died mid-write) is owed
    until a sync of it succeeds: ``views`` keeps that in Redis, and ``run`` syncs views owed
    longer than ``retry_after_s`` — whichever worker began them — so a quest whose last
    transition was the one that failed does not show its old state for good."""

    sync: Sync
    outage: Outage = field(default_factory=Outage)
    views: OwedViews | None = None
    load: Callable[[str], Awaitable[Quest | None]] | None = None
    """The quest as stored now, for a view found owed."""
    retry_after_s: float = 10.0
    coalesce_s: float = 1.0
    """How long the projector lets transitions gather after it is woken, before it writes:
    a quest that passes through a state in a moment (triage, a merge, a decision that starts
    a stage) is shown once, at the state it settles in, not once per state — each write costs
    GitHub's rate limit — while a state that lasts (an agent stage, a checkpoint) is shown
    within about this long of being reached."""
    parallel: int = 8
    """How many quests' views ``drain`` writes at once (``drain`` says why)."""
    pending: dict[str, Quest] = field(default_factory=dict)
    wake: asyncio.Event = field(default_factory=asyncio.Event)
    _looked: float = 0.0

    def notify(self, applied: Applied) -> None:
        self.pending[applied.quest.id] = applied.quest
        self.wake.set()

    async def drain(self) -> int:
        """Sync every pending view, up to ``parallel`` quests at once. A view that fails stays
        owed (``views``) and is tried again later; while Redis is away it stays pending and
        the error is raised, for ``run`` to wait until Redis is back.

        At once, because a sync mostly waits: each write waits for its installation's turn
        (``bot.journal.pacing``: a second apart once a burst is spent), and one quest's wait
        must not hold every other installation's views. One after another, a soak of sixteen
        quests over 48 installations left closed quests' views unwritten for over a minute
        behind other installations' turns, and their compaction waiting with them."""
        done = 0
        gate = asyncio.Semaphore(max(1, self.parallel))
        away: list[BaseException] = []

        async def one(qid: str, quest: Quest) -> None:
            async with gate:
                if away:  # Redis went away: the rest stay pending for the next turn
                    self.pending.setdefault(qid, quest)
                    return
                try:
                    await self._sync_one(qid, quest)
                except REDIS_AWAY as exc:
                    away.append(exc)

        while self.pending and not away:
            batch = list(self.pending.items())
            self.pending.clear()
            await asyncio.gather(*(one(qid, quest) for qid, quest in batch))
            done += len(batch)
        if away:
            raise away[0]
        return done

    async def catch_up(self, quest_id: str) -> None:
        """Sync ``quest_id``'s view now if it is pending: what the worker does before a long
        effect of the quest (an agent stage, a proof) starts, so GitHub shows the stage as it
        begins — whatever the model or the proof then does, and however the loops are driven
        (``Worker.settle`` runs effects and the projection in turn)."""
        quest = self.pending.pop(quest_id, None)
        if quest is not None:
            await self._sync_one(quest_id, quest)

    async def _sync_one(self, qid: str, quest: Quest) -> None:
        score = 0.0
        try:
            score = await self.views.begin(qid) if self.views is not None else 0.0
            await self.sync(quest)
            if self.views is not None:
                await self.views.done(qid, score)
        except REDIS_AWAY:
            self.pending.setdefault(qid, quest)  # unless a newer state arrived meanwhile
            raise
        except NewerRecord as exc:  # a rolling upgrade: stays owed, for a newer worker
            log.error("quest %s's GitHub view is left for a newer questbot: %s", quest.id, exc)
        except PermanentError:
            log.exception("quest %s's GitHub view cannot be written; it is not tried again "
                          "until the quest changes", quest.id)
            if self.views is not None:
                await self.views.done(qid, score)
        except Exception:
            log.exception("could not bring quest %s's GitHub view up to date; it is tried "
                          "again in %.0f s", quest.id, self.retry_after_s)

    async def gather(self) -> None:
        """Wait ``coalesce_s`` for the transitions that follow the one that woke us."""
        if self.coalesce_s > 0:
            await asyncio.sleep(self.coalesce_s)

    async def owed(self) -> int:
        """Queue the views owed longer than ``retry_after_s``; how many."""
        if self.views is None or self.load is None:
            return 0
        found = 0
        for qid in await self.views.due(older_than_s=self.retry_after_s):
            if qid in self.pending:
                continue
            quest = await self.load(qid)
            if quest is not None:
                self.pending[qid] = quest
                found += 1
        return found

    async def run(self, stop: asyncio.Event) -> None:
        async def turn() -> None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.wake.wait(), timeout=1.0)
            if self.wake.is_set():
                await self.gather()
            self.wake.clear()
            now = time.monotonic()
            if now - self._looked >= self.retry_after_s / 2:
                self._looked = now
                await self.owed()
            await self.drain()

        await self.outage.guard("projection", turn, stop)
