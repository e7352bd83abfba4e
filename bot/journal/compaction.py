"""Ended quests compacted: a quest over for a while keeps one compressed record in Redis.

Why. A quest that ended (closed after its watch, or abandoned) keeps about 40 KB in a dozen
keys — its journal, event ids, evidence, GitHub record, delivered effects — and nobody reads
most of it again. Redis holds everything in memory, so an organisation's year of quests would
have to fit in RAM. Some time after a quest ends (``QUESTBOT_COMPACT_AFTER_HOURS``), its keys
are folded into one record — every entry of its journal as stored, its snapshot and the hashes
reads need — compressed with zlib and kept as field ``z`` of the quest's snapshot hash beside
its version ``v``; the other keys are deleted.

How it stays correct.

* **One atomic script per quest** (``COMPACT``): the record is written and the originals are
  deleted in one script over keys of the quest's hash tag — one slot, so it runs on Redis
  Cluster — and only if nothing changed since they were read: the snapshot's version, each
  key's length, an empty outbox and no lease. A worker killed mid-compaction (``kill -9``)
  leaves the originals as they were or the record alone, never a half; Redis writes a script's
  effects to its AOF as one transaction.
* **The record is checked before it replaces anything**: it is decompressed and compared with
  what was read, value for value.
* **Reads prefer the originals** while they exist (``JournalReads``: the snapshot, the
  journal, its policies, event ids) and read the record only when they are gone, so replay,
  ``status`` and every lookup of a quest work on either form, and the fold of the record's
  events is the fold of the original journal (the same bytes; a property test holds it).
* **A write brings the quest back first** (``thaw``): the apply script answers ``compacted``
  for a quest whose snapshot holds ``z`` — the regression that reopens a closed quest, a
  redelivered event (then a duplicate) — and the journal restores every key from the record
  in one script (``THAW``, which refuses if the record changed meanwhile) and applies again.
  The quest is compacted again once it is over again for a while.

Beside its own keys a quest leaves trails in other slots: its lesson runs' and its pull
requests' threads' (replies, reactions: ``keys.thread_trail``), each an emptied outbox and a
record of what was delivered. Once the quest is compacted they are deleted where nothing waits
on them (``TRAIL``); a crash before that leaves them for the next sweep, which finds the quest
compacted already and deletes them then.

Which quests. ``IndexWrites`` notes a quest that ends in ``compact:{compact}`` (quest → the
epoch ms it ended) and removes it when it lives again; ``due`` reads those over for longer
than the setting, and the worker's sweep (``bot.worker.compaction_sweep``) compacts them.

Kept in the record: the snapshot hash (its quest left out where the fold of the journal writes
exactly its bytes, as it does unless the journal predates recorded policies), the journal
stream (entry ids and fields), the policies, the delivered-effect record, failures, children,
the quest's GitHub record, evidence, reviews and its model transcripts (``bot.agent.transcript``,
read from the record once the quest is compacted); event ids are rebuilt from the journal (kept
only if they differ). Dropped: the outbox (empty), retry bookkeeping of an empty outbox, the
lease (absent), the agent-run memo (``outcomes``: a memo for a redelivered effect, and no
effect is left) and the cached CI log. A per-quest key added to ``keys`` must be added to
``_SECTIONS`` or ``_DROPPED`` (``tests/e2e/test_compacted_quests.py`` holds that nothing of a
finished demo quest is left beside its snapshot hash). The record's bytes: a format byte, then
its JSON deflated against a fixed preset dictionary (``compaction_zdict``), JSON values held as
values where their writer's formatting gives back their very bytes. Beyond a second age it may
go to a file (``bot.journal.export``); ``read_compacted`` and ``thaw`` read it from there.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import logging
import zlib
from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from enum import Enum
from pathlib import Path
from typing import Any

import orjson
import redis.asyncio

from bot.core import Event, InvalidTransition, Policy, Quest, fold
from bot.core.states import TERMINAL
from bot.journal.answers import JournalEntry
from bot.journal.compaction_zdict import ZDICT
from bot.journal.errors import CorruptJournal
from bot.journal.keys import (
    DEFAULT_SHARDS,
    QUESTS_PATTERN,
    ci_log_key,
    compaction_backfill_key,
    compaction_due_key,
    evidence_key,
    outcomes_key,
    quest_gh_key,
    quest_keys,
    reviews_key,
    shard_of,
    thread_trail,
    transcript_key,
)
from bot.journal.lessons import lesson_trail
from bot.journal.policies import parse_policies
from bot.journal.records import RecordError, dump_quest, load_event, load_quest, load_quest_at
from bot.journal.views import views_key
from bot.journal.wire import RedisClient, stream_rows, text

log = logging.getLogger(__name__)

FORMAT = 1
"""The record's format: its first byte, before its JSON deflated (raw, zlib level 9) against
the preset dictionary ``compaction_zdict.ZDICT``."""

Raw = bytes | str

# what each kept key is: (section name, kind) — ``h`` hash, ``x`` stream, ``s`` set. The order
# is the THAW script's KEYS after the snapshot.
_SECTIONS: tuple[tuple[str, str], ...] = (
    ("events", "x"), ("ids", "h"), ("policies", "h"), ("done", "h"), ("failures", "x"),
    ("children", "s"), ("gh", "h"), ("evidence", "h"), ("reviews", "h"), ("transcript", "h"),
)
_DROPPED = ("outbox", "tries", "retry_at", "lease", "outcomes", "ci_log")


def _section_keys(quest_id: str) -> dict[str, str]:
    k = quest_keys(quest_id)
    return {"snap": k.snap, "events": k.events, "ids": k.ids, "policies": k.policies,
            "done": k.done, "failures": k.failures, "children": k.children,
            "gh": quest_gh_key(quest_id), "evidence": evidence_key(quest_id),
            "reviews": reviews_key(quest_id), "transcript": transcript_key(quest_id),
            "outbox": k.outbox, "tries": k.tries,
            "retry_at": k.retry_at, "lease": k.lease, "outcomes": outcomes_key(quest_id),
            "ci_log": ci_log_key(quest_id)}


COMPACT = """
-- KEYS: snap, then the kept keys (events, ids, policies, done, failures, children, gh,
--   evidence, reviews, transcript), then the dropped ones (outbox, tries, retry, lease,
--   outcomes, ci_log)
-- ARGV: version read, the record, then each kept key's length as read
-- Writes the record and deletes the rest only if nothing changed since they were read.
local snap = redis.call('HMGET', KEYS[1], 'v', 'quest', 'z')
if snap[3] then return 'already' end
if (not snap[2]) or snap[1] ~= ARGV[1] then return 'changed' end
local kinds = {'x', 'h', 'h', 'h', 'x', 's', 'h', 'h', 'h', 'h'}
for i = 1, #kinds do
  local n
  if kinds[i] == 'h' then n = redis.call('HLEN', KEYS[i + 1])
  elseif kinds[i] == 'x' then n = redis.call('XLEN', KEYS[i + 1])
  else n = redis.call('SCARD', KEYS[i + 1]) end
  if n ~= tonumber(ARGV[i + 2]) then return 'changed' end
end
if redis.call('XLEN', KEYS[12]) ~= 0 or redis.call('EXISTS', KEYS[15]) == 1 then
  return 'busy'
end
redis.call('HSET', KEYS[1], 'z', ARGV[2])
redis.call('HDEL', KEYS[1], 'quest', 'p')
for i = 2, #KEYS do redis.call('DEL', KEYS[i]) end
return 'ok'
"""

THAW = """
-- KEYS: snap, then the kept keys in COMPACT's order
-- ARGV: the record as read, then the snapshot's fields and each kept key's contents:
--   a hash or set as its count then its items (field/value pairs, members); a stream as its
--   count, then per entry its id, its field count and its field/value pairs.
-- Brings every key back and drops the record, only if the record is the one decoded and no
-- journal stream was written meanwhile (nothing is written otherwise).
if redis.call('HGET', KEYS[1], 'z') ~= ARGV[1] then return 'gone' end
if redis.call('EXISTS', KEYS[2]) == 1 or redis.call('EXISTS', KEYS[6]) == 1 then
  return 'mixed'
end
local kinds = {'h', 'x', 'h', 'h', 'h', 'x', 's', 'h', 'h', 'h', 'h'}
local i = 2
local function chunked(command, key, first, count, width)
  local step = 500 * width
  local last = first + count * width - 1
  for s = first, last, step do
    redis.call(command, key, unpack(ARGV, s, math.min(s + step - 1, last)))
  end
end
for k = 1, #kinds do
  local n = tonumber(ARGV[i])
  i = i + 1
  if kinds[k] == 'h' then
    chunked('HSET', KEYS[k], i, n, 2)
    i = i + 2 * n
  elseif kinds[k] == 's' then
    chunked('SADD', KEYS[k], i, n, 1)
    i = i + n
  else
    for _ = 1, n do
      local m = tonumber(ARGV[i + 1])
      redis.call('XADD', KEYS[k], ARGV[i], unpack(ARGV, i + 2, i + 1 + 2 * m))
      i = i + 2 + 2 * m
    end
  end
end
redis.call('HDEL', KEYS[1], 'z', 'a')
return 'ok'
"""


# -- the record -------------------------------------------------------------------------------

def _out(value: Raw, parse: bool) -> Any:
    """A stored value in the record's JSON: text as it is, other bytes as ``["b", base64]``;
    with ``parse``, a JSON text that its writer's formatting gives back byte for byte as the
    value itself — ``["j", …]`` for compact JSON (orjson's, pydantic's: the journal's records),
    ``["J", …]`` for ``json.dumps(…, sort_keys=True)`` (evidence) — so it compresses without
    its escapes."""
    if isinstance(value, str):
        value = value.encode()
    try:
        text = value.decode()
    except UnicodeDecodeError:
        return ["b", base64.b64encode(value).decode()]
    if parse and text[:1] in ("{", "["):
        try:
            parsed = orjson.loads(value)
        except orjson.JSONDecodeError:
            return text
        if orjson.dumps(parsed) == value:
            return ["j", parsed]
        if json.dumps(parsed, sort_keys=True) == text:
            return ["J", parsed]
    return text


def _in(value: Any) -> bytes:
    if isinstance(value, str):
        return value.encode()
    if isinstance(value, list) and len(value) == 2:
        tag, body = value
        if tag == "b":
            return base64.b64decode(body)
        if tag == "j":
            return orjson.dumps(body)
        if tag == "J":
            return json.dumps(body, sort_keys=True).encode()
    raise RecordError(f"a compacted record holds a value it cannot read: {value!r:.60}")


Row = tuple[str, dict[str, bytes]]
_LEFT_OUT_V2 = "q2"
"""In a record's snapshot fields (never in Redis's hash): the quest left out was a version 2
record (``records.dump_quest(quest, at)``), which its fold gives back at the quest's version."""


@dataclass(frozen=True)
class Compacted:
    """One quest's keys as the compacted record holds them (values as stored, in bytes)."""

    quest_id: str
    snap: dict[str, bytes]
    events: list[Row]
    hashes: dict[str, dict[str, bytes]] = field(default_factory=dict)
    failures: list[Row] = field(default_factory=list)
    children: list[bytes] = field(default_factory=list)

    @property
    def version(self) -> int:
        return int(self.snap["v"])

    def quest(self) -> Quest:
        """The snapshot: kept in the record, or — where the fold of the journal writes the
        very bytes of it, which compaction checked — folded from the journal."""
        try:
            return load_quest(self.snap_quest())
        except (RecordError, ValueError) as exc:
            raise CorruptJournal(f"the compacted record of quest {self.quest_id} holds no "
                                 f"readable snapshot: {exc}") from exc

    def snap_quest(self) -> bytes:
        """The snapshot's ``quest`` field as it was stored: a record left out was version 2
        (at the quest's version) where the snapshot hash's fields say ``q2``, else version 1."""
        kept = self.snap.get("quest")
        if kept is not None:
            return kept
        quest = self.folded()
        if quest is None:
            raise CorruptJournal(f"the compacted record of quest {self.quest_id} holds no "
                                 "snapshot and its journal folds to none")
        return dump_quest(quest, self.version if _LEFT_OUT_V2 in self.snap else None)

    def folded(self) -> Quest | None:
        """The fold of the record's journal, each entry under its recorded policy."""
        bodies, changes = self.policies()
        since = sorted(changes)
        policies: list[Policy | None] = []
        for entry in self.entries():
            at = bisect_right(since, entry.version)
            policies.append(bodies.get(changes[since[at - 1]]) if at else None)
        return fold(self.events_only(), Policy(), policies=policies).quest

    def entries(self) -> list[JournalEntry]:
        out = []
        for entry_id, f in self.events:
            try:
                out.append(JournalEntry(int(f["v"]), entry_id, load_event(f["e"])))
            except (KeyError, RecordError, ValueError) as exc:
                raise CorruptJournal(f"journal entry {entry_id} of compacted quest "
                                     f"{self.quest_id} cannot be read: {exc}") from exc
        return out

    def events_only(self) -> list[Event]:
        return [entry.event for entry in self.entries()]

    def ids(self) -> dict[str, bytes]:
        """Event id → the version it was applied at: kept when it differs from what the
        journal says, else rebuilt from it."""
        kept = self.hashes.get("ids")
        if kept is not None:
            return kept
        return {text(f["id"]): f["v"] for _, f in self.events}

    def policies(self) -> tuple[dict[str, Policy], dict[int, str]]:
        return parse_policies(self.hashes.get("policies", {}), self.quest_id)

    def hash(self, name: str) -> dict[str, bytes]:
        """A kept hash (``gh``, ``evidence``, ``reviews``, ``transcript``, ``done``,
        ``policies``)."""
        return dict(self.hashes.get(name, {}))

    def dump(self, *, parse: bool = True) -> bytes:
        """The record: its format's byte, then its JSON deflated against ``ZDICT``."""
        def out(v: Raw) -> Any:
            return _out(v, parse)

        hashes = {name: {k: out(v) for k, v in h.items()} for name, h in self.hashes.items()}
        body = {"q": self.quest_id, "s": {k: out(v) for k, v in self.snap.items()},
                "e": [[i, {k: out(v) for k, v in f.items()}] for i, f in self.events],
                "h": hashes,
                "x": [[i, {k: out(v) for k, v in f.items()}] for i, f in self.failures],
                "m": [out(m) for m in self.children]}
        deflate = zlib.compressobj(9, zlib.DEFLATED, -15, 9, zdict=ZDICT)
        return bytes([FORMAT]) + deflate.compress(orjson.dumps(body)) + deflate.flush()

    @classmethod
    def load(cls, blob: Raw) -> Compacted:
        raw = blob.encode("latin-1") if isinstance(blob, str) else blob
        if not raw or raw[0] != FORMAT:
            raise RecordError(f"a compacted record of format {raw[:1]!r} is not one this "
                              f"questbot reads (format {FORMAT}); run the questbot that "
                              "wrote it, or a later one")
        try:
            inflate = zlib.decompressobj(-15, zdict=ZDICT)
            body = orjson.loads(inflate.decompress(raw[1:]) + inflate.flush())
        except (zlib.error, orjson.JSONDecodeError) as exc:
            raise RecordError(f"a compacted record cannot be decompressed: {exc}") from exc

        def rows(items: list[Any]) -> list[Row]:
            return [(str(i), {k: _in(v) for k, v in f.items()}) for i, f in items]

        return cls(quest_id=str(body["q"]), snap={k: _in(v) for k, v in body["s"].items()},
                   events=rows(body["e"]),
                   hashes={n: {k: _in(v) for k, v in h.items()} for n, h in body["h"].items()},
                   failures=rows(body["x"]), children=[_in(m) for m in body["m"]])


def as_bytes(value: Raw) -> bytes:
    """A reply value as bytes, whether the client decodes replies or not."""
    return value.encode() if isinstance(value, str) else value


def _hash(reply: Any) -> dict[str, bytes]:
    return {text(k): as_bytes(v) for k, v in (reply or {}).items()}


def _rows(reply: Any) -> list[Row]:
    return [(i, {k: as_bytes(v) for k, v in f.items()}) for i, f in stream_rows(reply)]


# -- reading ----------------------------------------------------------------------------------

async def read_compacted(client: RedisClient, quest_id: str) -> Compacted | None:
    """The quest's compacted record, or ``None`` when it is not compacted."""
    blob, _where = await _record_blob(client, quest_id)
    if blob is None:
        return None
    try:
        return Compacted.load(blob)
    except RecordError as exc:
        raise CorruptJournal(f"the compacted record of quest {quest_id} cannot be read: "
                             f"{exc}") from exc


async def _record_blob(client: RedisClient, quest_id: str) -> tuple[bytes | None, bytes | None]:
    """The record's bytes (from Redis, or from the file it was exported to) and what field
    ``z`` holds now (``b""`` once exported), or ``(None, None)`` when not compacted."""
    z, exported = await client.hmget(quest_keys(quest_id).snap, ["z", "a"])
    if z is None:
        return None, None
    held = as_bytes(z)
    if held or exported is None:
        return held, held
    return await read_exported(quest_id, as_bytes(exported)), held


async def read_exported(quest_id: str, where: bytes) -> bytes:
    """An exported record, read back from its file (``bot.journal.export``) and checked
    against the digest Redis holds for it."""
    path, _, digest = where.decode().rpartition("\n")
    try:
        blob = await asyncio.to_thread(Path(path).read_bytes)
    except OSError as exc:
        raise CorruptJournal(f"quest {quest_id} was exported to {path}, which cannot be read "
                             f"({exc.strerror}); restore the file (from a backup) and try "
                             "again") from exc
    if hashlib.sha256(blob).hexdigest() != digest:
        raise CorruptJournal(f"quest {quest_id}'s exported record {path} is not the one "
                             "written (its digest differs); restore the file from a backup")
    return blob


# -- compacting -------------------------------------------------------------------------------

TRAIL = """
-- KEYS: a trail's outbox, done, tries, retry, gh, lease
-- Deletes the trail's bookkeeping once nothing waits on it: an empty outbox and no lease.
if redis.call('XLEN', KEYS[1]) ~= 0 or redis.call('EXISTS', KEYS[6]) == 1 then return 0 end
redis.call('DEL', KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5])
return 1
"""

_TRAIL_NUMBERS = ("pr", "revert_pr")
"""The quest's own pull requests, whose threads' trails are its alone (an issue's thread may
serve another quest later: its trail stays)."""


async def _trails(client: RedisClient, quest_id: str, repo: str,
                  gh: dict[str, bytes]) -> None:
    """Delete the trails an ended quest leaves beside its keys, each in its own slot: its
    lesson runs' (``q:{<id>/lesson}:…``) and its pull requests' threads' (replies and
    reactions, ``q:{owner/name#N}:…``) — the delivered-effect records that keep a redelivered
    webhook (GitHub redelivers for three days) from replying twice, and the empty outboxes.
    Only where nothing waits on them."""
    trails = [lesson_trail(quest_id)]
    for name in _TRAIL_NUMBERS:
        number = gh.get(name, b"")
        if number.isdigit():
            trails.append(thread_trail(repo, int(number)))
    for trail in trails:
        k = quest_keys(trail)
        await run_script(client, TRAIL, [k.outbox, k.done, k.tries, k.retry_at,
                                      quest_gh_key(trail), k.lease], [])


class Outcome(Enum):
    COMPACTED = "compacted"
    ALREADY = "already"
    """Compacted before (by another worker)."""
    LIVE = "live"
    """The quest lives (reopened): compacted when it ends again."""
    BUSY = "busy"
    """Effects still wait in its outbox, a runner holds its lease, or its GitHub view is owed:
    later."""
    CHANGED = "changed"
    """Written to between the read and the script: later."""
    GONE = "gone"
    """No such quest."""


async def compact(client: RedisClient, quest_id: str, *,
                  shards: int = DEFAULT_SHARDS) -> Outcome:
    """Fold the ended quest's keys into one compressed record and delete them, atomically and
    only if nothing changed since they were read (the module's docstring says why). A quest
    whose GitHub view is still owed (``bot.journal.views``: a projector's write failed) waits:
    the projector reads its GitHub record."""
    keys = _section_keys(quest_id)
    async with client.pipeline(transaction=False) as pipe:
        pipe.hgetall(keys["snap"])
        pipe.xrange(keys["events"], "-", "+")
        for name, kind in _SECTIONS[1:]:
            if kind == "h":
                pipe.hgetall(keys[name])
            elif kind == "x":
                pipe.xrange(keys[name], "-", "+")
            else:
                pipe.smembers(keys[name])
        pipe.xlen(keys["outbox"])
        pipe.exists(keys["lease"])
        replies = await pipe.execute()
    snap = _hash(replies[0])
    if "z" in snap:  # a crash after the script may have left the trails
        if snap["z"]:  # (an exported one was compacted long ago: its trails are gone)
            record = Compacted.load(snap["z"])
            await _trails(client, quest_id, record.quest().repo, record.hash("gh"))
        return Outcome.ALREADY
    if "quest" not in snap or "v" not in snap:
        return Outcome.GONE
    quest = Compacted(quest_id, snap, []).quest()
    at = load_quest_at(snap["quest"])[1]
    if quest.state not in TERMINAL or (at is not None and at != int(snap["v"])):
        return Outcome.LIVE  # (an ended quest's snapshot never lags: ``snapshots.due``)
    if int(replies[-2]) or int(replies[-1]):
        return Outcome.BUSY
    if await client.zscore(views_key(shard_of(quest_id, shards)), quest_id) is not None:
        return Outcome.BUSY
    events = _rows(replies[1])
    hashes: dict[str, dict[str, bytes]] = {}
    failures: list[Row] = []
    children: list[bytes] = []
    lengths: list[int] = [len(events)]
    for (name, kind), reply in zip(_SECTIONS[1:], replies[2:-2], strict=True):
        if kind == "h":
            hashes[name] = _hash(reply)
            lengths.append(len(hashes[name]))
        elif kind == "x":
            failures = _rows(reply)
            lengths.append(len(failures))
        else:
            children = sorted(as_bytes(m) for m in reply or ())
            lengths.append(len(children))
    record = Compacted(quest_id, snap, events, hashes, failures, children)
    if record.hashes["ids"] == {text(f["id"]): f["v"] for _, f in events if "id" in f}:
        del record.hashes["ids"]  # rebuilt from the journal when read
    for name in [n for n, h in record.hashes.items() if not h]:
        del record.hashes[name]
    try:  # the snapshot is left out where the journal folds to exactly its bytes
        folded = record.folded() or quest
        if dump_quest(folded) == snap["quest"]:
            del record.snap["quest"]
        elif dump_quest(folded, record.version) == snap["quest"]:
            del record.snap["quest"]
            record.snap[_LEFT_OUT_V2] = b"1"
    except (CorruptJournal, InvalidTransition, ValueError):
        pass  # kept: the record reads it, not a fold
    blob = record.dump()
    if Compacted.load(blob) != record:  # a value its formatting did not give back: as text
        blob = record.dump(parse=False)
    if Compacted.load(blob) != record:  # what replaces the originals must read back as them
        raise CorruptJournal(f"the compacted record of quest {quest_id} does not read back "
                             "as the keys it was made from; nothing was deleted")
    order = ["snap", *(name for name, _ in _SECTIONS), *_DROPPED]
    answer = await run_script(client, COMPACT, [keys[n] for n in order],
                           [snap["v"], blob, *lengths])
    if answer == "ok":
        await _trails(client, quest_id, quest.repo, hashes.get("gh", {}))
    return {"ok": Outcome.COMPACTED, "already": Outcome.ALREADY,
            "busy": Outcome.BUSY}.get(answer, Outcome.CHANGED)


async def thaw(client: RedisClient, quest_id: str) -> bool:
    """Bring a compacted quest's keys back from its record, so it can be written to again;
    ``False`` when it was not compacted (any more). Raises ``CorruptJournal`` if a journal was
    written beside the record (a writer that does not know compaction)."""
    keys = _section_keys(quest_id)
    blob, held = await _record_blob(client, quest_id)
    if blob is None or held is None:
        return False
    try:
        record = Compacted.load(blob)
    except RecordError as exc:
        raise CorruptJournal(f"the compacted record of quest {quest_id} cannot be read: "
                             f"{exc}; it was left as it is") from exc
    args: list[Raw | int] = [held]
    snap = {k: v for k, v in record.snap.items() if k not in ("z", _LEFT_OUT_V2)}
    snap["quest"] = record.snap_quest()
    _put_hash(args, snap)
    _put_rows(args, record.events)
    _put_hash(args, record.ids())
    for name in ("policies", "done"):
        _put_hash(args, record.hashes.get(name, {}))
    _put_rows(args, record.failures)
    args += [len(record.children), *record.children]
    for name in ("gh", "evidence", "reviews", "transcript"):
        _put_hash(args, record.hashes.get(name, {}))
    answer = await run_script(client, THAW, [keys["snap"], *(keys[n] for n, _ in _SECTIONS)],
                           args)
    if answer == "mixed":
        raise CorruptJournal(f"quest {quest_id} is compacted, yet its journal was written "
                             "beside the record (a questbot that does not know compaction?); "
                             "nothing was restored: stop the old workers, then run "
                             "`python -m bot replay` on it")
    if answer == "ok":
        log.info("quest %s brought back from its compacted record", quest_id)
    return answer == "ok"


def _put_hash(args: list[Raw | int], values: dict[str, bytes]) -> None:
    args.append(len(values))
    for k, v in values.items():
        args += [k, v]


def _put_rows(args: list[Raw | int], rows: Sequence[Row]) -> None:
    args.append(len(rows))
    for entry_id, f in rows:
        args += [entry_id, len(f)]
        for k, v in f.items():
            args += [k, v]


async def run_script(client: RedisClient, source: str, keys: Sequence[str],
                     args: Sequence[Raw | int]) -> str:
    """Run ``source`` over ``keys`` (one slot); loads it where the server lacks it."""
    sha = _sha(source)
    try:
        reply = await client.evalsha(sha, len(keys), *keys, *args)
    except redis.exceptions.NoScriptError:
        await client.script_load(source)
        reply = await client.evalsha(sha, len(keys), *keys, *args)
    return text(reply)


def _sha(source: str) -> str:
    return hashlib.sha1(source.encode()).hexdigest()  # noqa: S324 - Redis names scripts so


# -- which quests are due ---------------------------------------------------------------------

async def due(client: RedisClient, now: datetime, after_s: float, *,
              limit: int = 100) -> list[str]:
    """Quests that ended at least ``after_s`` seconds before ``now``, oldest first."""
    until = int(now.timestamp() * 1000 - after_s * 1000)
    members = await client.zrangebyscore(compaction_due_key(), "-inf", until, start=0,
                                         num=limit)
    return [text(m) for m in members]


async def backfill(client: RedisClient, now: datetime) -> int:
    """Once per Redis: put on the due list every quest that ended before the due list was
    kept (an upgrade from a release without compaction), as if it ended ``now``; how many.
    A walk over every repository's quests (``SCAN``), so it runs once, marked by
    ``compaction_backfill_key``."""
    if not await client.set(compaction_backfill_key(), int(now.timestamp()), nx=True):
        return 0
    ms = int(now.timestamp() * 1000)
    added = 0
    async for key in client.scan_iter(match=QUESTS_PATTERN, count=500):
        members = sorted(text(m) for m in await client.smembers(key))
        for start in range(0, len(members), 200):
            part = members[start:start + 200]
            async with client.pipeline(transaction=False) as pipe:
                for qid in part:
                    pipe.hmget(quest_keys(qid).snap, ["quest", "z"])
                snaps = await pipe.execute()
            ended = []
            for qid, (quest, z) in zip(part, snaps, strict=True):
                if quest is None or z is not None:
                    continue
                try:
                    if load_quest(quest).state in TERMINAL:
                        ended.append(qid)
                except (RecordError, ValueError):
                    log.warning("quest %s's snapshot cannot be read; it is not compacted", qid)
            if ended:
                added += int(await client.zadd(compaction_due_key(),  # type: ignore[arg-type]
                                               dict.fromkeys(ended, ms), nx=True))
    if added:
        log.info("%d quests that ended before compaction was kept will be compacted", added)
    return added


async def settle(client: RedisClient, quest_id: str, outcome: Outcome, now: datetime,
                 after_s: float, *, retry_s: float = 3600) -> None:
    """After ``compact``: a quest compacted, gone or living again leaves the due set (a quest
    that lives again comes back when it ends again); one that was busy or changed is due again
    ``retry_s`` from ``now``."""
    key = compaction_due_key()
    if outcome in (Outcome.BUSY, Outcome.CHANGED):
        again = now.timestamp() * 1000 + (retry_s - after_s) * 1000
        await client.zadd(key, {quest_id: int(again)}, xx=True)
    else:
        await client.zrem(key, quest_id)
