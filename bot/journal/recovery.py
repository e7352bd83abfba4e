"""Recovery: rebuild a quest from its journal and compare with its snapshot.

The journal is the record of decisions; the snapshot is a cache of ``fold(journal)``. If they
disagree (a bug, a hand edit, a restore of mismatched files), ``rebuild(..., repair=True)``
rewrites the snapshot and the indexes from the fold. ``replay_from_redis`` is what
``python -m bot replay --redis URL QUEST_ID`` calls.
"""

from __future__ import annotations

from dataclasses import dataclass

import redis.asyncio

from bot.core import FoldResult, Policy, Quest, fold
from bot.journal.indexes import IndexWrites
from bot.journal.keys import quest_keys
from bot.journal.records import dump_quest
from bot.journal.store import Journal
from bot.journal.wire import Batch


@dataclass(frozen=True, slots=True)
class Rebuilt:
    result: FoldResult
    stored: Quest | None
    version: int
    """The snapshot's version: the journal length it claims to be folded from."""
    journal_length: int

    @property
    def matches(self) -> bool:
        return (self.result.invalid is None and self.result.quest == self.stored
                and self.version == self.journal_length)


async def rebuild(journal: Journal, quest_id: str, policy: Policy, *,
                  repair: bool = False) -> Rebuilt:
    """Fold the quest's journal and compare with its snapshot; with ``repair``, a mismatched
    snapshot is replaced by the fold (refused if a writer changed the quest meanwhile)."""
    k = quest_keys(quest_id)
    async with journal.client.pipeline(transaction=True) as pipe:
        if repair:
            await pipe.watch(k.snap)
        events = await journal.events(quest_id)
        version, stored = await journal.snapshot(quest_id)
        rebuilt = Rebuilt(fold(events, policy), stored, version, len(events))
        quest = rebuilt.result.quest
        if repair and not rebuilt.matches and quest is not None:
            pipe.multi()  # type: ignore[no-untyped-call]
            pipe.hset(k.snap, mapping={"v": len(events), "quest": dump_quest(quest)})
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


async def replay_from_redis(url: str, quest_id: str, policy: Policy) -> FoldResult:
    """Fold one quest's journal from the Redis at ``url``; the CLI prints the result as it
    prints a file replay (and may compare ``result.quest`` with the stored snapshot)."""
    client = redis.asyncio.Redis.from_url(url)
    try:
        return (await rebuild(Journal(client), quest_id, policy)).result
    finally:
        await client.aclose()
