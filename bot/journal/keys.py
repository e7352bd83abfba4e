"""The Redis key layout. Every key of one quest carries the hash tag ``{<quest id>}``, so the
atomic apply (journal entry + snapshot + outbox) touches one Redis Cluster slot. Work that must
be found without knowing a quest id lives under a shard tag ``{shard-<n>}``: the doorbell
stream the effect runners consume and the timer sorted set. Repository indexes carry the
repository as their tag. ``docs/storage.md`` describes each key and why it lives where it does.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass
from functools import lru_cache

from bot.journal.errors import UnstorableId

DEFAULT_SHARDS = 16
RUNNERS_GROUP = "runners"
QUEST_KEYS_HELD = 1024
"""Quests whose key names are kept built: the ones a worker is moving now. Each costs ~1.2 KB
(twelve names); at 8,192 the cache grew with every quest a soak's worker touched and held
~10 MB at its bound (``docs/performance.md``, the soak). A quest not held builds its names
again, a few microseconds."""


def hash_tag(value: str) -> str:
    """``{value}``: every key built with it lands on the slot of ``value`` in Redis Cluster."""
    if not value or "{" in value or "}" in value:
        raise UnstorableId(f"id {value!r} cannot be stored: it is empty or holds a brace, which "
                           "would break the cluster hash tag; use an id without braces")
    return "{" + value + "}"


def shard_of(quest_id: str, shards: int) -> int:
    """The shard whose doorbell stream and timer set serve this quest (stable across runs)."""
    return zlib.crc32(quest_id.encode()) % shards


@dataclass(frozen=True, slots=True)
class QuestKeys:
    """All keys of one quest; they share the quest's hash tag."""

    quest_id: str
    snap: str
    """Hash: ``v`` (journal length), ``quest`` (the versioned quest JSON) and ``p`` (the digest
    of the policy its last entry was decided under); once the quest is compacted
    (``bot.journal.compaction``), ``v`` and ``z``, the compressed record of every key below."""
    events: str
    """Stream: the journal; one entry per applied event (``id``, ``v``, ``e``)."""
    ids: str
    """Hash: event id → journal version at which it was applied (redelivery dedupe)."""
    outbox: str
    """Stream: effects not yet delivered (``k`` key, ``e`` effect JSON); deleted once done."""
    done: str
    """Hash: effect key → ``ok`` or ``failed``: the delivered-key record."""
    tries: str
    """Hash: effect key → failed attempts so far."""
    retry_at: str
    """Hash: effect key → epoch milliseconds before which it is not tried again."""
    failures: str
    """Stream: permanent delivery failures, for people and for the status comment."""
    lease: str
    """String with a TTL: the runner currently delivering this quest's effects."""
    children: str
    """Set: quests that wait for this one (parent → children)."""
    policies: str
    """Hash: policy digest → the policy record, for each policy this quest's events were decided
    under; ``@<version>`` → the digest of the policy from that journal entry on."""


@lru_cache(maxsize=QUEST_KEYS_HELD)  # every apply names four of them; building them is not free
def quest_keys(quest_id: str) -> QuestKeys:
    p = f"q:{hash_tag(quest_id)}"
    return QuestKeys(
        quest_id=quest_id, snap=f"{p}:snap", events=f"{p}:events", ids=f"{p}:ids",
        outbox=f"{p}:outbox", done=f"{p}:done", tries=f"{p}:tries", retry_at=f"{p}:retry",
        failures=f"{p}:failures", lease=f"{p}:lease", children=f"{p}:children",
        policies=f"{p}:policies",
    )


def thread_trail(repo: str, number: int) -> str:
    """The trail of one issue or pull request's conversation (replies, reactions): its
    effects get an outbox, a delivered record and a lease of their own, ``q:{owner/name#12}:…``,
    beside no quest. Repository names hold no braces, so the trail is a valid hash tag."""
    trail = f"{repo.lower()}#{number}"
    hash_tag(trail)  # refuses a name that would break the tag
    return trail


def doorbell_key(shard: int) -> str:
    """Stream with a consumer group: "quest X has effects in its outbox"."""
    return f"outbox:{{shard-{shard}}}"


def timers_key(shard: int) -> str:
    """Sorted set: timer id → due time in epoch milliseconds."""
    return f"timers:{{shard-{shard}}}"


def timer_events_key(shard: int) -> str:
    """Hash: timer id → the event JSON to apply when it is due (same slot as the set)."""
    return f"timers:{{shard-{shard}}}:events"


def compaction_due_key() -> str:
    """Sorted set: ended quest id → epoch ms it ended (``bot.journal.compaction``): the quests
    whose keys are to be folded into one compressed record once they have been over a while.
    Written beside the live set when a quest ends, removed when it is compacted or lives
    again; one small set, in a slot of its own."""
    return "compact:{compact}"


def compaction_export_key() -> str:
    """Sorted set: compacted quest id → epoch ms it was compacted, while exporting records to
    files is on (``bot.journal.export``): what is exported once it is old enough."""
    return "compact:{compact}:export"


def compaction_backfill_key() -> str:
    """String: set once the quests that ended before compaction was released were put on the
    due list (``bot.journal.compaction.backfill``), so it runs once per Redis."""
    return "compact:{compact}:backfilled"


QUESTS_PATTERN = "repo:{*}:quests"
"""Every repository's quests, for the compaction's one backfill (``SCAN MATCH``)."""


def repo_quests_key(repo: str) -> str:
    return f"repo:{hash_tag(repo)}:quests"


def repo_live_key(repo: str) -> str:
    """Set of non-terminal quests: what the live-quest cap counts."""
    return f"repo:{hash_tag(repo)}:live"


def repo_bad_endings_key(repo: str) -> str:
    """Sorted set: the repository's bad endings (``core.limits.bad_ending``), each
    ``<quest>:<revision>:<attempt>:<kind>`` → epoch ms it happened (reflection waves)."""
    return f"repo:{hash_tag(repo)}:bad"


def repo_held_key(repo: str) -> str:
    """Sorted set: quests triage held (``Held``) → epoch ms they were first held; oldest
    starts first when a slot frees or a reflection passes."""
    return f"repo:{hash_tag(repo)}:held"


def repo_reflection_key(repo: str) -> str:
    """Hash: the last reflection that passed (``passed``) and one waiting for its review
    (``pending``), each a JSON record (``bot.journal.limits``)."""
    return f"repo:{hash_tag(repo)}:reflection"


def lessons_key(repo: str) -> str:
    """List: the accepted lessons, newest first, bounded (``bot.journal.lessons``)."""
    return f"repo:{hash_tag(repo)}:lessons"


def lessons_done_key(repo: str) -> str:
    """Hash: ``<quest>@<revision>`` → each ending's lesson fate, and drafts awaiting review."""
    return f"repo:{hash_tag(repo)}:lessons:done"


def lessons_pending_key(repo: str) -> str:
    """Hash: ``<quest>@<revision>`` → ending, for the lessons owed (queued, no fate yet)."""
    return f"repo:{hash_tag(repo)}:lessons:pending"


def model_use_key(repo: str) -> str:
    """Hash: the model use of runs outside quests (reflections), counted once per run
    (``bot.journal.model_use``)."""
    return f"repo:{hash_tag(repo)}:model_use"


def fingerprint_key(repo: str, fingerprint: str) -> str:
    """Set of the quests ever opened for this fingerprint (duplicate and reopen lookups)."""
    return f"repo:{hash_tag(repo)}:fp:{fingerprint}"


def muted_key(repo: str, fingerprint: str) -> str:
    """String with a TTL: present while the fingerprint is muted."""
    return f"repo:{hash_tag(repo)}:muted:{fingerprint}"


def ci_log_key(quest_id: str) -> str:
    """Hash with a TTL: the run that failed → its job's log, trimmed (``""``: none to read),
    so the research and reproduce stages of one quest download it once."""
    return f"q:{hash_tag(quest_id)}:ci_log"


INBOUND_CLUSTER_SHARDS = 16
"""How many inbound streams a Redis Cluster gets (one Redis keeps its single stream)."""


def inbound_stream(shard: int, shards: int) -> str:
    """Stream with the consumer group ``workers``: stored webhook deliveries. With one shard
    it is ``inbound:{inbound}``, the key from before the streams were sharded, so a single
    Redis keeps its backlog across the upgrade; with more, ``inbound:{inbound-<n>}``. The
    shard's dedupe markers, tries and dead letters share its tag (``<stream>:seen:<id>``,
    ``<stream>:tries``, ``<stream>:dead``)."""
    return "inbound:{inbound}" if shards == 1 else f"inbound:{{inbound-{shard}}}"


def inbound_shard(delivery_id: str, shards: int) -> int:
    """The shard a delivery is stored in: fixed by its id, so a redelivery finds its marker."""
    return 0 if shards == 1 else zlib.crc32(delivery_id.encode()) % shards


def quest_gh_key(quest_id: str) -> str:
    return f"q:{hash_tag(quest_id)}:gh"


def repo_gh_key(repo: str) -> str:
    return f"repo:{hash_tag(repo.lower())}:gh"


def creating_key(hash_key: str, name: str) -> str:
    """The lease on creating ``name`` recorded in ``hash_key`` (``ForgeMemory.creating``);
    the owed views' look-up reads the view's to pass over a quest a worker is writing."""
    return f"{hash_key}:creating:{name}"


def evidence_key(quest_id: str) -> str:
    return f"q:{hash_tag(quest_id)}:evidence"


def transcript_key(quest_id: str) -> str:
    """Hash: ``<revision>:<stage>`` → the stage's model conversation as kept
    (``bot.agent.transcript``), ``seq`` numbering them."""
    return f"q:{hash_tag(quest_id)}:transcript"


def outcomes_key(quest_id: str) -> str:
    """Hash: ``start_agent`` effect key → the events its run reported, one record a line."""
    return f"q:{hash_tag(quest_id)}:outcomes"


def repo_reviews_key(repo: str) -> str:
    return f"repo:{hash_tag(repo.lower())}:reviews"


def reviews_key(quest_id: str) -> str:
    return f"q:{hash_tag(quest_id)}:reviews"


def failure_key(repo: str, sha: str, group: str) -> str:
    """Where the quest a failure went to is kept: the repository's hash tag, then the commit
    and the suite (or, when a payload names no suite, the fingerprint)."""
    return f"repo:{hash_tag(repo.lower())}:failure:{sha}:{group}"


OUTBOX_PATTERN = "q:{*}:outbox"
"""Every quest's outbox, for the runners' sweep (``SCAN MATCH``)."""


def quest_of_outbox(key: str) -> str | None:
    """The quest id of an outbox key, ``q:{<id>}:outbox``."""
    if not (key.startswith("q:{") and key.endswith("}:outbox")):
        return None
    qid = key[3:-len("}:outbox")]
    return qid if qid and "{" not in qid and "}" not in qid else None


LIVE_PATTERN = "repo:{*}:live"
"""Every repository's live quests, for ``/metrics``'s count by state (``SCAN MATCH``)."""


def reflection_trail(repo: str) -> str:
    """The repository's reflection runs' trail; repository names hold no braces or ``#``."""
    trail = f"{repo.lower()}#reflection"
    hash_tag(trail)
    return trail


def storable(quest_id: str) -> str:
    """``quest_id``, once it is known to be one Redis can hold in a hash tag (raises
    ``UnstorableId`` otherwise): for ids made from it that are stored elsewhere."""
    hash_tag(quest_id)
    return quest_id


REPOSITORY_IDS_KEY = "gh:repository-ids"
"""Hash: a repository's GitHub id → the name questbot knows it by, the first it saw: a quest
follows its repository by id through a rename or a transfer (``bot.repository.names``)."""
REPOSITORY_NAMES_KEY = "gh:repository-names"
"""Hash: the name questbot knows a repository by (lowercased) → its name on GitHub now, once it
was renamed or transferred: what questbot's requests go to (``bot.github.forge.Forges``)."""
