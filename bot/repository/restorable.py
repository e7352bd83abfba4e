"""A quest whose repository was deleted waits as long as the repository can come back, and no
longer.

GitHub lets an owner restore a deleted repository for 90 days (docs:
restoring-a-deleted-repository); it comes back with its id, its issues and its pull requests.
GitHub documents no webhook for the restore itself (the ``repository`` event has no such
action, the REST API no endpoint). Two things may follow it, and either takes the quest up
again through the one intake (``bot.repository.intake``, ``installation_repositories``
``added`` naming the repository's old id):

* **The repository given back to the App** — on an installation on selected repositories,
  the App was told it was removed, and an owner adds it again: ``installation_repositories``
  ``added`` (or an ``installation`` ``created``) arrives as a webhook.
* **Nothing at all** — on an installation on *all* repositories the restored repository is
  simply within reach again, and no event is documented for that. So questbot looks itself
  (``RestorableSweep.check_once``): every ``CHECK_S`` (``QUESTBOT_RESTORED_CHECK_S``, ten
  minutes by default) it asks ``GET /repositories/{id}`` once per waiting repository, with a
  token of the installation the repository was deleted from — never another's. A 200 naming
  the same id is the repository back: its answer becomes the ``added`` delivery GitHub would
  have sent (under its ``full_name`` now, so a repository renamed or transferred while deleted
  is followed there) and goes through ``Intake.handle`` like any webhook. A 404 (still gone,
  or out of the installation's reach) leaves the quest waiting; so does any error (5xx, a
  timeout, a rate limit): it is asked again next pass, and a failed look never ends a quest.
  At most ``CHECK_BATCH`` repositories are asked per pass (the rest the passes after, in
  turn), so questbot makes at most ``CHECK_BATCH * 3600 / CHECK_S`` of these requests an hour
  in all (300 by default), and one a pass for each waiting repository below that.

A repository made since under the same name has another id and takes up nothing: the webhook
path compares ids (``restored``), and the look asks by id.

Each quest parked by a deletion is noted here with the time (``RESTORABLE_KEY``, a sorted set
scored by milliseconds), the deleted repository's id (its ``DELETED_REPOSITORY_ID`` field) and
the installation it was deleted from (``DELETED_INSTALLATION_ID``; a quest noted before that
field was kept waits for the webhook only). ``RestorableSweep.sweep_once`` ends the quests
still parked by the deletion once the window (``QUESTBOT_RESTORABLE_DAYS``, GitHub's 90 by
default) is over: a ``killed`` event with the reason (``bot.quests.abandon``), so the quest
leaves the live index and compaction takes it. A quest that went on meanwhile (restored,
resumed by a person, ended) is only let go of.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from bot.core import ParkReason, Policy, State
from bot.github.forge import Forges
from bot.github.payloads import ident
from bot.github.payloads import text as field_text
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
DELETED_INSTALLATION_ID = "deleted_installation_id"
"""A quest's field: the installation its repository was deleted from, the only one questbot
asks through whether the repository is back."""
DEFAULT_DAYS = 90
"""How long GitHub lets an owner restore a deleted repository."""
POLL_S = 3600.0
"""Seconds between two looks for quests whose window is over (a read of Redis only)."""
BATCH = 100
CHECK_S = 600.0
"""Seconds between two looks on GitHub for restored repositories. A person who restored a
repository waits at most this long for its quests to go on; ten minutes keeps that short
while a waiting repository costs six requests an hour of its installation's 5,000 or more."""
CHECK_BATCH = 50
"""Repositories asked about per look, at most: the bound on these requests whatever the
number of deleted repositories (``CHECK_BATCH * 3600 / CHECK_S`` an hour)."""

TakeUp = Callable[[str, dict[str, Any], str], Awaitable[object]]
"""``Intake.handle``: a delivery (event name, payload, delivery id) through the one intake."""


def _ms(when: datetime) -> int:
    return int(when.timestamp() * 1000)


async def note_deleted(client: RedisClient, memory: ForgeMemory, quest_id: str,
                       repository_id: int | None, at: datetime,
                       installation_id: int | None = None) -> None:
    if repository_id is not None:
        await memory.set_quest_field(quest_id, DELETED_REPOSITORY_ID, repository_id)
    if installation_id is not None:
        await memory.set_quest_field(quest_id, DELETED_INSTALLATION_ID, installation_id)
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


def added_payload(installation_id: int, repository: dict[str, Any]) -> dict[str, Any]:
    """The ``installation_repositories`` ``added`` delivery GitHub would send for a repository
    back within an installation's reach (the webhook schema's fields the intake reads; no
    sender, since nobody is known to have done it)."""
    listed = {key: repository[key] for key in ("id", "node_id", "name", "full_name", "private")
              if key in repository}
    return {"action": "added", "installation": {"id": installation_id},
            "repositories_added": [listed], "repositories_removed": [],
            "repository_selection": "all", "sender": None}


@dataclass(frozen=True, slots=True)
class _Waiting:
    """Quests waiting on one deleted repository, as one installation saw it."""

    installation_id: int
    repository_id: int
    quests: list[str] = field(default_factory=list)
    deleted_ms: int = 0


@dataclass
class Looked:
    """What one look on GitHub found, for the log, metrics and tests."""

    asked: int = 0
    back: int = 0
    failed: int = 0


class RestorableSweep:
    def __init__(self, journal: Journal, memory: ForgeMemory, *,
                 days: float = DEFAULT_DAYS, clock: Callable[[], datetime] = utcnow,
                 poll_s: float = POLL_S, forges: Forges | None = None,
                 take_up: TakeUp | None = None, check_s: float = CHECK_S,
                 check_batch: int = CHECK_BATCH) -> None:
        self.journal = journal
        self.client: RedisClient = journal.client
        self.memory = memory
        self.days = days
        self.clock = clock
        self.poll_s = poll_s
        self.forges = forges
        self.take_up = take_up
        """``None`` (with ``forges``): questbot waits for the webhook only."""
        self.check_s = check_s
        self.check_batch = check_batch
        self.last_look = Looked()
        self._next_check: datetime | None = None
        self._next_sweep: datetime | None = None
        self._turn = 0
        """Where the next look starts among the waiting repositories, when there are more
        than ``check_batch``: each is asked in turn."""

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

    async def check_once(self) -> int:
        """Ask GitHub, once per waiting repository, whether it is back within the reach of the
        installation it was deleted from, and take its quests up again if so; how many
        repositories came back."""
        if self.forges is None or self.take_up is None:
            return 0
        groups = await self._waiting_repositories()
        if not groups:
            self._turn = 0
            return 0
        start = self._turn % len(groups)
        turn = (groups[start:] + groups[:start])[:self.check_batch]
        self._turn = start + len(turn)
        look = Looked()
        for group in turn:
            look.asked += 1
            try:
                look.back += await self._look(group)
            except REDIS_AWAY:
                raise  # the loop's guard waits for Redis
            except Exception as exc:  # GitHub's trouble: the quests wait, asked again next look
                look.failed += 1
                log.warning("could not ask GitHub whether repository %s (installation %s) was "
                            "restored: %s: %s; its quests wait and it is asked again in %g s",
                            group.repository_id, group.installation_id, type(exc).__name__,
                            exc, self.check_s)
        self.last_look = look
        return look.back

    async def _waiting_repositories(self) -> list[_Waiting]:
        by: dict[tuple[int, int], _Waiting] = {}
        for quest_id, deleted_ms in await waiting(self.client):
            fields = await self.memory.quest_fields(quest_id, DELETED_REPOSITORY_ID,
                                                    DELETED_INSTALLATION_ID)
            repository_id, installation_id = (ident(_int(v)) for v in fields)
            if repository_id is None or installation_id is None:
                continue  # noted before questbot kept the installation: the webhook only
            group = by.setdefault((installation_id, repository_id),
                                  _Waiting(installation_id, repository_id, deleted_ms=deleted_ms))
            group.quests.append(quest_id)
        return [by[key] for key in sorted(by)]

    async def _look(self, group: _Waiting) -> int:
        assert self.forges is not None and self.take_up is not None
        answer = await self.forges.repository_by_id(group.installation_id, group.repository_id)
        if answer is None:
            return 0  # still deleted, or out of this installation's reach: it waits
        name = field_text(answer.get("full_name"))
        if ident(answer.get("id")) != group.repository_id or name.count("/") != 1:
            log.warning("GitHub answered repository %s with another (%r, id %r): its quests "
                        "wait", group.repository_id, name, answer.get("id"))
            return 0
        log.info("repository %s (%s) is back within reach of installation %s, with nothing "
                 "sent for it: questbot takes up its %d waiting quest(s) as if it had been "
                 "given back to the App", group.repository_id, name, group.installation_id,
                 len(group.quests))
        await self.take_up("installation_repositories",
                           added_payload(group.installation_id, answer),
                           f"restored-{group.repository_id}-{group.deleted_ms}")
        for quest_id in group.quests:  # taken up, or gone on before: nothing left to look for
            if await self.memory.quest(quest_id, PARKED_BY_REPOSITORY) != Change.DELETED.value:
                await let_go(self.client, quest_id)
        return 1

    async def pass_once(self) -> int:
        """The look on GitHub when ``check_s`` has passed since the last, and the end of the
        quests whose window is over when ``poll_s`` has; how many repositories came back and
        quests were ended."""
        now = self.clock()
        done = 0
        if self._next_check is None or now >= self._next_check:
            self._next_check = now + timedelta(seconds=self.check_s)
            done += await self.check_once()
        if self._next_sweep is None or now >= self._next_sweep:
            self._next_sweep = now + timedelta(seconds=self.poll_s)
            done += await self.sweep_once()
        return done

    async def step(self, stop: asyncio.Event) -> None:
        """One pass, then the pause: the worker's ``restorable`` loop (``Outage.guard``)."""
        await self.pass_once()
        await pause(stop, min(self.check_s, self.poll_s))


def _int(value: str | None) -> int | None:
    return int(value) if value is not None and value.isdigit() else None
