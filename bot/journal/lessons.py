"""A repository's lessons as Redis holds them: what closed quests taught, each reviewed by the
``consolidation_reviewer`` before it is kept (``bot.lessons.runs`` writes and reviews them).

Three keys, all under the repository's hash tag (one slot, so one script writes them):

* ``repo:{<repo>}:lessons`` — a list of the accepted lessons as JSON, newest first, at most
  ``MAX_LESSONS``: the agent reads them all into every stage's prompt, so the list stays short
  and the oldest give way.
* ``repo:{<repo>}:lessons:done`` — a hash: the ending's mark (``core.lessons.mark``, quest id
  and revision) → what became of its lesson (``kept``, ``rejected``, ``unreviewed``,
  ``dropped``). ``keep`` sets the mark with ``HSETNX`` and pushes the lesson in the same
  script, so two workers, or one delivering the effect again after a restart, keep it once.
  A rejected lesson is marked too: asked again, the quest is not reviewed again. A lesson
  written and not yet reviewed waits there as ``draft:<mark>`` (with what writing it cost),
  so a review tried again judges the same words.
* ``repo:{<repo>}:lessons:pending`` — a hash: the marks of endings whose lesson is owed (mark
  → ending), from the moment its effect is queued until its fate is written. The worker looks
  at it whenever a quest of the repository changes, and queues again the lesson of an ending
  whose effect the runner gave up on (the endpoint was down longer than its back-off).
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from bot.core.effects import Effect, EffectType, effect_key
from bot.core.lessons import ENDING_WORDS, Ending, mark
from bot.journal.keys import lessons_done_key, lessons_key, lessons_pending_key
from bot.journal.records import dump_model, load_model
from bot.journal.wire import RedisClient

MAX_LESSONS = 20
MAX_LESSON_CHARS = 600


def lesson_trail(quest_id: str) -> str:
    """The trail a quest's lesson effects go on (an outbox and lease of their own): a
    rolled-back quest goes on working, and its next stage must not wait behind a model run."""
    return f"{quest_id}/lesson"


def inbox_rewrite(quest_id: str, repo: str, revision: int, why: str) -> Effect:
    """A ``notify_inbox`` that writes the repository's inbox again: a lesson was kept or
    dropped, and the inbox shows them."""
    trail = lesson_trail(quest_id)
    return Effect(key=effect_key(trail, revision, EffectType.NOTIFY_INBOX.value, why, 0),
                  type=EffectType.NOTIFY_INBOX, quest_id=trail, revision=revision,
                  event_id=why, occurrence=0, payload={"rewrite": True, "repo": repo})


class Fate(StrEnum):
    KEPT = "kept"
    REJECTED = "rejected"
    UNREVIEWED = "unreviewed"
    """The review gave no usable answer: nothing is kept without a passing review."""
    DROPPED = "dropped"
    """Kept, then dropped by a maintainer (``python -m bot lessons REPO --drop QUEST``, or a
    tick on its box in the inbox)."""


class Lesson(BaseModel):
    """One accepted lesson: its words, the quest and ending it came from, and the review that
    accepted it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    quest_id: str
    revision: int
    repo: str
    ending: Ending
    text: str = Field(min_length=1, max_length=MAX_LESSON_CHARS)
    synopsis: str = ""
    """The consolidation reviewer's reason for accepting it."""
    at: datetime


class Draft(BaseModel):
    """A lesson written and waiting for its review, with the writer's spend."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    text: str
    tokens: int = 0
    cost_cents: int = 0


_KEEP = """
if redis.call('HSETNX', KEYS[2], ARGV[1], 'kept') == 0 then return 0 end
redis.call('LPUSH', KEYS[1], ARGV[2])
redis.call('LTRIM', KEYS[1], 0, tonumber(ARGV[3]) - 1)
redis.call('HDEL', KEYS[2], 'draft:' .. ARGV[1])
redis.call('HDEL', KEYS[3], ARGV[1])
return 1
"""

_DROP = """
local removed = 0
for _, raw in ipairs(redis.call('LRANGE', KEYS[1], 0, -1)) do
  local ok, lesson = pcall(cjson.decode, raw)
  if ok and type(lesson['data']) == 'table' then lesson = lesson['data'] end
  if ok and lesson['quest_id'] == ARGV[1]
     and (ARGV[2] == '' or tostring(lesson['revision']) == ARGV[2]) then
    removed = removed + redis.call('LREM', KEYS[1], 0, raw)
    redis.call('HSET', KEYS[2], ARGV[1] .. '@' .. lesson['revision'], 'dropped')
  end
end
return removed
"""


def _text(raw: Any) -> str:
    return raw.decode() if isinstance(raw, bytes) else str(raw)


def lesson_lines(lessons: list[Lesson]) -> tuple[str, ...]:
    """The lessons as the agent's task carries them: one line each, with where it came from."""
    return tuple(f"- {lesson.text} (quest {lesson.quest_id}, {ENDING_WORDS[lesson.ending]})"
                 for lesson in lessons)


class LessonStore:
    def __init__(self, client: RedisClient) -> None:
        self.client = client
        self._keep = client.register_script(_KEEP)
        self._drop = client.register_script(_DROP)

    async def fate(self, quest_id: str, revision: int, repo: str) -> Fate | None:
        """What became of this ending's lesson, or ``None`` when none was decided yet."""
        raw = await self.client.hget(lessons_done_key(repo), mark(quest_id, revision))
        return Fate(_text(raw)) if raw is not None else None

    async def keep(self, lesson: Lesson) -> bool:
        """Keep an accepted lesson, once per ending; ``False`` when its ending has a fate
        already (kept by another worker, or rejected)."""
        kept = await self._keep(keys=[lessons_key(lesson.repo), lessons_done_key(lesson.repo),
                                      lessons_pending_key(lesson.repo)],
                                args=[mark(lesson.quest_id, lesson.revision),
                                      dump_model("lesson", lesson), MAX_LESSONS])
        return bool(kept)

    async def settle(self, quest_id: str, revision: int, repo: str, fate: Fate) -> bool:
        """Record a lesson that is not kept (rejected, unreviewed), unless one was decided."""
        key, name = lessons_done_key(repo), mark(quest_id, revision)
        settled = await self.client.hsetnx(key, name, fate.value)
        await self.client.hdel(key, f"draft:{name}")
        await self.client.hdel(lessons_pending_key(repo), name)
        return bool(settled)

    async def owe(self, quest_id: str, revision: int, repo: str, ending: Ending) -> None:
        """This ending's lesson is owed: its effect is about to be queued."""
        await self.client.hset(lessons_pending_key(repo), mark(quest_id, revision),
                               ending.value)

    async def forgive(self, quest_id: str, revision: int, repo: str) -> None:
        """No lesson is owed after all (the quest moved on before it was written)."""
        await self.client.hdel(lessons_pending_key(repo), mark(quest_id, revision))

    async def owed(self, repo: str) -> list[tuple[str, int, Ending]]:
        """The endings whose lesson is owed: (quest id, revision, ending)."""
        raw: Any = await self.client.hgetall(lessons_pending_key(repo))
        out = []
        for name, ending in raw.items():
            quest_id, _, revision = _text(name).rpartition("@")
            out.append((quest_id, int(revision), Ending(_text(ending))))
        return sorted(out)

    async def draft(self, quest_id: str, revision: int, repo: str) -> Draft | None:
        raw = await self.client.hget(lessons_done_key(repo), f"draft:{mark(quest_id, revision)}")
        return load_model("lesson_draft", raw, Draft) if raw is not None else None

    async def set_draft(self, quest_id: str, revision: int, repo: str, draft: Draft) -> None:
        await self.client.hset(lessons_done_key(repo), f"draft:{mark(quest_id, revision)}",
                               dump_model("lesson_draft", draft))

    async def lessons(self, repo: str) -> list[Lesson]:
        """The accepted lessons of ``repo``, newest first."""
        raw: Any = await self.client.lrange(lessons_key(repo), 0, MAX_LESSONS - 1)
        return [load_model("lesson", item, Lesson) for item in raw]

    async def drop(self, repo: str, quest_id: str, revision: int | None = None) -> int:
        """Drop the lessons quest ``quest_id`` taught (a maintainer's call), or only the one of
        ``revision``; how many. Each is marked ``dropped``, so it is never kept again."""
        return int(await self._drop(keys=[lessons_key(repo), lessons_done_key(repo)],
                                    args=[quest_id, "" if revision is None else revision]))
