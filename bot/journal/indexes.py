"""The lookups the lifecycle needs, kept beside the journal: quests by repository and by
fingerprint, live quests per repository (the cap), muted fingerprints (by Redis TTL) and
parent → children.

These keys live outside the quest's slot, so they are written right after the atomic apply,
not inside it; the writes of a whole round of applies are merged per key and sent in one round
trip with the doorbells. Every write is idempotent and derived from the quest as it now stands,
and the journal re-runs them when an event is redelivered; a crash between the apply and these
writes therefore heals on the redelivery, and ``rebuild(..., repair=True)`` rewrites them.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from datetime import datetime

from bot.core import LIVE, Effect, EffectType, Quest, State
from bot.core.limits import bad_ending
from bot.journal.keys import (
    compaction_due_key,
    fingerprint_key,
    muted_key,
    quest_keys,
    repo_bad_endings_key,
    repo_held_key,
    repo_live_key,
    repo_quests_key,
)
from bot.journal.wire import RedisClient


class IndexWrites:
    """The index writes of many transitions, merged per key: one ``SADD`` / ``SREM`` per set
    for a whole round of applies, not one per quest. Only what changed is written, unless
    ``full`` (a redelivery, or a rebuild) asks for everything. A later write of the same member
    to the same set replaces an earlier one."""

    def __init__(self) -> None:
        self._add: dict[str, dict[str, None]] = {}
        self._remove: dict[str, dict[str, None]] = {}
        self._mutes: dict[str, tuple[str, int]] = {}
        self._scored: dict[str, dict[str, int]] = {}
        """Sorted-set members added only if absent (``ZADD NX``): the first time counts."""
        self._unscored: dict[str, dict[str, None]] = {}

    def _member(self, key: str, member: str, *, present: bool) -> None:
        (self._remove if present else self._add).get(key, {}).pop(member, None)
        (self._add if present else self._remove).setdefault(key, {})[member] = None

    def transition(self, before: Quest | None, after: Quest, effects: Sequence[Effect],
                   now: datetime, *, full: bool = False) -> None:
        new = full or before is None
        if new:
            self._member(repo_quests_key(after.repo), after.id, present=True)
            self._member(fingerprint_key(after.repo, after.fingerprint), after.id,
                         present=True)
        if after.attached and (new or before is None or before.attached != after.attached):
            known = () if new or before is None else before.attached
            for fingerprint in after.attached:  # another failure's reports joined this quest
                if fingerprint not in known:
                    self._member(fingerprint_key(after.repo, fingerprint), after.id,
                                 present=True)
        live = after.state in LIVE
        if new or (before is not None and (before.state in LIVE) != live):
            self._member(repo_live_key(after.repo), after.id, present=live)
            # an ended quest is compacted a while later (``bot.journal.compaction``)
            if live and before is not None:  # lives again: a reopened quest
                self._unscored.setdefault(compaction_due_key(), {})[after.id] = None
            elif not live:
                self._scored.setdefault(compaction_due_key(), {})[after.id] = int(
                    now.timestamp() * 1000)
        if after.parent is not None and (new or before is None or before.parent != after.parent):
            self._member(quest_keys(after.parent).children, after.id, present=True)
        self._limits(before, after, now, full=new or full)
        for effect in effects:
            if effect.type is EffectType.MUTE_FINGERPRINT:
                seconds = _mute_seconds(effect, now)
                if seconds > 0:
                    fp = str(effect.payload.get("fingerprint", after.fingerprint))
                    self._mutes[muted_key(after.repo, fp)] = (after.id, seconds)

    def _limits(self, before: Quest | None, after: Quest, now: datetime, *, full: bool) -> None:
        """The repository's limits (``core.limits``): a bad ending counted once, and the
        held quests listed while they are held."""
        # most applies write neither: the time and the keys are made only when one is written
        # (every apply of a round passes here: ``Journal._follow_up``)
        ending = bad_ending(before, after)
        if ending is not None:
            member = f"{after.id}:{after.revision}:{after.attempt_number}:{ending.value}"
            self._scored.setdefault(repo_bad_endings_key(after.repo), {})[member] = int(
                now.timestamp() * 1000)
        held = after.held is not None and after.state is State.SENSED
        was = before is not None and before.held is not None and before.state is State.SENSED
        if held and (full or not was):
            self._scored.setdefault(repo_held_key(after.repo), {}).setdefault(
                after.id, int(now.timestamp() * 1000))
        elif not held and (was or (full and before is not None)):
            self._unscored.setdefault(repo_held_key(after.repo), {})[after.id] = None

    def commands(self) -> Iterator[tuple[str | int, ...]]:
        for key, members in self._add.items():
            if members:
                yield ("SADD", key, *members)
        for key, members in self._remove.items():
            if members:
                yield ("SREM", key, *members)
        for key, (quest_id, seconds) in self._mutes.items():
            yield ("SET", key, quest_id, "EX", seconds)
        for key, scored in self._scored.items():
            yield ("ZADD", key, "NX", *(x for m, ms in scored.items() for x in (ms, m)))
        for key, members in self._unscored.items():
            yield ("ZREM", key, *members)


def _mute_seconds(effect: Effect, now: datetime) -> int:
    """Until the payload's ``until`` if it names one (so a redelivery does not extend the
    mute), else ``hours`` from now."""
    until = effect.payload.get("until")
    if isinstance(until, str):
        try:
            return int((datetime.fromisoformat(until) - now).total_seconds())
        except ValueError:
            pass
    return int(effect.payload.get("hours", 24)) * 3600


def _str(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


class Indexes:
    """Read side of the indexes."""

    def __init__(self, client: RedisClient) -> None:
        self.client = client

    async def quests_of_repo(self, repo: str) -> set[str]:
        return {_str(m) for m in await self.client.smembers(repo_quests_key(repo))}

    async def live_quests(self, repo: str) -> set[str]:
        return {_str(m) for m in await self.client.smembers(repo_live_key(repo))}

    async def live_count(self, repo: str) -> int:
        return int(await self.client.scard(repo_live_key(repo)))

    async def quests_with_fingerprint(self, repo: str, fingerprint: str) -> set[str]:
        members = await self.client.smembers(fingerprint_key(repo, fingerprint))
        return {_str(m) for m in members}

    async def is_muted(self, repo: str, fingerprint: str) -> bool:
        return bool(await self.client.exists(muted_key(repo, fingerprint)))

    async def mute_ttl(self, repo: str, fingerprint: str) -> int:
        """Seconds left on a mute; -2 when the fingerprint is not muted."""
        return int(await self.client.ttl(muted_key(repo, fingerprint)))

    async def children(self, parent: str) -> set[str]:
        return {_str(m) for m in await self.client.smembers(quest_keys(parent).children)}
