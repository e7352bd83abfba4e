"""Intake for the inbox issue: ticked boxes start or retry quests, a close is undone.

``bot.inbox.signals`` reads the webhooks. A ticked box is the command it stands for
(``inbox_marks.tick_command``: ``/quest fix`` for a quest routed to a person or finished
research, ``/resume`` to retry a parked one), from the person who ticked it and under the same
rules as a comment: write access or being a configured reviewer (``Permissions``), and the
core's own refusals. Each event and each reply is keyed by the delivery and the quest, so a
redelivered ``edited`` webhook acts once. Then the inbox is written again (a keyed effect on its
thread's trail), every box empty — ticked or refused, a box does not stay ticked.

A ticked lesson box drops that lesson (``LessonStore.drop`` of its quest and revision, marked
``dropped`` so it is never kept again), under the same rule of who may; the agent reads the
lessons afresh at every stage, so it is gone from the next prompt. Dropping twice drops nothing
the second time, so a redelivered edit changes nothing; a refusal's reply is keyed by the
delivery and the lesson.

A close of the inbox by a person is answered the same way: written again, which reopens it.
"""

from __future__ import annotations

import logging

from bot.adapters import AdapterContext
from bot.commands import replies as conversation
from bot.commands.events import command_event
from bot.core import Effect, InvalidTransition, Quest, Refusal
from bot.github.forge import Forges
from bot.inbox.signals import InboxClosed, InboxTicked
from bot.journal.lessons import LessonStore
from bot.journal.memory import ForgeMemory
from bot.quests.desk import Desk
from bot.quests.quest_of import QuestOf
from bot.words.commands import Command, CommandName, QuestMode
from bot.words.inbox_lessons import lesson_tick_refused
from bot.words.inbox_marks import tick_command
from bot.words.refusals import Precheck, Why, refusal_words

log = logging.getLogger(__name__)


_FALLBACK = Command(name=CommandName.QUEST, mode=QuestMode.FIX, line=1)
"""What a box stands for when its quest has moved on since the inbox was written (or the box
was typed by hand): the core refuses it, and the person is told why."""


def tick_words(quest_id: str, command: Command, quest: Quest | None, why: Why,
               actor: str) -> str:
    """The reply to a refused tick: the refusal in the quest's words, and which box it was."""
    said = refusal_words(command, quest, why, actor=actor, on_pull=True)
    return (f"{said} (You ticked the box of quest "
            f"`{quest_id}` in this inbox, which stands for that command; the box is cleared "
            "again.)")


class InboxIntake:
    def __init__(self, ctx: AdapterContext, forges: Forges, memory: ForgeMemory,
                 quest_of: QuestOf) -> None:
        self.ctx = ctx
        self.forges = forges
        self.memory = memory
        self.quest_of = quest_of

    async def _is_inbox(self, repo: str, number: int) -> bool:
        """The issue is the inbox questbot records (or it has lost the record, and the issue
        is questbot's own with the inbox's marker, which the signal checked)."""
        recorded = await self.memory.repo(repo, "inbox")
        return recorded is None or recorded == str(number)

    async def ticked(self, t: InboxTicked, desk: Desk) -> None:
        delivery_id, apply, say = desk.delivery_id, desk.apply, desk.say
        if not await self._is_inbox(t.repo, t.number):
            log.info("%s#%s is not the inbox questbot records; its ticks ask for nothing",
                     t.repo, t.number)
            return
        allowed = await self.quest_of.may_act(t.repo, t.actor)
        effects: list[Effect] = []
        for quest_id in t.quest_ids:
            cause = f"tick-{delivery_id}-{quest_id}"
            quest = await self.quest_of.box(t.repo, quest_id)  # another repository's: none
            command = (tick_command(quest) if quest is not None else None) or _FALLBACK

            def refuse(why: Why, quest: Quest | None = quest, command: Command = command,
                       cause: str = cause, quest_id: str = quest_id) -> None:
                effects.append(conversation.reply(t.repo, t.number, cause, tick_words(
                    quest_id, command, quest, why, t.actor)))

            if not allowed:
                refuse(Precheck.NO_PERMISSION)
            elif quest is None:
                refuse(Precheck.NO_QUEST)
            else:
                event = command_event(command, quest, t.actor, cause, self.ctx.clock())
                result = await apply(event, t.repo)
                if isinstance(result, InvalidTransition):
                    refuse(None if result.code is Refusal.UNDEFINED else result.code)
                elif result.absorbed:  # the quest has ended: the tick changed nothing
                    refuse(None)
        effects += await self._lessons(t, delivery_id, allowed)
        effects.append(conversation.rewrite_inbox(t.repo, t.number, f"inbox-{delivery_id}"))
        await say(t.repo, t.number, effects)

    async def _lessons(self, t: InboxTicked, delivery_id: str, allowed: bool) -> list[Effect]:
        """Drop the ticked lessons, or say once to whoever may not why nothing was dropped."""
        replies: list[Effect] = []
        store = LessonStore(self.ctx.journal.client)
        for ending in t.lessons:
            quest_id, _, revision = ending.rpartition("@")
            if not allowed:
                replies.append(conversation.reply(t.repo, t.number, f"tick-{delivery_id}-{ending}",
                                                  lesson_tick_refused(t.actor, quest_id)))
                continue
            dropped = await store.drop(t.repo, quest_id, int(revision))
            log.info("%s dropped %d lesson(s) of %s in the inbox of %s", t.actor, dropped,
                     ending, t.repo)
        return replies

    async def closed(self, c: InboxClosed, desk: Desk) -> None:
        delivery_id, say = desk.delivery_id, desk.say
        if await self._is_inbox(c.repo, c.number):
            log.info("%s closed the inbox %s#%s; questbot opens it again", c.actor, c.repo,
                     c.number)
            await say(c.repo, c.number, [conversation.rewrite_inbox(
                c.repo, c.number, f"inbox-{delivery_id}")])
