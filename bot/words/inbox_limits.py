"""The repository's limits in the inbox, in people's words (``bot.core.limits``): the quests
waiting to start and why, and a reflection wave — due, waiting for its review, or passed —
with what questbot's reflection runs used so far.

Pure. Titles and reflections are untrusted text: titles become inert code spans, a reflection
escaped prose.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from bot.core.events import Hold
from bot.core.limits import HOLD_WORDS
from bot.journal.limits import ReflectionRecord
from bot.journal.model_use import Spent
from bot.words.markdown import inline_code, plain
from bot.words.spend import money, tokens

WAITING_SHOWN = 20
"""Quests waiting to start listed one by one: a reflection wave holds every new quest, and
a long wave would push the rest of the inbox past GitHub's limit."""
REFLECTION_ABOVE = "waits for a reflection to pass, as the section above says"


@dataclass(frozen=True, slots=True)
class Waiting:
    quest_id: str
    title: str
    reason: Hold
    where: str | None = None
    """``#12``, or the commit the quest started from: GitHub links either in an issue."""


@dataclass(frozen=True, slots=True)
class Wave:
    due: bool
    after_bad_endings: int
    window_hours: int
    pending: ReflectionRecord | None = None
    passed: ReflectionRecord | None = None
    rejected: ReflectionRecord | None = None
    """The latest reflection the reflection reviewer sent back, its reason the synopsis."""
    spent: Spent = field(default_factory=Spent)
    """What questbot's reflection writer and reviewer used so far (``bot.journal.model_use``)."""


def _count(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def limits_lines(waiting: Sequence[Waiting], wave: Wave, max_live_quests: int) -> list[str]:
    """The inbox's section on limits; empty when nothing waits and no reflection is due.

    Each sentence of its own is a paragraph of its own (a blank line before it): a line right
    under a list item would read on GitHub as part of that item."""
    lines: list[str] = []
    if wave.due:
        lines += ["", "### A reflection is due", "",
                  f"At least {_count(wave.after_bad_endings, 'quest', 'quests')} ended badly "
                  f"within {_count(wave.window_hours, 'hour', 'hours')} (stopped after work began, "
                  "parked by a failure, or rolled back). New quests wait until a reflection "
                  "passes: a maintainer comments here "
                  "`/reflect <what went wrong and what changes>`."]
        if wave.rejected is not None:
            lines += ["", f"The reflection reviewer sent back the reflection by "
                      f"{inline_code(wave.rejected.by)}: "
                      f"{plain(wave.rejected.synopsis, limit=500)}"]
        if wave.pending is not None:
            lines += ["", f"A reflection by {inline_code(wave.pending.by)} waits for its "
                      f"review by the reflection reviewer: "
                      f"{plain(wave.pending.text, limit=500)}"]
        lines += _spent(wave)
    if waiting:
        lines += ["", "### Waiting to start", ""]
        if any(w.reason is Hold.SLOT for w in waiting):
            lines.append(f"At most {max_live_quests} quests are worked on at once; the oldest "
                         "of these starts first.")
        for w in waiting[:WAITING_SHOWN]:
            where = f"{w.where} " if w.where else ""
            why = (REFLECTION_ABOVE if w.reason is Hold.REFLECTION and wave.due
                   else plain(HOLD_WORDS[w.reason], limit=1000))
            title = plain(w.title or "a failure to look into", limit=200)
            lines.append(f"- {where}**{title}**: {why}.")  # named as it is, not by its id
        if len(waiting) > WAITING_SHOWN:
            lines.append(f"- and {len(waiting) - WAITING_SHOWN} newer ones")
    if not wave.due:
        spent, last = _spent(wave), []
        if (spent or lines) and wave.passed is not None:
            last += ["", f"The last reflection, by {inline_code(wave.passed.by)}: "
                     f"{plain(wave.passed.text, limit=500)}"]
            if wave.passed.reviewer and wave.passed.reviewer != wave.passed.by:
                last += ["", f"It passed the review of the {wave.passed.reviewer}: "
                         f"{plain(wave.passed.synopsis, limit=300)}"]
        if last or spent:
            lines += ["", "### Reflections", *last, *spent]
    return lines


def _spent(wave: Wave) -> list[str]:
    if not wave.spent.runs:
        return []
    return ["", f"questbot's reflections so far used {tokens(wave.spent.tokens)} "
            f"({money(wave.spent.cents)}), writing and reviewing them together."]
