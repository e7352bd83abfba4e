"""What a person may do to a quest right now, in the words of its commands.

The core decides what a quest accepts (``bot.core.lifecycle.accepts``: the table, the claim
guard and the preconditions on the quest's record); this module only maps each command to the
event it becomes and to the words it is shown with, so the status comment changes with the
lifecycle. The lifecycle diagram is the core's too (``bot.core.diagram``).
"""

from __future__ import annotations

from dataclasses import dataclass

from bot.core import ANY_PERSON, Quest, accepts, reserved_for
from bot.core.diagram import lifecycle_mermaid
from bot.core.rules import open_checkpoint
from bot.core.rules.budget import waits_for_spend
from bot.core.states import State
from bot.words.commands import SPEND, USAGE, CommandName

__all__ = ["COMMAND_EVENT", "Allowed", "allowed_commands", "lifecycle_mermaid"]

COMMAND_EVENT: dict[CommandName, str] = {
    CommandName.APPROVE: "checkpoint_decided",
    CommandName.REVISE: "checkpoint_decided",
    CommandName.REJECT: "checkpoint_decided",
    CommandName.CLAIM: "claimed",
    CommandName.RELEASE: "released",
    CommandName.PAUSE: "paused",
    CommandName.RESUME: "resumed",
    CommandName.KILL: "killed",
    CommandName.QUEST: "triaged",
}
"""The core event each command becomes (``/status`` only reads, so it is always allowed).
``/approve spend`` and ``/deny spend`` answer a spend request, offered while one waits
(``bot.core.rules.budget.waits_for_spend``)."""

QUEST_WORDS: dict[State, str] = {
    State.TRIAGED: USAGE[CommandName.QUEST],
    State.PARKED: "/quest fix",
}
"""How ``/quest`` is offered where a person starts the work: a quest routed to a person starts
as a fix or as research, finished research becomes a fix. A newly sensed quest is routed by
triage, so ``/quest`` is not offered there although a person's would still be taken."""


@dataclass(frozen=True, slots=True)
class Allowed:
    usage: str
    only: str | None = None
    """The one login allowed to use it (a claimed review's owner), if restricted."""


def allowed_commands(quest: Quest) -> list[Allowed]:
    """The commands the quest accepts in its current state, in ``USAGE`` order."""
    out: list[Allowed] = []
    spend = waits_for_spend(quest)
    for name, usage in USAGE.items():
        if name is CommandName.DENY or (name is CommandName.APPROVE and spend):
            if spend:  # a spend request waits: the answer to it, and nothing else
                out.append(Allowed(f"/{name.value} {SPEND}"))
            continue
        if name is CommandName.REFLECT:
            continue  # the repository's, not a quest's (``bot.reflection.waves``)
        if name is CommandName.HELP:
            continue  # the list of commands itself; the status comment names it once

        event = COMMAND_EVENT.get(name)
        if event is None:
            out.append(Allowed(usage))
            continue
        only = reserved_for(quest, event)
        if not accepts(quest, event, only or ANY_PERSON):
            continue
        if event == "checkpoint_decided":
            checkpoint = open_checkpoint(quest)
            assert checkpoint is not None  # accepts asked for an open one
            usage = f"/{name.value} {checkpoint.value}" if name is CommandName.APPROVE else usage
        elif name is CommandName.QUEST:
            words = QUEST_WORDS.get(quest.state)
            if words is None:
                continue
            usage = words
        out.append(Allowed(usage, only))
    return out
