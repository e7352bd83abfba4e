"""The repository's limits as Redis holds them (``bot.core.limits`` decides): its bad endings,
the quests triage held, and its reflections — the last that passed, and one waiting for a
review. The first two are written by the journal's index writes (``IndexWrites``), derived from
each transition; the reflections by whoever reviewed one (``/reflect``, the reflection
reviewer)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from bot.core.limits import reflection_due
from bot.journal.keys import repo_bad_endings_key, repo_held_key, repo_reflection_key
from bot.journal.records import dump_model, load_model
from bot.journal.wire import RedisClient, atomic


class ReflectionRecord(BaseModel):
    """A reflection: what went wrong and what changes, who wrote it, and who passed it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    text: str = Field(min_length=1, max_length=4000)
    by: str
    at: datetime
    reviewer: str | None = None
    """Who passed it: the maintainer who wrote ``/reflect``, or the reflection reviewer."""
    synopsis: str = ""


def _at(ms: float) -> datetime:
    return datetime.fromtimestamp(ms / 1000, tz=UTC)


class RepoLimits:
    def __init__(self, client: RedisClient) -> None:
        self.client = client

    async def bad_endings(self, repo: str) -> list[datetime]:
        found: Any = await self.client.zrange(repo_bad_endings_key(repo), 0, -1,
                                              withscores=True)
        return [_at(float(ms)) for _member, ms in found]

    async def wave_due(self, repo: str, after_bad_endings: int, window_hours: int) -> bool:
        """Whether a reflection wave holds ``repo``'s new quests now: its bad endings since the
        last reflection that passed, under the repository's ``reflection`` settings."""
        passed = await self.passed(repo)
        return reflection_due(await self.bad_endings(repo),
                              passed.at if passed is not None else None,
                              after_bad_endings, timedelta(hours=window_hours))

    async def held(self, repo: str) -> list[tuple[str, float]]:
        """The quests held, oldest first, each with when it was first held (epoch ms)."""
        found: Any = await self.client.zrange(repo_held_key(repo), 0, -1, withscores=True)
        return [(m.decode() if isinstance(m, bytes) else str(m), float(ms)) for m, ms in found]

    async def unhold(self, repo: str, quest_id: str) -> None:
        await self.client.zrem(repo_held_key(repo), quest_id)

    async def passed(self, repo: str) -> ReflectionRecord | None:
        return await self._record(repo, "passed")

    async def pending(self, repo: str) -> ReflectionRecord | None:
        return await self._record(repo, "pending")

    async def propose(self, repo: str, record: ReflectionRecord) -> None:
        """Keep a reflection for its review (the reflection reviewer's hook)."""
        await self.client.hset(repo_reflection_key(repo), "pending",
                              dump_model("reflection", record))

    async def pass_reflection(self, repo: str, record: ReflectionRecord) -> None:
        """Record a reflection that passed its review; a pending one, and a rejection, are
        done with, and the next wave begins (``wave``: ``bot.journal.reflection_attempts``)."""
        key = repo_reflection_key(repo)
        await atomic(self.client, [key], ("HSET", key, "passed", dump_model("reflection", record)),
                     ("HDEL", key, "pending", "rejected"), ("HINCRBY", key, "wave", 1))

    async def _record(self, repo: str, field: str) -> ReflectionRecord | None:
        raw = await self.client.hget(repo_reflection_key(repo), field)
        return load_model("reflection", raw, ReflectionRecord) if raw else None
