"""Redis storage for quests: journals, snapshots, indexes, and every key's layout (``keys``).

* ``Journal(client).apply(event, policy)`` / ``apply_many(events, policy)`` — the one write
  path for events, from webhooks, timers and adapter outcomes alike; it queues each event's
  effects in the quest's outbox, which the runner (``bot.runner``) delivers;
* ``Indexes(client)`` — lookups by repository, fingerprint, live cap, mute, parent;
* ``rebuild`` / ``replay_from_redis`` — recovery from the journal.

``docs/storage.md`` has the key layout and what a failover may lose.
"""

from bot.journal.errors import (
    ConcurrencyError,
    CorruptJournal,
    DurabilityError,
    JournalError,
    PermanentError,
    UnstorableId,
)
from bot.journal.indexes import Indexes
from bot.journal.keys import DEFAULT_SHARDS, QuestKeys, quest_keys, shard_of
from bot.journal.recovery import Rebuilt, rebuild, replay_from_redis
from bot.journal.store import Applied, Journal, JournalEntry, PolicySource

__all__ = [
    "DEFAULT_SHARDS", "Applied", "ConcurrencyError", "CorruptJournal", "DurabilityError",
    "Indexes", "Journal", "JournalEntry", "JournalError", "PermanentError", "PolicySource",
    "QuestKeys", "Rebuilt", "UnstorableId", "quest_keys", "rebuild", "replay_from_redis",
    "shard_of",
]
