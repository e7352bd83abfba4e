"""The Lua scripts that make each journal step atomic. Every script touches keys of one hash
tag only (one quest, or one shard), so it runs unchanged on Redis Cluster.

Scripts are called with ``EVALSHA`` inside pipelines; a server that lost its script cache (a
restart, a failover, ``SCRIPT FLUSH``) answers ``NOSCRIPT``, nothing has run, and the caller
loads the scripts and retries (see ``ScriptSet``).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

import redis.asyncio

from bot.journal.wire import RedisClient

APPLY = """
-- KEYS: snap, events, ids, outbox, policies
-- ARGV: expected version, policy digest, policy json ('' when the quest holds it already),
--   entry count n, n pairs of event id and event json (the event, then its follow-ups),
--   quest json ('' when the snapshot is not written this time: bot.journal.snapshots), then
--   effect key/json pairs
-- Answers one status line, '<dup|conflict|compacted> <version> <outbox length>' or 'ok
-- <version>': a simple string is one line for the client to read, where an array of four took
-- seven (issue 26, item 5). An 'ok' that appended effects left the outbox non-empty, and one
-- that appended none rings no doorbell, so it needs no XLEN.
local seen = redis.call('HGET', KEYS[3], ARGV[5])
if seen then
  return {ok = 'dup ' .. seen .. ' ' .. redis.call('XLEN', KEYS[4])}
end
local snap = redis.call('HMGET', KEYS[1], 'v', 'p', 'z')
if snap[3] then
  -- compacted (bot.journal.compaction): the journal brings its keys back and applies again
  return {ok = 'compacted 0 0'}
end
local cur = tonumber(snap[1] or '0')
if cur ~= tonumber(ARGV[1]) then
  return {ok = 'conflict ' .. cur .. ' 0'}
end
if snap[2] ~= ARGV[2] then
  -- decided under another policy than the last entry: record it, and from which version
  if ARGV[3] ~= '' then redis.call('HSETNX', KEYS[5], ARGV[2], ARGV[3]) end
  redis.call('HSET', KEYS[5], '@' .. (cur + 1), ARGV[2])
end
-- each version is made text once, with '%d': Lua turns a number it is handed as text with
-- '%.14g', the slow path of printf, every time (~5% of the script's instructions, issue 26)
local v, vs = cur, ARGV[1]
local last = 4 + 2 * tonumber(ARGV[4])
for i = 5, last, 2 do
  v = v + 1
  vs = string.format('%d', v)
  redis.call('XADD', KEYS[2], '*', 'id', ARGV[i], 'v', vs, 'e', ARGV[i + 1])
  redis.call('HSET', KEYS[3], ARGV[i], vs)
end
if ARGV[last + 1] == '' then
  redis.call('HSET', KEYS[1], 'v', vs, 'p', ARGV[2])
else
  redis.call('HSET', KEYS[1], 'v', vs, 'quest', ARGV[last + 1], 'p', ARGV[2])
end
for i = last + 2, #ARGV, 2 do
  redis.call('XADD', KEYS[4], '*', 'k', ARGV[i], 'e', ARGV[i + 1])
end
return {ok = 'ok ' .. vs}
"""

RING = """
-- KEYS: a shard's doorbell stream; ARGV: quest ids.
-- A doorbell for each quest, as ``Journal.ring`` rings one: the apply's follow-up rings every
-- quest of its round in the shard with one call (one reply to read, not one a quest).
for i = 1, #ARGV do
  redis.call('XADD', KEYS[1], '*', 'q', ARGV[i])
end
return #ARGV
"""

ENQUEUE = """
-- KEYS: done, outbox
-- ARGV: effect key/json pairs.
-- Effects that are not the outcome of a transition (a reply, a reaction): each is appended to
-- the outbox unless its key was delivered already or is waiting there, so a redelivered
-- webhook enqueues nothing new. Returns how many were appended, and the outbox's length.
local queued = {}
for _, entry in ipairs(redis.call('XRANGE', KEYS[2], '-', '+')) do
  local fields = entry[2]
  for i = 1, #fields, 2 do
    if fields[i] == 'k' then queued[fields[i + 1]] = true end
  end
end
local added = 0
for i = 1, #ARGV, 2 do
  if not queued[ARGV[i]] and redis.call('HEXISTS', KEYS[1], ARGV[i]) == 0 then
    redis.call('XADD', KEYS[2], '*', 'k', ARGV[i], 'e', ARGV[i + 1])
    queued[ARGV[i]] = true
    added = added + 1
  end
end
return {added, redis.call('XLEN', KEYS[2])}
"""

DELIVERED = """
-- KEYS: done, outbox, tries, retry_at, lease
-- ARGV: effect key, outbox entry id, outcome, lease token, lease ms.
-- Records the effect and keeps the runner's lease for the next one, as HOLD does: 1 while it
-- is the runner's, 0 once another runner holds it.
redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
redis.call('XDEL', KEYS[2], ARGV[2])
redis.call('HDEL', KEYS[3], ARGV[1])
redis.call('HDEL', KEYS[4], ARGV[1])
local holder = redis.call('GET', KEYS[5])
if holder == false or holder == ARGV[4] then
  redis.call('SET', KEYS[5], ARGV[4], 'PX', ARGV[5])
  return 1
end
return 0
"""

FAILED = """
-- KEYS: done, outbox, tries, retry_at, failures
-- ARGV: effect key, outbox entry id, then failure record field/value pairs
local already = redis.call('HGET', KEYS[1], ARGV[1])
if already then
  redis.call('XDEL', KEYS[2], ARGV[2])
  return 0
end
redis.call('HSET', KEYS[1], ARGV[1], 'failed')
local fields = {}
for i = 3, #ARGV do fields[#fields + 1] = ARGV[i] end
redis.call('XADD', KEYS[5], '*', unpack(fields))
redis.call('XDEL', KEYS[2], ARGV[2])
redis.call('HDEL', KEYS[3], ARGV[1])
redis.call('HDEL', KEYS[4], ARGV[1])
return 1
"""

RETRY_LATER = """
-- KEYS: tries, retry_at; ARGV: effect key, base ms, cap ms, now ms
local n = redis.call('HINCRBY', KEYS[1], ARGV[1], 1)
local delay = math.min(tonumber(ARGV[3]), tonumber(ARGV[2]) * (2 ^ (n - 1)))
redis.call('HSET', KEYS[2], ARGV[1], math.floor(tonumber(ARGV[4]) + delay))
return n
"""

RELEASE = """
-- KEYS: lease; ARGV: token. Delete the lease only if we still hold it.
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""

HOLD = """
-- KEYS: lease; ARGV: token, ms. Take the lease when it is free, keep it when it is ours (for
-- another ARGV[2] ms); 0 when another runner holds it. Taking a free lease back is safe: one
-- runner at a time holds it, and whoever held it meanwhile recorded what it delivered.
local holder = redis.call('GET', KEYS[1])
if holder == false or holder == ARGV[1] then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return 1
end
return 0
"""

FIRE_DONE = """
-- KEYS: timers zset, timer events hash; ARGV: timer id, due ms it was fired for.
-- Remove the timer only if it was not rescheduled meanwhile.
local due = redis.call('ZSCORE', KEYS[1], ARGV[1])
if due and tonumber(due) == tonumber(ARGV[2]) then
  redis.call('ZREM', KEYS[1], ARGV[1])
  redis.call('HDEL', KEYS[2], ARGV[1])
  return 1
end
return 0
"""


def sha1(source: str) -> str:
    return hashlib.sha1(source.encode()).hexdigest()  # noqa: S324 - Redis names scripts by SHA-1


@dataclass
class ScriptSet:
    """The scripts' SHA-1s, and loading them into a server that does not have them."""

    sources: dict[str, str] = field(default_factory=lambda: {
        "apply": APPLY, "ring": RING, "enqueue": ENQUEUE, "delivered": DELIVERED, "failed": FAILED,
        "retry_later": RETRY_LATER, "release": RELEASE, "hold": HOLD, "fire_done": FIRE_DONE,
    })

    def sha(self, name: str) -> str:
        return sha1(self.sources[name])

    async def load(self, client: RedisClient) -> None:
        for source in self.sources.values():
            await client.script_load(source)

    async def call(self, client: RedisClient, name: str, keys: list[str],
                   args: list[str | int | float]) -> object:
        """One script call outside a pipeline, loading the script if the server lacks it."""
        try:
            return await client.evalsha(self.sha(name), len(keys), *keys, *args)
        except redis.exceptions.NoScriptError:
            await client.script_load(self.sources[name])
            return await client.evalsha(self.sha(name), len(keys), *keys, *args)
