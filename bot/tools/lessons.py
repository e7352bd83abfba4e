"""``python -m bot lessons REPO``: what the repository's closed quests taught, as the
consolidation reviewer accepted them and as every later stage's agent reads them, newest
first; ``--drop QUEST_ID`` drops the lessons of one quest (a wrong or outdated lesson), and
that quest is not asked again. Whoever reaches the Redis is the operator: that is the
authorization, as for ``review request``."""

from __future__ import annotations

import argparse
import asyncio
import json

from bot.control_chars import one_line, say
from bot.core.lessons import ENDING_WORDS
from bot.journal.lessons import Lesson, LessonStore, inbox_rewrite, lesson_trail
from bot.journal.store import Journal
from bot.journal.wire import connect
from bot.settings.process.environment import redis_url
from bot.settings.process.names import reads


async def listed(url: str, repo: str) -> list[Lesson]:
    client = connect(url, socket_timeout=10)
    try:
        return await LessonStore(client).lessons(repo)
    finally:
        await client.aclose()


async def dropped(url: str, repo: str, quest_id: str) -> int:
    """Drop them, and ask a worker to write the inbox again without them."""
    client = connect(url, socket_timeout=10)
    try:
        count = await LessonStore(client).drop(repo, quest_id)
        if count:
            await Journal(client).enqueue(lesson_trail(quest_id), [inbox_rewrite(
                quest_id, repo, 0, "dropped")])
        return count
    finally:
        await client.aclose()


def lessons_text(repo: str, lessons: list[Lesson]) -> str:
    if not lessons:
        return (f"{repo} has no lessons yet: one is kept when a quest that landed, was rolled "
                "back or was abandoned after work teaches something and the consolidation "
                "reviewer accepts it.")
    lines = [f"{repo}: {len(lessons)} lesson{'s' if len(lessons) != 1 else ''}, newest first "
             "(every stage's agent reads them)"]
    for lesson in lessons:
        lines += ["", f"quest {lesson.quest_id} (revision {lesson.revision}), "
                  f"{ENDING_WORDS[lesson.ending]}, {lesson.at:%Y-%m-%d %H:%M} UTC:",
                  f"  {one_line(lesson.text)}"]
        if lesson.synopsis:
            lines.append(f"  accepted because: {one_line(lesson.synopsis)}")
    lines += ["", f"Drop a wrong one: python -m bot lessons {repo} --drop QUEST_ID"]
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    """0; 1 when ``--drop`` found no lesson of that quest."""
    url = args.redis or redis_url()
    if args.drop:
        count = asyncio.run(dropped(url, args.repo, args.drop))
        if not count:
            say(f"lessons: {args.repo} keeps no lesson from quest {args.drop}; "
                f"`python -m bot lessons {args.repo}` lists them", err=True)
            return 1
        say(f"dropped {count} lesson{'s' if count != 1 else ''} of quest {args.drop}; "
            "the agent no longer reads it, and the quest is not asked again")
        return 0
    found = asyncio.run(listed(url, args.repo))
    # the lessons are a model's words: the text is made inert (``one_line``), the JSON is
    # escaped by json.dumps; say() holds both to the same rule as every command's output
    say(json.dumps([lesson.model_dump(mode="json") for lesson in found], indent=2)
        if args.json else lessons_text(args.repo, found))
    return 0


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    ls = sub.add_parser("lessons", epilog=reads("REDIS_URL (unless --redis is given)"),
                        help="what a repository's closed quests taught (every "
                        "stage's agent reads them); --drop QUEST_ID drops one")
    ls.add_argument("repo", help="the repository, owner/name")
    ls.add_argument("--drop", metavar="QUEST_ID", help="drop the lessons this quest taught")
    ls.add_argument("--redis", metavar="URL", help="the Redis (default: $REDIS_URL)")
    ls.add_argument("--json", action="store_true", help="print them as JSON")
    ls.set_defaults(func=run)
