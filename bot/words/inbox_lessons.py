"""The inbox's words for what closed quests taught (``bot.journal.lessons``): the latest few
lessons the consolidation reviewer accepted, each with the quest it came from (linked to its pull
request or issue when questbot recorded one), so a maintainer
sees what every later quest's agent is told — and drops one that is wrong by ticking its box
(``inbox_marks.lesson_marker``; ``bot.inbox.intake`` acts on it). Pure.

A lesson is a model's words about text from outside, so it is shown as escaped prose: no
links, mentions or formatting of its own (``markdown.plain``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from bot.core.lessons import ENDING_WORDS, mark
from bot.journal.lessons import Lesson
from bot.words.inbox_marks import lesson_marker
from bot.words.markdown import inline_code, plain

SHOWN = 5
_THREAD = re.compile(r"#[0-9]{1,10}")


def lessons_lines(repo: str, lessons: Sequence[Lesson],
                  threads: Mapping[str, str] | None = None) -> list[str]:
    """The inbox section, or nothing before the first lesson is kept. ``threads``: a quest's
    pull request, else its issue, as ``#12`` (GitHub links it in the inbox, which lives in the
    same repository), for the quests questbot recorded one of; the rest are named by id."""
    threads = threads or {}
    if not lessons:
        return []
    lines = ["", "### What closed quests taught", "",
             "Every later quest's agent reads these lessons; each passed a review against the "
             "record of the quest it came from.", ""]
    for lesson in lessons[:SHOWN]:
        thread = threads.get(lesson.quest_id, "")
        where = f" in {thread}" if _THREAD.fullmatch(thread) else ""
        lines.append(f"- [ ] {lesson_marker(mark(lesson.quest_id, lesson.revision))} "
                     f"{plain(lesson.text, limit=600)} (quest {inline_code(lesson.quest_id)}"
                     f"{where}, {ENDING_WORDS[lesson.ending]})")
    if len(lessons) > SHOWN:
        older = len(lessons) - SHOWN
        lines.append(f"- and {older} older {'lesson' if older == 1 else 'lessons'}, which "
                     "agents read too; the command below lists and drops them")
    lines += ["", "A wrong or outdated lesson: tick its box to drop it (for people with write "
              "access or a reviewer in `.github/questbot.yml`); no later quest's agent reads it "
              "again. Whoever runs questbot can also drop one with "
              + inline_code(f"python -m bot lessons {repo} --drop QUEST_ID") + "."]
    return lines


def lesson_tick_refused(actor: str, quest_id: str) -> str:
    """The reply to someone without the rights who ticked a lesson's box."""
    return (f"@{actor} your tick on the lesson from quest {inline_code(quest_id)} in this inbox "
            "did not drop it: dropping a lesson needs write access to this repository, or "
            "being one of the reviewers in `.github/questbot.yml`. If the lesson is wrong, ask "
            "a maintainer to tick it; the box is cleared again.")
