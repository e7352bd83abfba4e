"""Intake for the buttons on questbot's check run: Approve, Revise, Reject — and Approve spend,
Deny spend while a spend request waits.

A press is the command of the same name from the person who pressed it, under the same rules
as a comment (``Permissions``, then the core), bound to the commit the check run is on: a
press on a commit the quest has moved on from is stale and refused. Every refused press gets
one reply, keyed by the delivery (``button-<delivery>``), so a redelivery answers once. A check
run is on a commit, not a thread: the reply goes to the pull request the check run names, else
the quest's pull request or source issue as questbot recorded them (GitHub leaves
``pull_requests`` empty before it links a commit to one, and for forks), else the inbox.
"""

from __future__ import annotations

import logging

from bot.adapters import AdapterContext
from bot.core import InvalidTransition
from bot.github import conversation, spend_words
from bot.github.commands import Command, CommandName
from bot.github.conversation import (
    Permissions,
    no_permission_text,
    no_quest_text,
    refusal_text,
    stale_button_text,
)
from bot.github.forge import Forges
from bot.github.refusal_words import refusal_words
from bot.github.signals import ButtonPress
from bot.journal.memory import ForgeMemory
from bot.worker.inbox_ticks import Apply, EventOf, Say

log = logging.getLogger(__name__)

ACTIONS = ("approve", "revise", "reject")
"""The identifiers of the check run's buttons at a checkpoint (``bot.github.render``); the spend
buttons' are ``spend_words.BUTTONS``'s."""


class ButtonIntake:
    def __init__(self, ctx: AdapterContext, forges: Forges, memory: ForgeMemory,
                 permissions: Permissions) -> None:
        self.ctx = ctx
        self.forges = forges
        self.memory = memory
        self.permissions = permissions

    async def thread(self, b: ButtonPress) -> int | None:
        """Where a press is answered (the module's docstring says in which order)."""
        if b.number:
            return b.number
        for name in ("pr", "source_issue"):
            number = await self.memory.quest_int(b.quest_id, name)
            if number:
                return number
        inbox = await self.memory.repo(b.repo, "inbox")
        return int(inbox) if inbox else None

    async def pressed(self, b: ButtonPress, delivery_id: str, apply: Apply, say: Say,
                      event_of: EventOf) -> None:
        spend = spend_words.BUTTONS.get(b.action)
        if b.action not in ACTIONS and spend is None:
            return  # no button of questbot's has another identifier
        _v, quest = await self.ctx.journal.snapshot(b.quest_id)
        forge = await self.forges.for_repo(b.repo)
        settings = await self.ctx.settings.settings(b.repo)
        if spend is not None:  # Approve spend, Deny spend: /approve spend, /deny spend
            command = Command(name=CommandName(spend), spend=True, line=1)
        else:
            command = Command(name=CommandName(b.action), line=1, reason=None
                              if b.action == "approve" else "from the check run button")
        number = await self.thread(b)

        async def reply(body: str) -> None:
            if number is None:
                log.warning("refused button %s on check run %s of %s, and no thread to say so "
                            "on: %s", b.action, b.check_run_id, b.repo, body)
                return
            await say(b.repo, number, [conversation.reply(b.repo, number,
                                                          f"button-{delivery_id}", body)])

        if not await self.permissions.may_act(forge, b.actor, settings.reviewers):
            await reply(no_permission_text(login=b.actor, command=command, button=True))
            return
        if quest is None:
            await reply(no_quest_text(login=b.actor, command=command, on_pull=True, button=True))
            return
        if quest.head is not None and b.head_sha and b.head_sha != quest.head:
            await reply(stale_button_text(b.actor, command, quest, b.head_sha))
            return
        result = await apply(event_of(command, quest, b.actor, f"button-{delivery_id}"), b.repo)
        if isinstance(result, InvalidTransition):
            await reply(refusal_text(command, result, quest, b.actor, button=True))
        elif result.absorbed:  # the quest has ended: the press changed nothing
            await reply(refusal_words(command, quest, None, actor=b.actor, button=True))
