"""Recovery: rebuild a quest from its journal and compare with its snapshot.

The journal is the record of decisions; the snapshot is a cache of ``fold(journal)``. If they
disagree (a bug, a hand edit, a restore of mismatched files), ``rebuild(..., repair=True)``
rewrites the snapshot and the indexes from the fold. ``replay_from_redis`` is what
``python -m bot replay --redis URL QUEST_ID`` calls.

Every replay here folds each event under the policy the journal recorded with it
(``read_recorded``), so a quest whose repository changed its settings since replays to the
decisions it was given. The policy a caller passes stands in only for entries written before
policies were recorded.
"""

from __future__ import annotations

from bisect import bisect_right
from collections import Counter
from dataclasses import dataclass

from bot.core import Event, FoldResult, Policy, Quest, fold
from bot.journal.compaction import thaw
from bot.journal.errors import CorruptJournal
from bot.journal.indexes import IndexWrites
from bot.journal.keys import quest_keys
from bot.journal.records import dump_quest
from bot.journal.store import Journal
from bot.journal.wire import Batch, plain_client


@dataclass(frozen=True, slots=True)
class Recorded:
    """A quest's journal as stored: each event, and the policy it was decided under."""

    events: list[Event]
    digests: list[str | None]
    """Each entry's policy digest; ``None`` for an entry written before they were recorded."""
    stored: dict[str, Policy]
    """The quest's policies, by digest."""

    @property
    def policies(self) -> list[Policy | None]:
        """One per event, for ``fold(..., policies=...)``."""
        return [None if digest is None else self.stored[digest] for digest in self.digests]

    def uses(self) -> Counter[str | None]:
        """How many entries each policy digest decided (``None``: recorded without one)."""
        return Counter(self.digests)


async def read_recorded(journal: Journal, quest_id: str) -> Recorded:
    """The journal and, for each entry, the policy recorded for it: the latest policy change
    (``@<version>`` in the quest's ``policies`` hash) at or before the entry's version."""
    events: list[Event] = []
    versions: list[int] = []
    async for entry in journal.entries(quest_id):
        events.append(entry.event)
        versions.append(entry.version)
    bodies, changes = await journal.policies(quest_id)
    since = sorted(changes)
    digests: list[str | None] = []
    for version in versions:
        at = bisect_right(since, version)
        digests.append(changes[since[at - 1]] if at else None)
    for version, digest in sorted(changes.items()):
        if digest not in bodies:
            raise CorruptJournal(
                f"journal entries of quest {quest_id} from version {version} on were decided "
                f"under policy {digest}, which is not stored with the quest "
                f"(q:{{{quest_id}}}:policies); the store was damaged or restored in part, so "
                "their decisions cannot be replayed as they were made")
    return Recorded(events, digests, bodies)


@dataclass(frozen=True, slots=True)
class Rebuilt:
    result: FoldResult
    stored: Quest | None
    version: int
    """The snapshot's version: the journal length it claims to be folded from."""
    journal_length: int
    recorded: Recorded | None = None

    @property
    def matches(self) -> bool:
        return (self.result.invalid is None and self.result.quest == self.stored
                and self.version == self.journal_length)


async def rebuild(journal: Journal, quest_id: str, policy: Policy, *,
                  repair: bool = False) -> Rebuilt:
    """Fold the quest's journal, each event under its recorded policy (``policy`` for entries
    recorded without one), and compare with its snapshot; with ``repair``, a mismatched
    snapshot is replaced by the fold (refused if a writer changed the quest meanwhile)."""
    k = quest_keys(quest_id)
    if repair:  # a compacted quest's keys come back first: a repair writes the snapshot
        await thaw(journal.client, quest_id)
    async with journal.client.pipeline(transaction=True) as pipe:
        if repair:
            await pipe.watch(k.snap)
        recorded = await read_recorded(journal, quest_id)
        events = recorded.events
        version, stored = await journal.snapshot(quest_id)
        result = fold(events, policy, policies=recorded.policies)
        rebuilt = Rebuilt(result, stored, version, len(events), recorded)
        quest = rebuilt.result.quest
        if repair and not rebuilt.matches and quest is not None:
            pipe.multi()  # type: ignore[no-untyped-call]
            pipe.hset(k.snap, mapping={"v": len(events),
                                       "quest": dump_quest(quest, len(events))})
            await pipe.execute()  # raises WatchError if an apply won the race
            journal.forget(quest_id)
            indexes = IndexWrites()
            indexes.transition(None, quest, rebuilt.result.effects, journal.clock(), full=True)
            follow = Batch()
            for command in indexes.commands():
                follow.add(*command)
            for reply in await follow.execute(journal.client):
                if isinstance(reply, Exception):
                    raise reply
    return rebuilt


async def replay_recorded(url: str, quest_id: str, policy: Policy) -> Rebuilt:
    """Fold one quest's journal from the Redis at ``url`` with its recorded policies (and
    ``policy`` for entries recorded without one); nothing is written."""
    client = plain_client(url)
    try:
        return await rebuild(Journal(client), quest_id, policy)
    finally:
        await client.aclose()


async def replay_from_redis(url: str, quest_id: str, policy: Policy) -> FoldResult:
    """``replay_recorded``'s fold: what the CLI prints as it prints a file replay."""
    return (await replay_recorded(url, quest_id, policy)).result
