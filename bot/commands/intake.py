"""What a comment's commands do: each read in the quest's own repository, authorized there,
applied to the quest, answered with a reaction, and — when refused — answered once with why and
what works instead. ``/quest`` on an issue starts a quest from it; ``/reflect`` goes to the
repository's reflection (``bot.reflection``); ``/status`` and ``/help`` are answered to anyone
(``/help`` with what that person may do: ``bot.words.help``)."""

from __future__ import annotations

from typing import Protocol

from bot.adapters import AdapterContext
from bot.commands import replies
from bot.commands.events import command_event, command_id, route
from bot.commands.replies import (
    elsewhere_text,
    no_permission_text,
    no_quest_text,
    refusal_text,
    status_text,
)
from bot.commands.signals import CommentCommands
from bot.core import Effect, InvalidTransition, Quest, Severity, SignalKind
from bot.core.events import SignalSensed, Triaged
from bot.core.states import TERMINAL
from bot.github.forge import Forges
from bot.journal.memory import ForgeMemory
from bot.quests.desk import Desk, default_head, new_quest_id
from bot.quests.quest_of import QuestOf
from bot.words.commands import Command, CommandName, CommandProblem, ours_without_quest
from bot.words.help import help_text
from bot.words.refusals import refusal_words


class Reflecting(Protocol):
    """What ``/reflect`` needs of the repository's reflection (``bot.reflection.waves``)."""

    async def submit(self, repo: str, login: str, text: str, cause: str) -> str | None: ...
    async def reflect(self, repo: str, maintainer: str, text: str) -> str: ...


class CommentIntake:
    def __init__(self, ctx: AdapterContext, forges: Forges, memory: ForgeMemory,
                 quest_of: QuestOf) -> None:
        self.ctx = ctx
        self.forges = forges
        self.memory = memory
        self.quest_of = quest_of
        self.reflections: Reflecting | None = None
        """``/reflect``, set when the worker is assembled (``bot.reflection.waves``)."""

    async def commands(self, c: CommentCommands, desk: Desk) -> None:
        await self.forges.for_repo(c.repo)  # not installed there: nothing to say
        thread = await self.quest_of.thread(c.repo, c.number, is_pull_request=c.is_pull_request)
        quest = thread.quest
        commands = c.commands if quest is not None else tuple(
            item for item in c.commands if ours_without_quest(item))
        if not commands:
            return  # Prow's or another bot's commands on a thread that is no quest: not ours
        await desk.say(c.repo, c.number, [replies.reaction(c.repo, c.number, c.comment_id)])
        settings = await self.ctx.settings.settings(c.repo)
        said: list[Effect] = []

        for item in commands:
            event_id = command_id(c, item)

            def reply(body: str, event_id: str = event_id) -> None:
                said.append(replies.reply(c.repo, c.number, event_id, body))

            if isinstance(item, CommandProblem):
                reply(f"@{c.author} {item.message}")
                continue
            if item.name is CommandName.STATUS:
                reply(status_text(quest, settings.to_policy()))
                continue
            if item.name is CommandName.HELP:  # reading is not acting: anyone may ask
                reply(help_text(quest, actor=c.author,
                                may_act=await self.quest_of.may_act(c.repo, c.author)))
                continue
            if not await self.quest_of.may_act(c.repo, c.author):  # the quest's repository
                if (item.name is CommandName.REFLECT and self.reflections is not None
                        and (answer := await self.reflections.submit(
                            c.repo, c.author, item.reason or "", event_id))):
                    reply(answer)  # for the reflection reviewer (``bot.reflection.runs``)
                    continue
                reply(no_permission_text(login=c.author, command=item))
                continue
            if item.name is CommandName.REFLECT and self.reflections is not None:
                reply(await self.reflections.reflect(c.repo, c.author, item.reason or ""))
                said.append(replies.rewrite_inbox(c.repo, c.number, f"{event_id}-inbox"))
                continue
            if (item.name is CommandName.QUEST and not c.is_pull_request
                    and (quest is None or quest.state in TERMINAL)):
                quest = await self._start_from_issue(c, item, event_id, desk)  # anew
                continue
            if quest is None:
                reply(no_quest_text(login=c.author, command=item, on_pull=c.is_pull_request)
                      + (elsewhere_text(thread.home) if thread.home else ""))
                continue
            event = command_event(item, quest, c.author, event_id, self.ctx.clock())
            result = await desk.apply(event, c.repo)
            if isinstance(result, InvalidTransition):
                reply(refusal_text(item, result, quest, c.author))
            elif result.absorbed:  # the quest has ended: the command changed nothing
                reply(refusal_words(item, quest, None, actor=c.author))
            else:
                quest = result.quest
        await desk.say(c.repo, c.number, said)

    async def _start_from_issue(self, c: CommentCommands, item: Command, event_id: str,
                                desk: Desk) -> Quest | None:
        fingerprint = f"issue:{c.number}"
        qid = new_quest_id(event_id, fingerprint)
        await self.memory.remember_source_issue(qid, c.number)
        sensed = await desk.apply(SignalSensed(
            id=f"{event_id}-sensed", quest_id=qid, at=self.ctx.clock(), repo=c.repo,
            fingerprint=fingerprint, kind=SignalKind.ISSUE, severity=Severity.MEDIUM,
            title=f"issue #{c.number}", source=f"{c.repo}#{c.number}", actor=c.author,
            base=await default_head(self.forges, self.memory, c.repo)), c.repo)
        if isinstance(sensed, InvalidTransition):
            return None
        started = await desk.apply(Triaged(id=event_id, quest_id=qid, at=self.ctx.clock(),
                                           route=route(item), actor=c.author), c.repo)
        return None if isinstance(started, InvalidTransition) else started.quest
