"""Ending a parked quest without GitHub: by an operator from the command line
(``python -m bot abandon``), or by the worker once the repository it waits for can no longer
come back (``bot.repository.restorable``).

Either way it is a ``killed`` event applied through the journal like any other — the quest
moves ``parked`` → ``abandoned``, its outcome ``killed``, the reason on the event for
``replay`` — so the indexes, the views owed and compaction follow as they do for a ``/kill``
on GitHub; nothing is written to Redis behind the journal's back. Only a parked quest is
ended this way: a working quest has people on its pull request, who end it with ``/kill``
there (or pause it first). The event is stepped under the policy the quest last recorded,
not its repository's settings read again: the repository may be gone.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from bot.core import InvalidTransition, Policy, State
from bot.core.events import Killed
from bot.journal import Journal


@dataclass(frozen=True, slots=True)
class Abandoned:
    quest_id: str
    repo: str
    was: str
    """What the quest waited for: its park note, or its park reason."""


@dataclass(frozen=True, slots=True)
class NotAbandoned:
    quest_id: str
    why: str
    """In the operator's words: what the quest is, and what to do instead."""


async def abandon(journal: Journal, quest_id: str, *, reason: str, at: datetime,
                  event_id: str, default: Policy | None = None) -> Abandoned | NotAbandoned:
    """End the parked ``quest_id`` with ``reason``; anything else is refused, saying why.
    ``event_id`` makes a second try the same event (the journal absorbs it)."""
    _version, quest = await journal.snapshot(quest_id)
    if quest is None:
        return NotAbandoned(quest_id, f"there is no quest {quest_id} in this Redis: check "
                            "the id (python -m bot status --repo OWNER/NAME lists them)")
    if quest.state in {State.CLOSED, State.ABANDONED}:
        return NotAbandoned(quest_id, f"quest {quest_id} of {quest.repo} has ended already "
                            f"({quest.state.value}): there is nothing to abandon")
    if quest.state is not State.PARKED:
        return NotAbandoned(quest_id, f"quest {quest_id} of {quest.repo} is "
                            f"{quest.state.value}, not parked: the people on its pull request "
                            "end it with /kill there, or /pause it first")
    was = quest.park_note or (quest.park_reason.value if quest.park_reason else "parked")
    policy = await journal.recorded_policy(quest_id, default or Policy())
    try:
        await journal.apply(Killed(id=event_id, quest_id=quest_id, at=at, reason=reason),
                            policy)
    except InvalidTransition as exc:  # it moved between the read and the write
        return NotAbandoned(quest_id, f"quest {quest_id} moved on meanwhile ({exc.state}); "
                            "look at it again with python -m bot status")
    return Abandoned(quest_id, quest.repo, was)
