"""The snapshot that lags: a quest's stored snapshot is written every ``SNAPSHOT_EVERY`` journal
entries, not every apply, and a reader folds the entries after it.

Why. The snapshot was ~2.5 KB of the ~2.9 KB an apply sent, and every byte handed to the apply
script costs Redis ~9 instructions whatever it holds (``docs/performance.md``, *The journal*).
So ``scripts.APPLY`` writes the quest only when the apply sends it; the hash's ``v`` is still
the journal's length, written every apply, and it is what the script's version check compares
(exactly-once and atomicity do not depend on the quest field at all).

The record. A snapshot written this way is quest record version 2, which names the journal
version it is the fold of (``records.dump_quest(quest, at)``); a release that only knows
version 1 (the quest at ``v``) refuses it with ``NewerRecord`` rather than take a lagging quest
for the current one. Version 1 records (older releases, ``as_release(quest=1)``) are the quest
at ``v``; a writer that finds one writes its next snapshot in full, so a version 1 record never
lags.

When the snapshot is sent (``due``): when the stored one is version 1 or absent, when
``SNAPSHOT_EVERY`` entries or more would follow it, and whenever the quest ends — compaction,
the backfill of the compaction list and the ended quests' readers then find the quest
itself, never a fold to do.

Reading (``catch_up``): the entries after the snapshot, ``XREVRANGE … COUNT v - at`` (at most
``SNAPSHOT_EVERY - 1`` of them), each folded with the policy its version was recorded under
(``bot.journal.policies``), in one round trip for any number of quests.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from bot.core import TERMINAL, Event, Policy, Quest, fold
from bot.journal.errors import CorruptJournal
from bot.journal.keys import quest_keys
from bot.journal.policies import parse_policies
from bot.journal.records import RecordError, load_event, load_quest_at, versions
from bot.journal.wire import Batch, RedisClient, stream_rows

SNAPSHOT_EVERY = 8
"""Entries between two written snapshots at most (``docs/decisions.md``, *The snapshot that
lags*, says why 8)."""


def due(at: int | None, version_after: int, quest: Quest) -> bool:
    """Whether an apply that leaves the quest at ``version_after`` sends its snapshot, the
    stored one being at ``at`` (``None``: a version 1 record, or none)."""
    return (at is None or version_after - at >= SNAPSHOT_EVERY or quest.state in TERMINAL
            or versions()["quest"] == 1)


@dataclass
class Stored:
    """A snapshot as read: the hash's version, its quest and the version that quest is at."""

    quest_id: str
    version: int
    quest: Quest | None
    at: int | None
    """The version the stored quest record is the fold of (what a writer's next snapshot is
    due after); ``None`` for a version 1 record (at ``version``) or no quest."""
    caught_up: bool = False
    """``quest`` is the quest at ``version`` since ``catch_up`` folded the entries after
    ``at`` into it."""

    @property
    def lags(self) -> bool:
        return (not self.caught_up and self.quest is not None and self.at is not None
                and self.at < self.version)


def parse(quest_id: str, v: bytes | str | None, qjson: bytes | str | None) -> Stored:
    """The snapshot hash's ``v`` and ``quest`` fields as read, or ``CorruptJournal`` saying
    how to rebuild an unreadable one."""
    version = int(v) if v is not None else 0
    if qjson is None:
        return Stored(quest_id, version, None, None)
    try:
        quest, at = load_quest_at(qjson)
    except (RecordError, ValueError) as exc:
        raise CorruptJournal(f"stored snapshot cannot be read: {exc}; rebuild it from the "
                             "journal with `python -m bot replay`") from exc
    if at is not None and at > version:
        raise CorruptJournal(f"the snapshot of quest {quest_id} is at version {at}, past its "
                             f"journal's {version}; rebuild it with `python -m bot replay`")
    return Stored(quest_id, version, quest, at)


async def catch_up(client: RedisClient, stored: Sequence[Stored]) -> None:
    """Fold the entries after each lagging snapshot into it (in place: ``quest`` becomes the
    quest at ``version``), reading every quest's entries and policies in one round trip."""
    lagging = [s for s in stored if s.lags]
    rows: dict[str, list[tuple[str, dict[str, Any]]]] = {s.quest_id: [] for s in lagging}
    policies: dict[str, dict[Any, Any]] = {}
    count = {s.quest_id: s.version - s.at for s in lagging if s.at is not None}
    while lagging:
        # the newest entries: those after the snapshot, and any a writer appended since it was
        # read (the fold stops at its version); read on while the oldest read is still after it
        batch = Batch()
        for s in lagging:
            batch.add("XREVRANGE", quest_keys(s.quest_id).events, "+", "-", "COUNT",
                      count[s.quest_id])
            if s.quest_id not in policies:
                batch.add("HGETALL", quest_keys(s.quest_id).policies)
        replies = iter(await batch.execute(client))
        more: list[Stored] = []
        for s in lagging:
            assert s.at is not None
            read = next(replies)
            if isinstance(read, Exception):
                raise read
            if s.quest_id not in policies:
                bodies = next(replies)
                if isinstance(bodies, Exception):
                    raise bodies
                policies[s.quest_id] = _pairs(bodies)
            found = _rows(read)
            rows[s.quest_id] = found
            versions_read = [int(f.get("v", 0)) for _, f in found]
            if len(found) == count[s.quest_id] and min(versions_read) > s.at + 1:
                count[s.quest_id] = max(versions_read) - s.at
                more.append(s)
        lagging = more
    for s in stored:
        if s.lags:
            after = [(i, f) for i, f in reversed(rows[s.quest_id])
                     if s.at is not None and s.at < int(f.get("v", 0)) <= s.version]
            s.quest = fold_after(s, after, policies[s.quest_id])
            s.caught_up = True


def _pairs(reply: Any) -> dict[Any, Any]:
    """``HGETALL``'s answer as a mapping (``Batch`` answers RESP2's flat list, a client's
    pipeline a dict)."""
    if isinstance(reply, dict):
        return reply
    return dict(zip(reply[::2], reply[1::2], strict=True))


def _rows(reply: Any) -> list[tuple[str, dict[str, Any]]]:
    """Stream entries as ``stream_rows`` gives them, from either form of the answer."""
    return stream_rows([(entry_id, _pairs(fields or [])) for entry_id, fields in reply or ()])


def fold_after(s: Stored, rows: Sequence[tuple[str, dict[str, bytes]]],
               policies: dict[Any, Any]) -> Quest:
    """``s.quest`` with the journal entries ``rows`` (those after it, oldest first) folded in,
    each under the policy recorded for its version."""
    assert s.quest is not None and s.at is not None
    bodies, changes = parse_policies(policies, s.quest_id)
    since = sorted(changes)
    events: list[Event] = []
    decided: list[Policy | None] = []
    expected = s.at + 1
    for entry_id, f in rows:
        try:
            version = int(f["v"])
            events.append(load_event(f["e"]))
        except (KeyError, RecordError, ValueError) as exc:
            raise CorruptJournal(f"journal entry {entry_id} of quest {s.quest_id} cannot be "
                                 f"read: {exc}") from exc
        if version != expected:
            break
        expected += 1
        at = bisect_right(since, version)
        digest = changes[since[at - 1]] if at else None
        if digest is None or digest not in bodies:
            raise CorruptJournal(f"journal entry {entry_id} of quest {s.quest_id} has no "
                                 "recorded policy to fold it with after its snapshot; rebuild "
                                 "the snapshot with `python -m bot replay`")
        decided.append(bodies[digest])
    if expected != s.version + 1:
        raise CorruptJournal(f"the journal of quest {s.quest_id} does not hold the entries "
                             f"{s.at + 1}..{s.version} after its snapshot; rebuild it with "
                             "`python -m bot replay`")
    result = fold(events, Policy(), quest=s.quest, policies=decided)
    if result.invalid is not None or result.quest is None:
        raise CorruptJournal(f"the journal entries of quest {s.quest_id} after its snapshot "
                             f"do not fold onto it ({result.invalid}); rebuild it with "
                             "`python -m bot replay`")
    return result.quest
