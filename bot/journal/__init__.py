"""Redis storage for quests: journals, snapshots, the effect outbox, indexes and timers.

The worker's entry points:

* ``Journal(client).apply(event, policy)`` / ``apply_many(events, policy)`` — the one write
  path for events, from webhooks, timers and adapter outcomes alike;
* ``EffectRunner(journal, adapters, policy).run(stop)`` — deliver effects once each, under
  short leases kept by a heartbeat (``Leases``), through Redis outages (``Outage``);
* ``Timers(journal, policy).schedule(event, due)`` and ``.run(stop)`` — durable timers;
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
from bot.journal.lease import Leases
from bot.journal.outage import REDIS_AWAY, Outage
from bot.journal.outbox import (
    Adapter,
    Adapters,
    Backoff,
    EffectRunner,
    Failure,
    RunStats,
    delivered,
    failures,
)
from bot.journal.recovery import Rebuilt, rebuild, replay_from_redis
from bot.journal.store import Applied, Journal, JournalEntry, PolicySource
from bot.journal.timers import Timers, timer_event_id

__all__ = [
    "DEFAULT_SHARDS", "REDIS_AWAY", "Adapter", "Adapters", "Applied", "Backoff",
    "ConcurrencyError", "CorruptJournal", "DurabilityError", "EffectRunner", "Failure",
    "Indexes", "Journal", "JournalEntry", "JournalError", "Leases", "Outage",
    "PermanentError", "PolicySource", "QuestKeys", "Rebuilt", "RunStats", "Timers",
    "UnstorableId", "delivered", "failures", "quest_keys",
    "rebuild", "replay_from_redis", "shard_of", "timer_event_id",
]
