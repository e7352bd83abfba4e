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
from bot.github.markdown import inline_code, plain
from bot.github.spend_words import money, tokens
from bot.journal.limits import ReflectionRecord
from bot.journal.model_use import Spent


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


def limits_lines(waiting: Sequence[Waiting], wave: Wave, max_live_quests: int) -> list[str]:
    """The inbox's section on limits; empty when nothing waits and no reflection is due."""
    lines: list[str] = []
    if wave.due:
        lines += ["", "### A reflection is due", "",
                  f"{wave.after_bad_endings} quests ended badly within {wave.window_hours} "
                  "hours (stopped after work began, parked by a failure, or rolled back). New "
                  "quests wait until a reflection passes: a maintainer comments here "
                  "`/reflect <what went wrong and what changes>`."]
        if wave.rejected is not None:
            lines.append(f"The reflection reviewer sent back the reflection by "
                         f"{inline_code(wave.rejected.by)}: "
                         f"{plain(wave.rejected.synopsis, limit=500)}")
        if wave.pending is not None:
            lines.append(f"A reflection by {inline_code(wave.pending.by)} waits for its "
                         f"review by the reflection reviewer: "
                         f"{plain(wave.pending.text, limit=500)}")
    if waiting:
        lines += ["", "### Waiting to start", "",
                  f"At most {max_live_quests} quests are worked on at once; the oldest of "
                  "these starts first."]
        for w in waiting:
            where = f"{w.where} " if w.where else ""
            lines.append(f"- {where}{inline_code(w.title or '(untitled)')}, quest "
                         f"{inline_code(w.quest_id)}: {HOLD_WORDS[w.reason]}.")
    if wave.spent.runs:
        if not lines:
            lines += ["", "### Reflections", ""]
        lines.append(f"questbot's reflections so far used {tokens(wave.spent.tokens)} "
                     f"({money(wave.spent.cents)}), its writer's and its reviewer's runs "
                     "together.")
    if lines and wave.passed is not None and not wave.due:
        lines.append(f"The last reflection, by {inline_code(wave.passed.by)}: "
                     f"{plain(wave.passed.text, limit=500)}")
        if wave.passed.reviewer and wave.passed.reviewer != wave.passed.by:
            lines.append(f"It passed the review of the {wave.passed.reviewer}: "
                         f"{plain(wave.passed.synopsis, limit=300)}")
    return lines
