"""What people do to the inbox issue, read into intents with no I/O.

The inbox (``bot.inbox.issue``) is questbot's own issue, known by its author — the App's bot
account, of ``type: Bot`` — and its hidden marker. A person may tick its boxes (``issues``
``edited``: ``InboxTicked``, the boxes ``inbox_marks.ticked`` and ``lessons_ticked`` find
between ``changes.body.from`` and the body now) or close it (``InboxClosed``). questbot's own
edits are not read: the box it unticks when it writes the inbox again asks for nothing.
``bot.intake.routes`` routes these with the rest.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from gidgethub import routing, sansio

from bot.github.payloads import Sink, ident, is_bot, login_of, obj, repo_of, text
from bot.words.inbox_marks import INBOX_MARKER, lessons_ticked, ticked


@dataclass(frozen=True, slots=True)
class InboxTicked:
    """A person ticked boxes of the inbox: each names a quest, or a lesson to drop (its
    ending's mark, ``quest@revision``)."""

    repo: str
    number: int
    actor: str
    quest_ids: tuple[str, ...]
    lessons: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class InboxClosed:
    """A person closed the inbox issue."""

    repo: str
    number: int
    actor: str


inbox = routing.Router()


def _inbox_issue(data: dict[str, Any], out: Sink) -> tuple[str, int, str, str] | None:
    """(repo, number, body, person) when ``data`` is about questbot's inbox and a person did
    it; ``None`` otherwise."""
    issue, sender = obj(data.get("issue")), data.get("sender")
    repo, number, body = repo_of(data), ident(issue.get("number")), text(issue.get("body"))
    author = issue.get("user")
    if (repo is None or number is None or issue.get("pull_request") or INBOX_MARKER not in body
            or not is_bot(author) or login_of(author).lower() != out.app.bot_login.lower()
            or is_bot(sender) or not login_of(sender)):
        return None
    return repo, number, body, login_of(sender)


@inbox.register("issues", action="edited")
async def _edited(event: sansio.Event, out: Sink) -> None:
    found = _inbox_issue(event.data, out)
    before = obj(obj(event.data.get("changes")).get("body")).get("from")
    if found is None or not isinstance(before, str):
        return  # not the inbox, questbot's own edit, or the title changed
    repo, number, body, actor = found
    quests, lessons = ticked(before, body), lessons_ticked(before, body)
    if quests or lessons:
        out.items.append(InboxTicked(repo, number, actor, tuple(quests), tuple(lessons)))


@inbox.register("issues", action="closed")
async def _closed(event: sansio.Event, out: Sink) -> None:
    found = _inbox_issue(event.data, out)
    if found is not None:
        repo, number, _body, actor = found
        out.items.append(InboxClosed(repo, number, actor))
