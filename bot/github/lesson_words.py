"""The inbox's words for what closed quests taught (``bot.journal.lessons``): the latest few
lessons the consolidation reviewer accepted, each with the quest it came from, so a maintainer
sees what every later quest's agent is told — and how to drop one that is wrong. Pure.

A lesson is a model's words about text from outside, so it is shown as escaped prose: no
links, mentions or formatting of its own (``markdown.plain``).
"""

from __future__ import annotations

from collections.abc import Sequence

from bot.core.lessons import ENDING_WORDS
from bot.github.markdown import inline_code, plain
from bot.journal.lessons import Lesson

SHOWN = 5


def lessons_lines(repo: str, lessons: Sequence[Lesson]) -> list[str]:
    """The inbox section, or nothing before the first lesson is kept."""
    if not lessons:
        return []
    lines = ["", "### What closed quests taught", "",
             "Every later quest's agent reads these lessons; each passed a review against the "
             "record of the quest it came from.", ""]
    for lesson in lessons[:SHOWN]:
        lines.append(f"- {plain(lesson.text, limit=600)} (quest {inline_code(lesson.quest_id)}, "
                     f"{ENDING_WORDS[lesson.ending]})")
    if len(lessons) > SHOWN:
        lines.append(f"- and {len(lessons) - SHOWN} older")
    lines += ["", "A wrong or outdated lesson is dropped by whoever runs questbot: "
              + inline_code(f"python -m bot lessons {repo} --drop QUEST_ID") + "."]
    return lines
