"""Reading a quest back from Redis: its snapshot, its journal, the policies its events were
decided under, which event ids it has seen and its outbox (a part of ``Journal``).

``Journal`` takes these from ``JournalReads``; they read what ``apply`` wrote (``bot.journal.store``
says how) and write nothing. They read a quest's own keys while they exist, and its compacted
record once they are gone (``bot.journal.compaction``). A snapshot or a journal entry that
cannot be read raises ``CorruptJournal``, naming it (a snapshot can be rebuilt from the
journal: ``replay``).
"""

from __future__ import annotations

from collections.abc import AsyncIterator

from bot.core import Event, Policy, Quest
from bot.journal.answers import JournalEntry
from bot.journal.compaction import read_compacted
from bot.journal.errors import CorruptJournal
from bot.journal.keys import quest_keys
from bot.journal.policies import read_policies
from bot.journal.records import RecordError, load_event
from bot.journal.records import load_quest as _load_quest
from bot.journal.snapshots import catch_up, parse
from bot.journal.wire import RedisClient, stream_rows, text


class JournalReads:
    """The read side of ``Journal``: what one quest's keys hold, read as it is now."""

    client: RedisClient

    async def snapshot(self, quest_id: str) -> tuple[int, Quest | None]:
        """The stored version and the quest at it (``(0, None)`` for a quest never seen): the
        snapshot with the entries after it folded in (``bot.journal.snapshots``)."""
        v, qjson = await self.client.hmget(quest_keys(quest_id).snap, ["v", "quest"])
        if v is not None and qjson is None:
            record = await read_compacted(self.client, quest_id)
            if record is not None:
                return record.version, record.quest()
        stored = parse(quest_id, v, qjson)
        await catch_up(self.client, [stored])  # the entries after a snapshot that lags
        return stored.version, stored.quest

    async def entries(self, quest_id: str, *, batch: int = 1000) -> AsyncIterator[JournalEntry]:
        """The journal of one quest, oldest first, read in batches."""
        key = quest_keys(quest_id).events
        start = "-"
        while True:
            rows = stream_rows(await self.client.xrange(key, min=start, max="+", count=batch))
            if not rows and start == "-":
                record = await read_compacted(self.client, quest_id)
                for entry in record.entries() if record is not None else ():
                    yield entry
                return
            for entry_id, f in rows:
                try:
                    event = load_event(f["e"])
                except (KeyError, RecordError, ValueError) as exc:
                    raise CorruptJournal(f"journal entry {entry_id} of quest {quest_id} "
                                         f"cannot be read: {exc}") from exc
                yield JournalEntry(int(f["v"]), entry_id, event)
            if len(rows) < batch:
                return
            start = "(" + rows[-1][0]

    async def events(self, quest_id: str) -> list[Event]:
        return [entry.event async for entry in self.entries(quest_id)]

    async def policies(self, quest_id: str) -> tuple[dict[str, Policy], dict[int, str]]:
        """The policies the quest's events were decided under, by digest, and where each took
        over: journal version → digest (``bot.journal.policies``)."""
        found = await read_policies(self.client, quest_id)
        if not any(found):
            record = await read_compacted(self.client, quest_id)
            if record is not None:
                return record.policies()
        return found

    async def recorded_policy(self, quest_id: str, default: Policy) -> Policy:
        """The policy the quest's latest entry was decided under (``default`` if it recorded
        none): what a process that does not read the repository's settings — the web's
        reviews, the command line, a repository that is gone — decides the next event under,
        as the worker would."""
        bodies, took_over = await self.policies(quest_id)
        if not took_over:
            return default
        return bodies.get(took_over[max(took_over)], default)

    async def contains(self, quest_id: str, event_id: str) -> bool:
        if await self.client.hexists(quest_keys(quest_id).ids, event_id):
            return True
        record = await read_compacted(self.client, quest_id)
        return record is not None and event_id in record.ids()

    async def outbox(self, quest_id: str) -> list[tuple[str, str]]:
        """Undelivered effects of a quest: ``(outbox entry id, effect key)``, oldest first."""
        rows = stream_rows(await self.client.xrange(quest_keys(quest_id).outbox, "-", "+"))
        return [(entry_id, text(fields["k"])) for entry_id, fields in rows]


def load_snapshot(text: bytes | str) -> Quest:
    """A stored snapshot's quest, or ``CorruptJournal`` saying how to rebuild it."""
    try:
        return _load_quest(text)
    except (RecordError, ValueError) as exc:
        raise CorruptJournal(f"stored snapshot cannot be read: {exc}; rebuild it from the "
                             "journal with `python -m bot replay`") from exc
