"""A quest whose repository was deleted waits as long as the repository can come back, and no
longer.

GitHub lets an owner restore a deleted repository for 90 days (docs:
restoring-a-deleted-repository); it comes back with its id, its issues and its pull requests.
GitHub documents no webhook for the restore itself (the ``repository`` event has no such
action, the REST API no endpoint), and the App, told the repository was removed, reaches it
again only once it is given access: ``installation_repositories`` ``added`` (or an
``installation`` ``created``) naming the repository's old id is what arrives, and that takes
the quest up again (``bot.repository.intake``). A repository made since under the same name
has another id and takes up nothing.

Each quest parked by a deletion is noted here with the time (``RESTORABLE_KEY``, a sorted set
scored by milliseconds) and the deleted repository's id (its ``DELETED_REPOSITORY_ID``
field). ``RestorableSweep`` ends the quests still parked by the deletion once the window
(``QUESTBOT_RESTORABLE_DAYS``, GitHub's 90 by default) is over: a ``killed`` event with the
reason (``bot.quests.abandon``), so the quest leaves the live index and compaction takes it.
A quest that went on meanwhile (restored, resumed by a person, ended) is only let go of.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from datetime import datetime
from typing import Any

from bot.core import ParkReason, Policy, State
from bot.journal import Journal
from bot.journal.memory import PARKED_BY_REPOSITORY, ForgeMemory
from bot.journal.store import utcnow
from bot.journal.wire import RedisClient, text
from bot.quests.abandon import Abandoned, abandon
from bot.runner.outage import REDIS_AWAY, pause
from bot.words.repository import Change, gone_reason

log = logging.getLogger(__name__)

RESTORABLE_KEY = "gh:repositories-deleted"
"""Quests parked by their repository's deletion → when it was deleted (epoch ms)."""
DELETED_REPOSITORY_ID = "deleted_repository_id"
"""A quest's field: the id of its repository when it was deleted; only a repository of that
id given back to the App is the same one restored."""
DEFAULT_DAYS = 90
"""How long GitHub lets an owner restore a deleted repository."""
POLL_S = 3600.0
BATCH = 100


def _ms(when: datetime) -> int:
    return int(when.timestamp() * 1000)


async def note_deleted(client: RedisClient, memory: ForgeMemory, quest_id: str,
                       repository_id: int | None, at: datetime) -> None:
    if repository_id is not None:
        await memory.set_quest_field(quest_id, DELETED_REPOSITORY_ID, repository_id)
    await client.zadd(RESTORABLE_KEY, {quest_id: _ms(at)})


async def let_go(client: RedisClient, quest_id: str) -> None:
    await client.zrem(RESTORABLE_KEY, quest_id)


async def restored(memory: ForgeMemory, quest_id: str, repository_id: int | None) -> bool:
    """Whether the repository given back to the App is the one deleted under the quest."""
    deleted = await memory.quest(quest_id, DELETED_REPOSITORY_ID)
    return repository_id is not None and deleted == str(repository_id)


async def waiting(client: RedisClient) -> list[tuple[str, int]]:
    """Every quest waiting for its repository, with when it was deleted (ms)."""
    rows: Any = await client.zrange(RESTORABLE_KEY, 0, -1, withscores=True)
    return [(text(member), int(score)) for member, score in rows]


class RestorableSweep:
    def __init__(self, journal: Journal, memory: ForgeMemory, *,
                 days: float = DEFAULT_DAYS, clock: Callable[[], datetime] = utcnow,
                 poll_s: float = POLL_S) -> None:
        self.journal = journal
        self.client: RedisClient = journal.client
        self.memory = memory
        self.days = days
        self.clock = clock
        self.poll_s = poll_s

    async def sweep_once(self) -> int:
        """End the quests whose repository can no longer be restored; how many were ended."""
        now = self.clock()
        cutoff = _ms(now) - int(self.days * 86_400_000)
        due: Any = await self.client.zrangebyscore(RESTORABLE_KEY, "-inf", cutoff, start=0,
                                                   num=BATCH)
        ended = 0
        for quest_id in (text(m) for m in due):
            try:
                ended += await self._end(quest_id, now)
            except REDIS_AWAY:
                raise  # the loop's guard waits for Redis
            except Exception:  # one quest's trouble must not stop the others
                log.exception("could not end quest %s, whose repository was deleted; it is "
                              "looked at again next pass", quest_id)
                continue
            await let_go(self.client, quest_id)
        return ended

    async def _end(self, quest_id: str, now: datetime) -> bool:
        _v, quest = await self.journal.snapshot(quest_id)
        if (quest is None or quest.state is not State.PARKED
                or quest.park_reason is not ParkReason.REPOSITORY_CHANGED
                or await self.memory.quest(quest_id, PARKED_BY_REPOSITORY)
                != Change.DELETED.value):
            return False  # it went on meanwhile (restored, resumed, ended): nothing to end
        result = await abandon(self.journal, quest_id, reason=gone_reason(quest.repo, self.days),
                               at=now, event_id=f"repository-gone:{quest_id}",
                               default=Policy())
        if isinstance(result, Abandoned):
            log.info("quest %s abandoned: %s was deleted %g days ago and was not restored",
                     quest_id, quest.repo, self.days)
            return True
        log.info("quest %s not abandoned: %s", quest_id, result.why)
        return False

    async def step(self, stop: asyncio.Event) -> None:
        """One pass, then the pause: the worker's ``restorable`` loop (``Outage.guard``)."""
        await self.sweep_once()
        await pause(stop, self.poll_s)
