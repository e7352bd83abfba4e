"""The capability store: review records and the SHA-256 of each live capability, in Redis.

Layout. One hash per quest, ``q:{<quest id>}:reviews`` — the quest's hash tag, so it shares
the quest's Redis Cluster slot and every write below is one single-key command:

* ``r:<rid>`` — the ``ReviewRecord`` JSON;
* ``cap:<rid>`` — ``<sha256 hex> <expires at, epoch ms>`` of the live capability. The
  capability itself is never stored: it is shown once, by ``issue``;
* ``active:<role>`` — the review id of the role's latest request. Re-requesting issues a new
  capability and deletes the old one's hash in the same script, so the old one is unknown (401)
  from then on;
* ``started:<rid>`` / ``done:<rid>`` — the session that started, and the one that submitted,
  each set once (``HSETNX``): a second submission finds ``done`` set and is refused.

Every write is one single-key command or script on the quest's hash, so it runs unchanged on
Redis Cluster (no ``MULTI`` across a pipeline).

Expiry is checked against the expiry time written beside the hash (Redis 7.0 has no per-field
TTL; the hash's own TTL would also drop the records). An expired hash is deleted when met.
Comparison is constant-time over the hashes (``hmac.compare_digest``), so neither the
capability nor its hash leaks through timing.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import time
from collections.abc import Callable

from bot.errors import Refused
from bot.journal.keys import reviews_key, storable
from bot.journal.records import dump_model, load_model
from bot.journal.wire import RedisClient
from bot.reviews.models import ReviewRecord, ReviewRole

TTL_SECONDS = 3600
"""A capability lives an hour."""

Clock = Callable[[], float]
MAX_QUEST_ID = 200
"""Longer ids in a URL are no quest's: refused before they reach a Redis key."""

_ISSUE = """
local old = redis.call('HGET', KEYS[1], 'active:' .. ARGV[1])
if old then redis.call('HDEL', KEYS[1], 'cap:' .. old) end
redis.call('HSET', KEYS[1], 'r:' .. ARGV[2], ARGV[3], 'cap:' .. ARGV[2], ARGV[4],
           'active:' .. ARGV[1], ARGV[2])
return old
"""
_ONCE = """
local set = redis.call('HSETNX', KEYS[1], ARGV[1], ARGV[2])
return {set, redis.call('HGET', KEYS[1], ARGV[1])}
"""


class Unauthorized(Refused):
    """The capability is unknown, replaced or expired (401)."""




def split_review_id(review_id: str) -> tuple[str, str]:
    """``<quest id>.<rid>`` → ``(quest id, rid)``; the rid is hex, so the last dot splits.
    Raises ``Unauthorized`` for anything else: an id questbot never issued."""
    quest_id, dot, rid = review_id.rpartition(".")
    if (not dot or not 0 < len(quest_id) <= MAX_QUEST_ID or "{" in quest_id or "}" in quest_id
            or not quest_id.isprintable()
            or len(rid) != 16 or any(c not in "0123456789abcdef" for c in rid)):
        raise Unauthorized("no review has this id")
    return quest_id, rid


def _hash(capability: str) -> str:
    return hashlib.sha256(capability.encode()).hexdigest()


class Capabilities:
    def __init__(self, client: RedisClient, *, ttl_seconds: int = TTL_SECONDS,
                 clock: Clock = time.time) -> None:
        self.client = client
        self.ttl_seconds = ttl_seconds
        self.clock = clock
        self._issue = client.register_script(_ISSUE)
        self._set_once = client.register_script(_ONCE)

    @staticmethod
    def new_review_id(quest_id: str) -> str:
        return f"{storable(quest_id)}.{secrets.token_hex(8)}"

    async def issue(self, record: ReviewRecord) -> str:
        """Store ``record`` and a new capability for it, replacing the role's previous one;
        return the capability — the only time it exists outside the reviewer's hands."""
        _qid, rid = split_review_id(record.review_id)
        capability = secrets.token_urlsafe(32)
        expires = int((self.clock() + self.ttl_seconds) * 1000)
        await self._issue(keys=[reviews_key(record.quest_id)],
                          args=[record.role.value, rid, dump_model("review", record),
                                f"{_hash(capability)} {expires}"])
        return capability

    async def verify(self, review_id: str, capability: str | None) -> ReviewRecord:
        """The record ``capability`` opens, or ``Unauthorized``."""
        quest_id, rid = split_review_id(review_id)
        key = reviews_key(quest_id)
        stored, record = await self.client.hmget(key, [f"cap:{rid}", f"r:{rid}"])
        presented = _hash(capability or "")
        if stored is None or record is None:
            hmac.compare_digest(presented, presented)  # the same work either way
            raise Unauthorized("the capability is unknown or was replaced by a newer request")
        want, _, expires = (stored.decode() if isinstance(stored, bytes) else stored).partition(" ")
        if not hmac.compare_digest(presented.encode(), want.encode()) or not capability:
            raise Unauthorized("the capability does not open this review")
        if self.clock() * 1000 >= int(expires):
            await self.client.hdel(key, f"cap:{rid}")
            raise Unauthorized("the capability expired; request the review again")
        return load_model("review", record, ReviewRecord)

    async def record(self, review_id: str) -> ReviewRecord | None:
        quest_id, rid = split_review_id(review_id)
        raw = await self.client.hget(reviews_key(quest_id), f"r:{rid}")
        return None if raw is None else load_model("review", raw, ReviewRecord)

    async def active(self, quest_id: str, role: ReviewRole) -> str | None:
        raw = await self.client.hget(reviews_key(quest_id), f"active:{role.value}")
        if raw is None:
            return None
        return f"{quest_id}.{raw.decode() if isinstance(raw, bytes) else raw}"

    async def _once(self, review_id: str, field: str, session: str) -> tuple[bool, str]:
        """Set ``<field>:<rid>`` to ``session`` unless set: whether this call set it, and
        what it holds now."""
        quest_id, rid = split_review_id(review_id)
        was_set, held = await self._set_once(keys=[reviews_key(quest_id)],
                                             args=[f"{field}:{rid}", session])
        return bool(was_set), held.decode() if isinstance(held, bytes) else str(held)

    async def start(self, review_id: str, session: str) -> str:
        """Bind the review to the first session that starts it; return that session."""
        return (await self._once(review_id, "started", session))[1]

    async def started_by(self, review_id: str) -> str | None:
        return await self._field(review_id, "started")

    async def submitted_by(self, review_id: str) -> str | None:
        return await self._field(review_id, "done")

    async def _field(self, review_id: str, field: str) -> str | None:
        quest_id, rid = split_review_id(review_id)
        raw = await self.client.hget(reviews_key(quest_id), f"{field}:{rid}")
        return None if raw is None else (raw.decode() if isinstance(raw, bytes) else raw)

    async def submit(self, review_id: str, session: str) -> bool:
        """Claim the one submission; ``False`` if the review was submitted already."""
        return (await self._once(review_id, "done", session))[0]

    async def finish(self, record: ReviewRecord) -> None:
        """Store the submitted record (verdict, synopsis). The capability's hash stays until
        it expires, so a second submission is told it was submitted (409), not that the
        capability is unknown."""
        _qid, rid = split_review_id(record.review_id)
        await self.client.hset(reviews_key(record.quest_id), f"r:{rid}",
                               dump_model("review", record))
