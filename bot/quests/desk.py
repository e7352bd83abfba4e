"""What a concern's intake works with while it handles one delivery: applying an event to its
quest under the quest's own policy, saying something on a thread, and where a quest that starts
from an issue starts. ``bot.intake.intake`` makes a ``Desk`` for each delivery and counts what
was done at it; the concerns never see one another."""

from __future__ import annotations

import hashlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from bot.core import Effect, Event, InvalidTransition
from bot.errors import PermanentError
from bot.github.forge import Forges
from bot.journal import Applied
from bot.journal.memory import ForgeMemory

Apply = Callable[[Event, str], Awaitable[Applied | InvalidTransition]]
"""Apply an event to its quest in a repository; a refusal is returned, not raised."""
Say = Callable[[str, int, list[Effect]], Awaitable[None]]
"""Queue replies and reactions on an issue's or pull request's thread."""


@dataclass(frozen=True)
class Desk:
    delivery_id: str
    apply: Apply
    """A refusal counts as the delivery's, for its log and metrics."""
    racing: Apply
    """For a caller that looks again after a refusal (another report of the same failure moved
    the quest first): no refusal to report."""
    say: Say


def new_quest_id(delivery_id: str, fingerprint: str) -> str:
    """Deterministic, so a delivery processed twice names the same quest; branch-safe. (A
    failing check's quest is named by the failure instead: ``quest_of.failure_quest_id``.)"""
    return "q" + hashlib.sha256(f"{delivery_id}:{fingerprint}".encode()).hexdigest()[:10]


async def default_head(forges: Forges, memory: ForgeMemory, repo: str) -> str:
    """Where a quest from an issue starts, or a closed one starts again: the default branch's
    head now (a failing check names its commit; an issue does not)."""
    forge = await forges.for_repo(repo)
    branch = await memory.default_branch(repo)
    head = await forge.git.branch_head(branch)
    if head is None:
        raise PermanentError(f"{repo} has no branch {branch} to start the quest from; the "
                             "worker records the default branch from webhooks — "
                             "redeliver one")
    return head
