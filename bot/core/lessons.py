"""Which endings of a quest teach something (the ``consolidation_reviewer``, "what a
closed quest teaches"). Pure: the worker asks here, then writes and reviews the lesson.

An ending teaches when work was done and the world answered it:

* **landed**: the quest was watched clean (``closed`` with outcome ``closed``);
* **rolled back**: a regression was seen after landing (``rolled_back``);
* **abandoned after work**: killed or rejected once research had produced something — a
  hypothesis, a reproduction, a plan or a change — not ignored, a duplicate or flaky by
  triage's choice, and not stopped before any work.

Seed 003's *failed* is questbot's *abandoned*: a quest parked because something failed is
resumable, so it has not ended and teaches nothing yet. Each ending is one lesson at most,
named by the quest and its revision (a reopened quest that ends again is a new ending).
"""

from __future__ import annotations

from bot.core.limits import CALM_ENDINGS
from bot.core.names import Name
from bot.core.quest import Outcome, Quest
from bot.core.states import State


class Ending(Name):
    LANDED = "landed"
    ROLLED_BACK = "rolled_back"
    ABANDONED = "abandoned"


ENDING_WORDS: dict[Ending, str] = {
    Ending.LANDED: "landed and watched clean",
    Ending.ROLLED_BACK: "landed, then rolled back after a regression",
    Ending.ABANDONED: "abandoned after work",
}


def worked(quest: Quest) -> bool:
    """Something of the quest's own is on record to learn from."""
    return bool(quest.hypothesis or quest.reproduction or quest.plan or quest.head
                or quest.attempt_log)


def teaches(quest: Quest) -> Ending | None:
    """The ending ``quest`` is at, if it is one that teaches something."""
    if quest.state is State.CLOSED and quest.outcome in (None, Outcome.CLOSED):
        return Ending.LANDED if worked(quest) else None
    if quest.state is State.ROLLED_BACK:
        return Ending.ROLLED_BACK
    if (quest.state is State.ABANDONED and quest.outcome not in CALM_ENDINGS
            and worked(quest)):
        return Ending.ABANDONED
    return None


def mark(quest_id: str, revision: int) -> str:
    """The one name of an ending: a lesson is written and kept at most once per mark."""
    return f"{quest_id}@{revision}"
