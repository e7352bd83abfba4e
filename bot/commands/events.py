"""What a comment's command becomes: the id of its event (and of its reply), and the core event.

Pure: no I/O, no clock of its own (the time arrives as ``at``). Intake (``bot.intake.intake``)
applies the event; the inbox's ticked boxes and the status comment's buttons become the same
events through it (``inbox_ticks``, ``buttons``), so a command means one thing wherever it is
given.
"""

from __future__ import annotations

import hashlib
from datetime import datetime

from bot.commands.signals import CommentCommands
from bot.core import Checkpoint, Event, Quest, Route, Verdict
from bot.core.events import (
    CheckpointDecided,
    Claimed,
    Killed,
    Paused,
    Released,
    Resumed,
    SpendDecided,
    Triaged,
)
from bot.core.states import CHECKPOINT_AT
from bot.words.commands import Command, CommandName, CommandProblem, render


def command_id(c: CommentCommands, item: Command | CommandProblem) -> str:
    """The id of the event a comment's command becomes, and of the reply it gets: its comment
    and line — stable across redeliveries — and, for a command an edit added, what it says, so
    an edit that puts ``/approve A`` where ``/claim`` stood is a new command, not a repeat."""
    base = f"comment-{c.comment_id}-{item.line}"
    if not c.edited:
        return base
    said = render(item) if isinstance(item, Command) else item.message
    return f"{base}-{hashlib.sha256(said.encode()).hexdigest()[:8]}"


def command_event(item: Command, quest: Quest, actor: str, event_id: str, at: datetime) -> Event:
    """The core event a quest command becomes, with the id ``command_id`` gave it: the answer
    to a waiting spend request, a checkpoint's decision, or a move of the quest itself."""
    name, qid = item.name, quest.id
    if item.spend:  # the answer to the spend request that waits, if one does
        request = quest.spend_pending[-1] if quest.spend_pending else "none"
        return SpendDecided(id=event_id, quest_id=qid, at=at, actor=actor,
                            request_id=request, approved=name is CommandName.APPROVE)
    if name in (CommandName.APPROVE, CommandName.REVISE, CommandName.REJECT):
        open_cp = CHECKPOINT_AT.get(quest.checkpoint_state)
        checkpoint = item.checkpoint or open_cp or Checkpoint.A
        return CheckpointDecided(id=event_id, quest_id=qid, at=at, actor=actor,
                                 checkpoint=checkpoint, verdict=Verdict(name.value),
                                 reason=item.reason or "")
    if name is CommandName.QUEST:
        return Triaged(id=event_id, quest_id=qid, at=at, actor=actor, route=route(item))
    if name is CommandName.PAUSE:
        return Paused(id=event_id, quest_id=qid, at=at, actor=actor, reason=item.reason or "")
    if name is CommandName.KILL:
        return Killed(id=event_id, quest_id=qid, at=at, actor=actor, reason=item.reason or "")
    if name is CommandName.CLAIM:
        return Claimed(id=event_id, quest_id=qid, at=at, actor=actor)
    if name is CommandName.RELEASE:
        return Released(id=event_id, quest_id=qid, at=at, actor=actor)
    if name is CommandName.RESUME:
        return Resumed(id=event_id, quest_id=qid, at=at, actor=actor)
    raise ValueError(f"/{name.value} is not a quest command")


def route(item: Command) -> Route:
    """Where ``/quest`` sends the quest: research only, or a fix."""
    return Route.RESEARCH_ONLY if item.mode == "research" else Route.AUTO_FIX
