"""Intake: one webhook delivery → the core events it means, applied through the journal.

``bot.intake.routes`` reads a payload into intents without I/O; here each intent goes to the
concern that handles its kind (``Intake.handlers``: failures, commands, buttons, the pull
request, the inbox), which resolves it against what questbot knows — which quest it is about,
bound to the event's repository, and who may act, both asked of ``bot.quests.quest_of`` — and
turns it into core events with ids derived from the delivery, so a delivery processed twice is
absorbed by the journal. Replies and reactions are effects queued on the thread's trail, with
keys from the comment, so a delivery processed twice queues nothing new; the effect runner
posts them. A new concern is a room with a reader (added to ``routes.ROUTER``) and a handler
(added to ``handlers``).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from bot.adapters import AdapterContext
from bot.commands.buttons import ButtonIntake
from bot.commands.intake import CommentIntake, Reflecting
from bot.commands.signals import ButtonPress, CommentCommands
from bot.core import Effect, Event, InvalidTransition
from bot.failures.intake import FailureIntake
from bot.failures.signals import Failure, IssueSignal, Passed
from bot.github.forge import Forges
from bot.inbox.intake import InboxIntake
from bot.inbox.signals import InboxClosed, InboxTicked
from bot.intake.routes import Installed, read_intents
from bot.journal import Applied, Indexes
from bot.journal.keys import thread_trail
from bot.journal.memory import ForgeMemory
from bot.pulls.intake import PullIntake
from bot.pulls.signals import BasePush, PullClosed, PullReopened, QuestPush, ReviewSubmitted
from bot.quests.desk import Desk
from bot.quests.permissions import Permissions
from bot.quests.policybook import PolicyBook
from bot.quests.quest_of import QuestOf
from bot.repository.intake import RepositoryIntake
from bot.repository.names import known_names
from bot.repository.signals import RepositoryChanged

log = logging.getLogger(__name__)

REPO_NAME = re.compile(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+")
"""What GitHub allows in ``owner/name``: anything else in a payload is not a repository."""


@dataclass
class Outcome:
    """What one delivery did, for logs, metrics and tests."""

    applied: list[Applied] = field(default_factory=list)
    refused: list[InvalidTransition] = field(default_factory=list)
    replies: int = 0
    """Replies (and inbox rewrites) this delivery queued (a delivery handled again queues
    none)."""


Handler = Callable[[Any, Desk], Awaitable[None]]
"""A concern's handling of one kind of intent, at the delivery's desk."""


class Intake:
    """One delivery's intents, each handed to the concern that handles its kind — the one
    place the concerns are combined (``bot.intake.routes`` combines their readers)."""

    def __init__(self, ctx: AdapterContext, forges: Forges, book: PolicyBook, indexes: Indexes,
                 *, permissions: Permissions | None = None) -> None:
        self.ctx = ctx
        self.forges = forges
        self.book = book
        self.indexes = indexes
        self.permissions = permissions or Permissions()
        self.memory = ForgeMemory(ctx.journal.client)
        self.quest_of = QuestOf(ctx, forges, self.memory, indexes, self.permissions)
        """Which quest an event is about, and who may act on it: every concern asks it."""
        self.failures = FailureIntake(ctx, forges, self.quest_of, self.memory, indexes)
        self.pulls = PullIntake(ctx, forges, self.memory, self.quest_of)
        self.comments = CommentIntake(ctx, forges, self.memory, self.quest_of)
        self.buttons = ButtonIntake(ctx, forges, self.memory, self.quest_of)
        self.inbox = InboxIntake(ctx, forges, self.memory, self.quest_of)
        self.repository = RepositoryIntake(ctx, forges, self.memory, self.quest_of)
        self.handlers: dict[type, Handler] = {
            Installed: self._installed,
            Failure: self.failures.failure,
            Passed: self.failures.passed,
            IssueSignal: self.failures.issue,
            CommentCommands: self.comments.commands,
            ButtonPress: self.buttons.pressed,
            ReviewSubmitted: self.pulls.review,
            PullClosed: self.pulls.closed,
            PullReopened: self.pulls.reopened,
            QuestPush: self.pulls.quest_push,
            BasePush: self.pulls.base_push,
            InboxTicked: self.inbox.ticked,
            InboxClosed: self.inbox.closed,
            RepositoryChanged: self.repository.changed,
        }

    @property
    def reflections(self) -> Reflecting | None:
        return self.comments.reflections

    @reflections.setter
    def reflections(self, value: Reflecting | None) -> None:
        self.comments.reflections = value

    async def handle(self, event_name: str, payload: dict[str, Any],
                     delivery_id: str) -> Outcome:
        out = Outcome()
        payload = await known_names(self.forges, payload)  # a quest follows its repository
        repository = payload.get("repository")
        if isinstance(repository, dict):
            name, branch = repository.get("full_name"), repository.get("default_branch")
            if (isinstance(name, str) and REPO_NAME.fullmatch(name)
                    and isinstance(branch, str) and branch):
                await self.memory.remember_default_branch(name, branch)
        desk = self._desk(delivery_id, out)
        for intent in await read_intents(event_name, payload, delivery_id=delivery_id,
                                         app=self.ctx.app):
            await self.handlers[type(intent)](intent, desk)
        return out

    def _desk(self, delivery_id: str, out: Outcome) -> Desk:
        async def apply(event: Event, repo: str) -> Applied | InvalidTransition:
            return await self._apply(event, repo, out)

        async def racing(event: Event, repo: str) -> Applied | InvalidTransition:
            return await self._apply(event, repo, out, racing=True)

        async def say(repo: str, number: int, effects: list[Effect]) -> None:
            out.replies += await self.ctx.journal.enqueue(thread_trail(repo, number), effects)

        return Desk(delivery_id=delivery_id, apply=apply, racing=racing, say=say)

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

    async def _installed(self, intent: Installed, _desk: Desk) -> None:
        for repo in intent.repos:
            await self.forges.remember_installation(repo, intent.installation_id)
