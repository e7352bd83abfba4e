"""The inbox issue's checkboxes, as Renovate's dependency dashboard has them: what a box means,
and which boxes an edit ticked.

Each entry a person can act on from the inbox is a task-list item with a hidden marker naming
its quest: ``- [ ] <!-- questbot:inbox-entry=q123 --> …``. Ticking it edits the issue; GitHub
sends ``issues`` ``edited`` with the body before (``changes.body.from``) and after, and the boxes
that went from empty to ticked are the request — only those, so an edit that keeps an
already-ticked box, or a redelivered webhook, asks for nothing new (intake keys the events by
delivery, too). questbot then writes the inbox again, every box empty.

What a tick asks for is the command a person would type: start a quest routed to a person
(``/quest fix``), turn finished research into a fix (``/quest fix``), or retry a parked quest
(``/resume``). ``tick_command`` names it, so the worker applies exactly the core event the
command would, under the same rules.

Each lesson the inbox shows has a box too, marked with its ending (``quest@revision``,
``bot.core.lessons.mark``): ``- [ ] <!-- questbot:inbox-lesson=q123@2 --> …``. Ticking it drops
that lesson (``lessons_ticked``), under the same rule of who may.
"""

from __future__ import annotations

import re

from bot.core import Quest, State
from bot.core.quest import ParkReason
from bot.words.commands import Command, CommandName, QuestMode

INBOX_MARKER = "<!-- questbot:inbox -->"
"""The hidden line by which questbot knows its inbox issue (with its author, the App's bot)."""

_BOX = re.compile(r"^[ \t]{0,3}[-*+][ \t]+\[(?P<mark>[ xX])\][ \t]+"
                  r"<!-- questbot:inbox-entry=(?P<quest>[A-Za-z0-9_.-]{1,64}) -->", re.M)


_LESSON_BOX = re.compile(r"^[ \t]{0,3}[-*+][ \t]+\[(?P<mark>[ xX])\][ \t]+"
                         r"<!-- questbot:inbox-lesson=(?P<quest>[A-Za-z0-9_.-]{1,64}@[0-9]{1,9})"
                         r" -->", re.M)


def entry_marker(quest_id: str) -> str:
    return f"<!-- questbot:inbox-entry={quest_id} -->"


def lesson_marker(ending: str) -> str:
    """The hidden marker of a lesson's box; ``ending`` is its mark, ``quest@revision``."""
    return f"<!-- questbot:inbox-lesson={ending} -->"


def _boxes(pattern: re.Pattern[str], body: str) -> dict[str, bool]:
    out: dict[str, bool] = {}
    for match in pattern.finditer(body):
        out.setdefault(match["quest"], match["mark"] != " ")
    return out


def _ticked(pattern: re.Pattern[str], before: str, after: str) -> list[str]:
    was = _boxes(pattern, before)
    return [name for name, on in _boxes(pattern, after).items() if on and was.get(name) is False]


def boxes(body: str) -> dict[str, bool]:
    """Each entry's quest id and whether its box is ticked (the first box of a quest counts)."""
    return _boxes(_BOX, body)


def ticked(before: str, after: str) -> list[str]:
    """The quests whose box ``after`` ticks and ``before`` had empty, in ``after``'s order."""
    return _ticked(_BOX, before, after)


def lesson_boxes(body: str) -> dict[str, bool]:
    """Each lesson's mark (``quest@revision``) and whether its box is ticked."""
    return _boxes(_LESSON_BOX, body)


def lessons_ticked(before: str, after: str) -> list[str]:
    """The lessons (marks) whose box ``after`` ticks and ``before`` had empty."""
    return _ticked(_LESSON_BOX, before, after)


def tick_command(quest: Quest) -> Command | None:
    """The command ticking ``quest``'s box stands for, or ``None`` when the inbox shows it
    without a box (a checkpoint waits for a review, not a tick)."""
    if quest.state is State.TRIAGED and quest.awaiting_person:
        return Command(name=CommandName.QUEST, mode=QuestMode.FIX, line=1)
    if quest.state is State.PARKED:
        if quest.park_reason is ParkReason.RESEARCH_COMPLETE:
            return Command(name=CommandName.QUEST, mode=QuestMode.FIX, line=1)
        if quest.park_reason is not ParkReason.WAITING_FOR_PARENT:
            return Command(name=CommandName.RESUME, line=1)
    return None


def tick_label(command: Command) -> str:
    """What the box says it does, as a clause that follows what the quest is doing (no
    brackets of its own: the entry reads as one sentence)."""
    if command.name is CommandName.RESUME:
        return "tick the box to retry it, as `/resume` would"
    return "tick the box to start the fix, as `/quest fix` would"
