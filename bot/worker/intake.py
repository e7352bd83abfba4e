"""Intake: one webhook delivery → the core events it means, applied through the journal.

``bot.github.signals`` reads a payload into intents without I/O. Here each intent is resolved
against what questbot knows — which quest it is about, bound to the event's repository, and who
may act, both asked of ``bot.worker.quest_of``, the one place that decides — and turned into
core events with ids derived from the delivery, so a delivery processed twice is absorbed by the
journal. Commands are authorized by repository permission, answered
with a reaction, and every refusal gets a reply that says why and what to do instead. Reactions
and replies are effects queued on the thread's trail (``bot.github.conversation``), with keys
from the comment, so a delivery processed twice queues nothing new; the effect runner posts
them. Everything intake reads from GitHub it reads through the ``Forge``.
"""

from __future__ import annotations

import hashlib
import logging
import re
from dataclasses import dataclass, field
from typing import Any

from bot.adapters import AdapterContext
from bot.core import Effect, Event, InvalidTransition, Quest, Severity, SignalKind, State
from bot.core.events import BaseMoved, HumanRevision, SignalSensed, Triaged
from bot.core.states import LIVE, TERMINAL
from bot.github import conversation
from bot.github.conversation import (
    Permissions,
    elsewhere_text,
    no_permission_text,
    no_quest_text,
    refusal_text,
    status_text,
)
from bot.github.forge import Forges
from bot.github.inbox_signals import InboxClosed, InboxTicked
from bot.github.pull_signals import PullClosed, PullReopened, ReviewSubmitted
from bot.github.signals import (
    BasePush,
    ButtonPress,
    CommentCommands,
    Failure,
    Installed,
    Intent,
    IssueSignal,
    Passed,
    QuestPush,
    read_intents,
)
from bot.journal import Applied, Indexes, PermanentError
from bot.journal.keys import thread_trail
from bot.journal.memory import ForgeMemory
from bot.words.commands import Command, CommandName, CommandProblem, ours_without_quest
from bot.words.refusals import refusal_words
from bot.worker.buttons import ButtonIntake
from bot.worker.command_events import command_event, command_id, route
from bot.worker.failures import FailureIntake
from bot.worker.inbox_ticks import InboxIntake
from bot.worker.policybook import PolicyBook
from bot.worker.pulls import PullIntake
from bot.worker.quest_of import QuestOf
from bot.worker.reflections import Reflections

log = logging.getLogger(__name__)

LANDED = frozenset({State.WATCHING, State.ROLLED_BACK})
REPO_NAME = re.compile(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+")
"""What GitHub allows in ``owner/name``: anything else in a payload is not a repository."""


def new_quest_id(delivery_id: str, fingerprint: str) -> str:
    """Deterministic, so a delivery processed twice names the same quest; branch-safe. (A
    failing check's quest is named by the failure instead: ``failures.failure_quest_id``.)"""
    return "q" + hashlib.sha256(f"{delivery_id}:{fingerprint}".encode()).hexdigest()[:10]


@dataclass
class Outcome:
    """What one delivery did, for logs, metrics and tests."""

    applied: list[Applied] = field(default_factory=list)
    refused: list[InvalidTransition] = field(default_factory=list)
    replies: int = 0
    """Replies (and inbox rewrites) this delivery queued (a delivery handled again queues
    none)."""


class Intake:
    def __init__(self, ctx: AdapterContext, forges: Forges, book: PolicyBook, indexes: Indexes,
                 *, permissions: Permissions | None = None) -> None:
        self.ctx = ctx
        self.forges = forges
        self.book = book
        self.indexes = indexes
        self.permissions = permissions or Permissions()
        self.memory = ForgeMemory(ctx.journal.client)
        self.quest_of = QuestOf(ctx, forges, self.memory, indexes, self.permissions)
        """Which quest an event is about, and who may act on it: every route asks it."""
        self.failures = FailureIntake(ctx, forges, self.quest_of, self._default_head)
        self.pulls = PullIntake(ctx, forges, self.memory, self.quest_of)
        self.inbox = InboxIntake(ctx, forges, self.memory, self.quest_of)
        self.buttons = ButtonIntake(ctx, forges, self.memory, self.quest_of)
        self.reflections: Reflections | None = None
        """``/reflect`` (``bot.worker.reflections``), set when the worker is assembled."""

    async def handle(self, event_name: str, payload: dict[str, Any],
                     delivery_id: str) -> Outcome:
        out = Outcome()
        repository = payload.get("repository")
        if isinstance(repository, dict):
            name, branch = repository.get("full_name"), repository.get("default_branch")
            if (isinstance(name, str) and REPO_NAME.fullmatch(name)
                    and isinstance(branch, str) and branch):
                await self.memory.remember_default_branch(name, branch)
        for intent in await read_intents(event_name, payload, delivery_id=delivery_id,
                                         app=self.ctx.app):
            await self._intent(intent, delivery_id, out)
        return out

    # -- applying ------------------------------------------------------------------------------

    async def _say(self, repo: str, number: int, effects: list[Effect]) -> int:
        """Queue replies and reactions on the thread's trail; how many were new."""
        return await self.ctx.journal.enqueue(thread_trail(repo, number), effects)

    async def _apply(self, event: Event, repo: str, out: Outcome, *,
                     racing: bool = False) -> Applied | InvalidTransition:
        """Apply ``event``; a refusal is returned (and counted in ``out``), not raised.
        ``racing``: the caller looks again after a refusal (another report of the same failure
        moved the quest first), so it is no refusal to report."""
        await self.book.prepare(event.quest_id, repo)
        try:
            applied = await self.ctx.journal.apply(event, self.book)
        except InvalidTransition as exc:
            log.info("refused %s for %s: %s", event.type, event.quest_id, exc.reason)
            if not racing:
                out.refused.append(exc)
            return exc
        out.applied.append(applied)
        return applied

    async def _default_head(self, repo: str) -> str:
        """Where an issue's quest starts: the default branch's head now. A failing check
        names its commit; an issue does not, so questbot reads the branch."""
        forge = await self.forges.for_repo(repo)
        branch = await self.memory.default_branch(repo)
        head = await forge.git.branch_head(branch)
        if head is None:
            raise PermanentError(f"{repo} has no branch {branch} to start the quest from; the "
                                 "worker records the default branch from webhooks — "
                                 "redeliver one")
        return head

    # -- intents -------------------------------------------------------------------------------

    async def _intent(self, intent: Intent, delivery_id: str, out: Outcome) -> None:
        if isinstance(intent, Installed):
            for repo in intent.repos:
                await self.forges.remember_installation(repo, intent.installation_id)
        elif isinstance(intent, Failure | Passed):
            if await self.indexes.is_muted(intent.repo, intent.fingerprint):
                log.info("%s %s is muted; ignoring it", intent.repo, intent.fingerprint)
                return

            async def apply(event: Event, repo: str) -> Applied | InvalidTransition:
                return await self._apply(event, repo, out, racing=True)

            if isinstance(intent, Failure):
                await self.failures.failure(intent, delivery_id, apply)
            else:
                await self.failures.passed(intent, delivery_id, apply)
        elif isinstance(intent, IssueSignal):
            await self._issue(intent, delivery_id, out)
        elif isinstance(intent, QuestPush):
            await self._quest_push(intent, delivery_id, out)
        elif isinstance(intent, BasePush):
            await self._base_push(intent, delivery_id, out)
        elif isinstance(intent, CommentCommands):
            await self._commands(intent, delivery_id, out)
        elif isinstance(intent, ButtonPress):
            await self._button(intent, delivery_id, out)
        elif isinstance(intent, PullClosed | PullReopened | ReviewSubmitted):
            await self._pull(intent, delivery_id, out)
        elif isinstance(intent, InboxTicked | InboxClosed):
            await self._inbox(intent, delivery_id, out)

    async def _inbox(self, intent: InboxTicked | InboxClosed, delivery_id: str,
                     out: Outcome) -> None:
        async def apply(event: Event, repo: str) -> Applied | InvalidTransition:
            return await self._apply(event, repo, out)

        async def say(repo: str, number: int, effects: list[Effect]) -> None:
            out.replies += await self._say(repo, number, effects)

        if isinstance(intent, InboxTicked):
            await self.inbox.ticked(intent, delivery_id, apply, say, self._command_event)
        else:
            await self.inbox.closed(intent, delivery_id, say)

    async def _pull(self, intent: PullClosed | PullReopened | ReviewSubmitted, delivery_id: str,
                    out: Outcome) -> None:
        async def apply(event: Event, repo: str) -> Applied | InvalidTransition:
            return await self._apply(event, repo, out)

        async def say(repo: str, number: int, effects: list[Effect]) -> None:
            out.replies += await self._say(repo, number, effects)

        if isinstance(intent, ReviewSubmitted):
            await self.pulls.review(intent, apply, say)
        elif isinstance(intent, PullClosed):
            await self.pulls.closed(intent, delivery_id, apply, say)
        else:
            await self.pulls.reopened(intent, delivery_id, apply, say)

    async def _issue(self, i: IssueSignal, delivery_id: str, out: Outcome) -> None:
        settings = await self.ctx.settings.settings(i.repo)
        if settings.label not in i.labels:
            return
        fingerprint = f"issue:{i.number}"
        quest = await self.quest_of.issue(i.repo, i.number)
        if quest is not None and quest.state in LIVE:
            return  # labelled again, or opened with the label and then labelled
        qid = new_quest_id(delivery_id, fingerprint)
        await self.memory.remember_source_issue(qid, i.number)
        await self._apply(SignalSensed(
            id=f"{delivery_id}:sensed", quest_id=qid, at=self.ctx.clock(), repo=i.repo,
            fingerprint=fingerprint, kind=SignalKind.ISSUE, severity=Severity.MEDIUM,
            title=i.title, source=i.source, base=await self._default_head(i.repo)), i.repo, out)

    async def _quest_push(self, p: QuestPush, delivery_id: str, out: Outcome) -> None:
        if p.by_bot:
            return  # questbot's own patch, rebase or reproduction commit
        quest = await self.quest_of.push(p.repo, p.branch)
        if quest is None:
            return  # another repository's branch, a fork's, or an earlier start's
        await self._apply(HumanRevision(id=f"{delivery_id}:push", quest_id=quest.id,
                                        at=self.ctx.clock(), head=p.head, pusher=p.pusher,
                                        actor=p.pusher), p.repo, out)

    async def _base_push(self, p: BasePush, delivery_id: str, out: Outcome) -> None:
        if p.touched_settings:
            forget = getattr(self.ctx.settings, "forget", None)
            if callable(forget):
                forget(p.repo)
        for quest in await self.quest_of.live(p.repo):
            if quest.base == p.after or quest.state in LANDED:
                continue  # after landing the base no longer bears on the quest
            if quest.state is State.LANDING and (p.pusher == self.ctx.bot_login
                                                 or await self.pulls.merged_here(quest)):
                continue  # the quest's own merge (questbot's, GitHub's or a person's)
            await self._apply(BaseMoved(id=f"{delivery_id}:base:{quest.id}", quest_id=quest.id,
                                        at=self.ctx.clock(), base=p.after), p.repo, out)

    # -- commands ------------------------------------------------------------------------------

    async def _commands(self, c: CommentCommands, delivery_id: str, out: Outcome) -> None:
        await self.forges.for_repo(c.repo)  # not installed there: nothing to say
        thread = await self.quest_of.thread(c.repo, c.number, is_pull_request=c.is_pull_request)
        quest = thread.quest
        commands = c.commands if quest is not None else tuple(
            item for item in c.commands if ours_without_quest(item))
        if not commands:
            return  # Prow's or another bot's commands on a thread that is no quest: not ours
        await self._say(c.repo, c.number, [conversation.reaction(c.repo, c.number, c.comment_id)])
        settings = await self.ctx.settings.settings(c.repo)
        replies: list[Effect] = []

        for item in commands:
            event_id = command_id(c, item)

            def reply(body: str, event_id: str = event_id) -> None:
                replies.append(conversation.reply(c.repo, c.number, event_id, body))

            if isinstance(item, CommandProblem):
                reply(f"@{c.author} {item.message}")
                continue
            if item.name is CommandName.STATUS:
                reply(status_text(quest, settings.to_policy()))
                continue
            if not await self.quest_of.may_act(c.repo, c.author):  # the quest's repository
                if (item.name is CommandName.REFLECT and self.reflections is not None
                        and (said := await self.reflections.submit(
                            c.repo, c.author, item.reason or "", event_id))):
                    reply(said)  # for the reflection reviewer (``reflection_runs``)
                    continue
                reply(no_permission_text(login=c.author, command=item))
                continue
            if item.name is CommandName.REFLECT and self.reflections is not None:
                reply(await self.reflections.reflect(c.repo, c.author, item.reason or ""))
                replies.append(conversation.rewrite_inbox(c.repo, c.number, f"{event_id}-inbox"))
                continue
            if (item.name is CommandName.QUEST and not c.is_pull_request
                    and (quest is None or quest.state in TERMINAL)):
                quest = await self._start_from_issue(c, item, event_id, out)  # anew
                continue
            if quest is None:
                reply(no_quest_text(login=c.author, command=item, on_pull=c.is_pull_request)
                      + (elsewhere_text(thread.home) if thread.home else ""))
                continue
            event = self._command_event(item, quest, c.author, event_id)
            result = await self._apply(event, c.repo, out)
            if isinstance(result, InvalidTransition):
                reply(refusal_text(item, result, quest, c.author))
            elif result.absorbed:  # the quest has ended: the command changed nothing
                reply(refusal_words(item, quest, None, actor=c.author))
            else:
                quest = result.quest
        out.replies += await self._say(c.repo, c.number, replies)

    async def _start_from_issue(self, c: CommentCommands, item: Command, event_id: str,
                                out: Outcome) -> Quest | None:
        fingerprint = f"issue:{c.number}"
        qid = new_quest_id(event_id, fingerprint)
        await self.memory.remember_source_issue(qid, c.number)
        sensed = await self._apply(SignalSensed(
            id=f"{event_id}-sensed", quest_id=qid, at=self.ctx.clock(), repo=c.repo,
            fingerprint=fingerprint, kind=SignalKind.ISSUE, severity=Severity.MEDIUM,
            title=f"issue #{c.number}", source=f"{c.repo}#{c.number}", actor=c.author,
            base=await self._default_head(c.repo)), c.repo, out)
        if isinstance(sensed, InvalidTransition):
            return None
        started = await self._apply(Triaged(id=event_id, quest_id=qid, at=self.ctx.clock(),
                                            route=route(item), actor=c.author), c.repo, out)
        return None if isinstance(started, InvalidTransition) else started.quest

    def _command_event(self, item: Command, quest: Quest, actor: str, event_id: str) -> Event:
        """``command_events.command_event`` at the worker's clock; also what the inbox's boxes
        and the status comment's buttons become."""
        return command_event(item, quest, actor, event_id, self.ctx.clock())

    async def _button(self, b: ButtonPress, delivery_id: str, out: Outcome) -> None:
        async def apply(event: Event, repo: str) -> Applied | InvalidTransition:
            return await self._apply(event, repo, out)

        async def say(repo: str, number: int, effects: list[Effect]) -> None:
            out.replies += await self._say(repo, number, effects)

        await self.buttons.pressed(b, delivery_id, apply, say, self._command_event)

