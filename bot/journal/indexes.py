"""The lookups the lifecycle needs, kept beside the journal: quests by repository and by
fingerprint, live quests per repository (the cap), muted fingerprints (by Redis TTL) and
parent → children.

These keys live outside the quest's slot, so they are written right after the atomic apply,
not inside it. Every write is idempotent and derived from the quest as it now stands, and the
journal re-runs them when an event is redelivered; a crash between the apply and these writes
therefore heals on the redelivery, and ``reindex`` rebuilds them from the snapshots.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

import redis.asyncio

from bot.core import LIVE, Effect, EffectType, Quest
from bot.journal.keys import (
    fingerprint_key,
    muted_key,
    quest_keys,
    repo_live_key,
    repo_quests_key,
)

Pipe = redis.asyncio.client.Pipeline


def queue_index_writes(pipe: Pipe, before: Quest | None, after: Quest,
                       effects: Sequence[Effect], now: datetime, *, full: bool = False) -> None:
    """Queue on ``pipe`` the index writes one transition needs. Only what changed is written,
    unless ``full`` (a redelivery, or ``reindex``) asks for everything."""
    if full or before is None:
        pipe.sadd(repo_quests_key(after.repo), after.id)
        pipe.sadd(fingerprint_key(after.repo, after.fingerprint), after.id)
    live = after.state in LIVE
    if full or before is None or (before.state in LIVE) != live:
        if live:
            pipe.sadd(repo_live_key(after.repo), after.id)
        else:
            pipe.srem(repo_live_key(after.repo), after.id)
    if after.parent is not None and (full or before is None or before.parent != after.parent):
        pipe.sadd(quest_keys(after.parent).children, after.id)
    for effect in effects:
        if effect.type is EffectType.MUTE_FINGERPRINT:
            seconds = _mute_seconds(effect, now)
            if seconds > 0:
                fp = str(effect.payload.get("fingerprint", after.fingerprint))
                pipe.set(muted_key(after.repo, fp), after.id, ex=seconds)


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

    def __init__(self, client: redis.asyncio.Redis) -> None:
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
