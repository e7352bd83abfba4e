"""Commands people write in comments, and the buttons they press on questbot's check run, read
from webhooks into intents with no I/O.

Who did something is read from ``type``, never from the login: GitHub gives App accounts
``type: Bot``, and a ``[bot]`` suffix on an account GitHub calls a User proves nothing. An edit
acts only on the commands it adds, as the person who edited it.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from gidgethub import routing, sansio

from bot.github.payloads import Sink, ident, is_bot, items, login_of, obj, repo_of, text
from bot.words.commands import Command, CommandProblem, parse_commands


@dataclass(frozen=True, slots=True)
class CommentCommands:
    repo: str
    number: int
    is_pull_request: bool
    comment_id: int
    author: str
    commands: tuple[Command | CommandProblem, ...]
    edited: bool = False
    """The commands an edit added: a line may hold a new command where an earlier one stood, so
    what each says is part of its identity, not only its line."""


@dataclass(frozen=True, slots=True)
class ButtonPress:
    """A person clicked Approve / Revise / Reject on questbot's check run."""

    repo: str
    external_id: str
    """What questbot wrote as the check run's ``external_id``: a quest's id — of ``repo``'s
    quests only, ``bot.quests.quest_of`` checks (an id is no secret)."""
    action: str
    actor: str
    head_sha: str
    check_run_id: int
    number: int
    """The quest's pull request, from the check run's ``pull_requests`` (0 when absent)."""


conversation = routing.Router()


def _said(body: object) -> tuple[Command | CommandProblem, ...]:
    return tuple(parse_commands(body)) if isinstance(body, str) else ()


def _comment_intent(data: dict[str, Any], actor: object,
                    commands: tuple[Command | CommandProblem, ...]) -> CommentCommands | None:
    comment, issue = obj(data.get("comment")), obj(data.get("issue"))
    repo, number, comment_id = repo_of(data), ident(issue.get("number")), ident(comment.get("id"))
    login = login_of(actor)
    if repo is None or number is None or comment_id is None or not login or is_bot(actor):
        return None
    if not commands:
        return None
    return CommentCommands(repo, number, bool(issue.get("pull_request")), comment_id, login,
                           commands)


@conversation.register("issue_comment", action="created")
async def _comment(event: sansio.Event, out: Sink) -> None:
    comment = obj(event.data.get("comment"))
    intent = _comment_intent(event.data, comment.get("user"), _said(comment.get("body")))
    if intent is not None:
        out.items.append(intent)


@conversation.register("issue_comment", action="edited")
async def _edited(event: sansio.Event, out: Sink) -> None:
    """An edit acts only on what it adds: a command the comment held before was read when it
    was written (or at an earlier edit), so keeping it, or moving it to another line, does not
    act again. The person who edited it is the one who asks: a maintainer may edit anyone's
    comment, and the author's permission must not lend itself to the editor's words."""
    data = event.data
    comment = obj(data.get("comment"))
    before = obj(obj(data.get("changes")).get("body")).get("from")
    if not isinstance(before, str):
        return  # the title changed, or GitHub did not say what the body was: nothing added
    old = {_unplaced(item) for item in _said(before)}
    added = tuple(item for item in _said(comment.get("body")) if _unplaced(item) not in old)
    intent = _comment_intent(data, data.get("sender") or comment.get("user"), added)
    if intent is not None:
        out.items.append(replace(intent, edited=True))


def _unplaced(item: Command | CommandProblem) -> object:
    """What a command says, wherever in the comment it is."""
    return item.model_copy(update={"line": 1})


@conversation.register("check_run", action="requested_action")
async def _button(event: sansio.Event, out: Sink) -> None:
    data = event.data
    run = obj(data.get("check_run"))
    repo = repo_of(data)
    external_id = run.get("external_id")
    action = obj(data.get("requested_action")).get("identifier")
    actor = login_of(data.get("sender"))
    if (repo is None or not isinstance(external_id, str | int) or isinstance(external_id, bool)
            or not str(external_id) or not isinstance(action, str) or not actor):
        return
    pulls = items(run.get("pull_requests"))
    out.items.append(ButtonPress(repo, str(external_id), action, actor,
                                 text(run.get("head_sha")), ident(run.get("id")) or 0,
                                 (ident(pulls[0].get("number")) or 0) if pulls else 0))
