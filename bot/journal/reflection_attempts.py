"""The attempts at a repository's reflection as Redis holds them: each reflection written (by
questbot's writer, or submitted by someone without write access) and the review it got, once
each, beside the wave they belong to (``bot.reflection.runs`` runs them).

Layout: the repository's reflection hash (``repo:{<owner/name>}:reflection``, which
``RepoLimits`` keeps ``passed`` and ``pending`` in), so every write below is one script on one
key and runs unchanged on Redis Cluster:

* ``wave`` — how many reflections passed so far: the wave a run belongs to. A pass (a
  maintainer's ``/reflect`` or a review) increments it in the same script that records it;
* ``try:<wave>:<attempt>`` — the ``ReflectionAttempt`` JSON, written once (``HSETNX``): a worker
  that restarted, or a second worker, finds it and reviews that one rather than writing another;
* ``verdict:<wave>:<attempt>`` — the ``ReflectionReview`` JSON, written once likewise;
* ``rejected`` — the latest rejection, for the inbox; cleared by a pass;
* ``outsiders:<wave>`` — how many reflections people without write access submitted, and
  ``outsider:<wave>:<comment>`` which one each comment was.

Every script first checks that ``wave`` is still the run's: a run that finishes after the wave
ended (a maintainer reflected meanwhile) records nothing, and a wave passes once.
"""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, ConfigDict

from bot.journal.keys import repo_reflection_key
from bot.journal.limits import ReflectionRecord
from bot.journal.records import dump_model, load_model
from bot.journal.wire import RedisClient

_CURRENT = "if tonumber(redis.call('HGET', KEYS[1], 'wave') or '0') ~= tonumber(ARGV[1]) " \
           "then return false end\n"
_ONCE = _CURRENT + """
local set = redis.call('HSETNX', KEYS[1], ARGV[2], ARGV[3])
if set == 1 and ARGV[4] ~= '' then redis.call('HSET', KEYS[1], 'pending', ARGV[4]) end
return redis.call('HGET', KEYS[1], ARGV[2])
"""
_PASS = _CURRENT + """
redis.call('HSET', KEYS[1], 'passed', ARGV[2])
redis.call('HDEL', KEYS[1], 'pending', 'rejected')
redis.call('HINCRBY', KEYS[1], 'wave', 1)
return 1
"""
_REJECT = _CURRENT + """
redis.call('HSET', KEYS[1], 'rejected', ARGV[2])
redis.call('HDEL', KEYS[1], 'pending')
return 1
"""
_OUTSIDER = _CURRENT + """
local seen = redis.call('HGET', KEYS[1], 'outsider:' .. ARGV[1] .. ':' .. ARGV[2])
if seen then return tonumber(seen) end
local n = redis.call('HINCRBY', KEYS[1], 'outsiders:' .. ARGV[1], 1)
redis.call('HSET', KEYS[1], 'outsider:' .. ARGV[1] .. ':' .. ARGV[2], n)
return n
"""


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class ReflectionAttempt(_Model):
    """One reflection put up for review, with the record it was written from: the reviewer is
    fed exactly this record, whoever reviews it and however often the run is retried."""

    wave: int
    attempt: str
    """``1``, ``2``, … for questbot's writer; ``s1``, ``s2``, … for people's submissions."""
    text: str
    by: str
    at: datetime
    session: str
    """The writer's session (``questbot-reflection-writer:…``), or the submitter's login."""
    record: dict[str, str]
    """The bad endings' record: citation path (``endings/<n>``) → what it says."""


class ReflectionReview(_Model):
    passed: bool | None
    """``None``: the verdict's citations did not hold, so it decided nothing."""
    synopsis: str
    problems: tuple[str, ...] = ()
    session: str
    at: datetime


class ReflectionAttempts:
    def __init__(self, client: RedisClient) -> None:
        self.client = client
        self._once = client.register_script(_ONCE)
        self._pass = client.register_script(_PASS)
        self._reject = client.register_script(_REJECT)
        self._outsider = client.register_script(_OUTSIDER)

    async def wave(self, repo: str) -> int:
        raw = await self.client.hget(repo_reflection_key(repo), "wave")
        return int(raw or 0)

    async def attempt(self, repo: str, wave: int, attempt: str) -> ReflectionAttempt | None:
        raw = await self.client.hget(repo_reflection_key(repo), f"try:{wave}:{attempt}")
        return load_model("reflection_attempt", raw, ReflectionAttempt) if raw else None

    async def review(self, repo: str, wave: int, attempt: str) -> ReflectionReview | None:
        raw = await self.client.hget(repo_reflection_key(repo), f"verdict:{wave}:{attempt}")
        return load_model("reflection_review", raw, ReflectionReview) if raw else None

    async def rejected(self, repo: str) -> ReflectionRecord | None:
        raw = await self.client.hget(repo_reflection_key(repo), "rejected")
        return load_model("reflection", raw, ReflectionRecord) if raw else None

    async def write_once(self, repo: str, attempt: ReflectionAttempt, *,
                         pending: bool = True) -> ReflectionAttempt | None:
        """Keep ``attempt`` unless one is kept already (then that one); with ``pending``,
        shown in the inbox as waiting for its review. ``None``: its wave is over."""
        shown = ReflectionRecord(text=attempt.text[:4000], by=attempt.by, at=attempt.at)
        raw = await self._once(keys=[repo_reflection_key(repo)],
                               args=[attempt.wave, f"try:{attempt.wave}:{attempt.attempt}",
                                     dump_model("reflection_attempt", attempt),
                                     dump_model("reflection", shown) if pending else ""])
        return load_model("reflection_attempt", raw, ReflectionAttempt) if raw else None

    async def review_once(self, repo: str, wave: int, attempt: str,
                          review: ReflectionReview) -> ReflectionReview | None:
        """Keep ``review`` of the attempt unless one is kept already (then that one)."""
        raw = await self._once(keys=[repo_reflection_key(repo)],
                               args=[wave, f"verdict:{wave}:{attempt}",
                                     dump_model("reflection_review", review), ""])
        return load_model("reflection_review", raw, ReflectionReview) if raw else None

    async def pass_wave(self, repo: str, wave: int, record: ReflectionRecord) -> bool:
        """Pass ``wave`` with ``record``; ``False`` when it is over already (passed once)."""
        return bool(await self._pass(keys=[repo_reflection_key(repo)],
                                     args=[wave, dump_model("reflection", record)]))

    async def reject(self, repo: str, wave: int, record: ReflectionRecord) -> bool:
        """Show ``record`` (its ``synopsis`` the reviewer's reason) as the latest rejection."""
        return bool(await self._reject(keys=[repo_reflection_key(repo)],
                                       args=[wave, dump_model("reflection", record)]))

    async def outsider(self, repo: str, wave: int, cause: str) -> int:
        """Count a submission by someone without write access, once per ``cause`` (the
        comment: a redelivered webhook counts it once); which one it is (0: the wave is
        over)."""
        return int(await self._outsider(keys=[repo_reflection_key(repo)], args=[wave, cause])
                   or 0)
