"""Intake for the buttons on questbot's check run: Approve, Revise, Reject — and Approve spend,
Deny spend while a spend request waits.

A press is the command of the same name from the person who pressed it, under the same rules
as a comment (``Permissions``, then the core), bound to the commit the check run is on: a
press on a commit the quest has moved on from is stale and refused. Every refused press gets
one reply, keyed by the delivery (``button-<delivery>``), so a redelivery answers once. A check
run is on a commit, not a thread: the reply goes to the quest's pull request or source issue as
questbot recorded them, else the pull request the check run names (GitHub leaves
``pull_requests`` empty before it links a commit to one, and for forks), else the inbox.

The check run's ``external_id`` names the quest, which must be a quest of the repository the
press happened in (``bot.quests.quest_of.check_run``): a quest's id is no secret.
"""

from __future__ import annotations

import logging

from bot.adapters import AdapterContext
from bot.commands import replies as conversation
from bot.commands.events import command_event
from bot.commands.replies import (
    no_permission_text,
    no_quest_text,
    refusal_text,
    stale_button_text,
)
from bot.commands.signals import ButtonPress
from bot.core import InvalidTransition, Quest
from bot.github.forge import Forges
from bot.journal.memory import ForgeMemory
from bot.quests.desk import Desk
from bot.quests.quest_of import QuestOf
from bot.words import spend as spend_words
from bot.words.commands import Command, CommandName
from bot.words.refusals import refusal_words

log = logging.getLogger(__name__)

ACTIONS = ("approve", "revise", "reject")
"""The identifiers of the check run's buttons at a checkpoint (``bot.words.render``); the spend
buttons' are ``spend_words.BUTTONS``'s."""


class ButtonIntake:
    def __init__(self, ctx: AdapterContext, forges: Forges, memory: ForgeMemory,
                 quest_of: QuestOf) -> None:
        self.ctx = ctx
        self.forges = forges
        self.memory = memory
        self.quest_of = quest_of

    async def thread(self, b: ButtonPress, quest: Quest | None) -> int | None:
        """Where a press is answered (the module's docstring says in which order)."""
        for name in ("pr", "source_issue"):
            number = await self.memory.quest_int(quest.id, name) if quest else None
            if number:
                return number
        if b.number:
            return b.number
        inbox = await self.memory.repo(b.repo, "inbox")
        return int(inbox) if inbox else None

    async def pressed(self, b: ButtonPress, desk: Desk) -> None:
        delivery_id, apply, say = desk.delivery_id, desk.apply, desk.say
        spend = spend_words.BUTTONS.get(b.action)
        if b.action not in ACTIONS and spend is None:
            return  # no button of questbot's has another identifier
        quest = await self.quest_of.check_run(b.repo, b.external_id)
        if spend is not None:  # Approve spend, Deny spend: /approve spend, /deny spend
            command = Command(name=CommandName(spend), spend=True, line=1)
        else:
            command = Command(name=CommandName(b.action), line=1, reason=None
                              if b.action == "approve" else "from the check run button")
        number = await self.thread(b, quest)

        async def reply(body: str) -> None:
            if number is None:
                log.warning("refused button %s on check run %s of %s, and no thread to say so "
                            "on: %s", b.action, b.check_run_id, b.repo, body)
                return
            await say(b.repo, number, [conversation.reply(b.repo, number,
                                                          f"button-{delivery_id}", body)])

        if not await self.quest_of.may_act(b.repo, b.actor):  # the quest's, when there is one
            await reply(no_permission_text(login=b.actor, command=command, button=True))
            return
        if quest is None:
            await reply(no_quest_text(login=b.actor, command=command, on_pull=True, button=True))
            return
        if quest.head is not None and b.head_sha and b.head_sha != quest.head:
            await reply(stale_button_text(b.actor, command, quest, b.head_sha))
            return
        result = await apply(command_event(command, quest, b.actor, f"button-{delivery_id}",
                                           self.ctx.clock()), b.repo)
        if isinstance(result, InvalidTransition):
            await reply(refusal_text(command, result, quest, b.actor, button=True))
        elif result.absorbed:  # the quest has ended: the press changed nothing
            await reply(refusal_words(command, quest, None, actor=b.actor, button=True))
