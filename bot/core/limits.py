"""Limits on how many quests a repository works on at once (the gates; issue 14,
item 6): at most ``max_live_quests`` working quests, and no new ones while a reflection wave
is due. Pure: the worker counts, reads the times and asks here.

* **The cap.** A quest triage would start (a fix or research) while the repository already
  works on ``max_live_quests`` quests is *held* (``Held``, reason ``slot``): it stays
  ``sensed``, listed in the inbox, and is triaged again when one of them ends. Quests that do
  no work yet (``sensed``, ``triaged`` for a person) do not count; parked ones do — they are
  live, and a person's ``/resume`` puts them straight back to work.
* **Reflection waves.** After ``after_bad_endings`` bad endings (``bad_ending``) within
  ``window_hours`` and since the last reflection that passed, a reflection is due: new quests
  are held (reason ``reflection``) until a reflection — what went wrong and what changes —
  passes a review (a maintainer's ``/reflect <text>``, or questbot's own reflection passed by
  its reflection reviewer: ``bot.reflection.runs``). Due is latched: bad endings that
  age out of the window do not lift it; only a reflection does.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta

from bot.core.events.signals import Hold
from bot.core.names import Name
from bot.core.quest import Outcome, ParkReason, Quest
from bot.core.states import State


class BadEnding(Name):
    ABANDONED = "abandoned"
    PARKED = "parked"
    ROLLED_BACK = "rolled_back"


CALM_PARKS = frozenset({ParkReason.PAUSED, ParkReason.WAITING_FOR_PARENT,
                        ParkReason.RESEARCH_COMPLETE, ParkReason.BUDGET_REACHED,
                        ParkReason.SPEND_DECLINED, ParkReason.MODEL_FAILED})
"""Parked, but nothing went wrong with the work: a person paused it, it waits for its
parent, research finished as asked, it waits on money — its budget spent, or more refused —
or the model endpoint failed (the operator's to fix; a reflection on how quests go cannot),
none of which says anything about how the work went."""
CALM_ENDINGS = frozenset({Outcome.IGNORED, Outcome.DUPLICATE, Outcome.FLAKY})
"""Abandoned, but by triage's choice before any work: nothing was tried, nothing failed."""

NOT_STARTED = frozenset({State.SENSED, State.TRIAGED})
"""No work began: a quest stopped here (killed while waiting, say) tried nothing."""

HOLD_WORDS: dict[Hold, str] = {
    Hold.SLOT: "waits for a free slot: the repository works on as many quests as it allows "
               "at once; it starts when one of them ends",
    Hold.REFLECTION: "waits for a reflection: several quests ended badly of late, so new ones "
                     "start once a reflection on what went wrong and what changes passes its "
                     "review — questbot's own, reviewed by its reflection reviewer, or a "
                     "maintainer's (/reflect <text>) in the inbox",
}
"""What a held quest waits for, in people's words (the inbox, the status)."""


def bad_ending(before: Quest | None, after: Quest) -> BadEnding | None:
    """The bad ending ``before`` → ``after`` is, if it is one: abandoned after work began
    (killed, rejected), parked because something failed, or rolled back."""
    if before is None or before.state is after.state or before.state in NOT_STARTED:
        return None
    if after.state is State.ABANDONED and after.outcome not in CALM_ENDINGS:
        return BadEnding.ABANDONED
    if after.state is State.PARKED and after.park_reason not in CALM_PARKS:
        return BadEnding.PARKED
    if after.state is State.ROLLED_BACK:
        return BadEnding.ROLLED_BACK
    return None


def reflection_due(bad_endings: Sequence[datetime], passed_at: datetime | None,
                   after_bad_endings: int, window: timedelta) -> bool:
    """Whether ``after_bad_endings`` of the bad endings since the last passed reflection fell
    within one ``window`` (0: never)."""
    if after_bad_endings <= 0:
        return False
    since = sorted(t for t in bad_endings if passed_at is None or t > passed_at)
    n = after_bad_endings
    return any(since[i + n - 1] - since[i] <= window for i in range(len(since) - n + 1))


def admission(working: int, max_live_quests: int, due: bool) -> Hold | None:
    """Why a quest triage would start must wait, or ``None``: a reflection due holds every new
    quest; otherwise a full repository does."""
    if due:
        return Hold.REFLECTION
    if working >= max_live_quests:
        return Hold.SLOT
    return None
