"""Webhook payloads → intents: what happened on GitHub, in questbot's words, with no I/O.

One gidgethub ``Router`` per concern (failures and issues, pushes, comments and buttons,
installations, the quest's pull request itself — ``bot.github.pull_signals`` — and the inbox
issue, ``bot.github.inbox_signals``); ``ROUTER``
combines them. A handler reads a payload and appends
intents to the ``Intents`` it is given — nothing more. Turning an intent into a core event
needs lookups (which quest has this fingerprint? who may approve?), and that is the worker's
job (``bot.worker.intake``). Payloads are read defensively: GitHub's examples show fields that are
absent or null on some deliveries, and a missing field means "not for us", never a crash.
A field of the wrong type counts as missing (``bot.github.payloads``), so every intent
holds the types it declares; ``tests/fuzz`` checks both promises on damaged real payloads.

Who did something is read from ``type``, never from the login: GitHub gives App accounts
``type: Bot``, and a ``[bot]`` suffix on an account GitHub calls a User proves nothing.

One red CI run is told many times — a ``check_run`` per failing job, the ``check_suite``, for
Actions the ``workflow_run`` — linked by the suite (``check_run.check_suite.id``,
``check_suite.id``, ``workflow_run.check_suite_id``) on one ``head_sha``. Each failure and green
result carries that ``group`` and the ``run`` that reported it, so intake makes one quest of
them and tells a re-run from the report it re-runs. ``workflow_job`` is the ``check_run`` of the
same job told again (same id) and is not read.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from gidgethub import routing, sansio

from bot.adapters import AppIdentity
from bot.github.inbox_signals import InboxClosed, InboxTicked, inbox
from bot.github.payloads import (
    default_branch,
    ident,
    is_bot,
    items,
    login_of,
    obj,
    repo_of,
    slug_of,
    text,
)
from bot.github.pull_signals import (
    QUEST_BRANCH_PREFIX,
    PullClosed,
    PullReopened,
    ReviewSubmitted,
    pulls,
)
from bot.github.pull_signals import quest_of_branch as quest_of_branch  # re-exported
from bot.words.commands import Command, CommandProblem, parse_commands

SETTINGS_FILE = ".github/questbot.yml"
FAILED = frozenset({"failure", "timed_out"})


@dataclass(frozen=True, slots=True)
class Installed:
    installation_id: int
    repos: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Failure:
    """A check, suite or workflow failed on the default branch (not one of questbot's own)."""

    repo: str
    fingerprint: str
    title: str
    source: str
    sha: str
    group: str = ""
    """``suite:<check suite id>``: the same for every report of one red run on one commit."""
    run: str = ""
    """``check_run:<id>``, ``check_suite:<id>`` or ``workflow_run:<id>:<attempt>``."""
    details_url: str = ""
    """Where the CI that reported it says to look (a check run's ``details_url``: for Actions
    the job and its log); ``source`` is GitHub's own page of the run (``html_url``)."""


@dataclass(frozen=True, slots=True)
class Passed:
    """A check, suite or workflow succeeded on the default branch: evidence for the quests of
    that check — the failure was flaky (a re-run on the same commit passed) or is fixed."""

    repo: str
    fingerprint: str
    sha: str
    group: str = ""
    run: str = ""
    source: str = ""


@dataclass(frozen=True, slots=True)
class IssueSignal:
    repo: str
    number: int
    title: str
    source: str
    labels: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class QuestPush:
    """Someone pushed to a ``quest/…`` branch of ``repo`` — whose quest's, if any, is
    ``bot.worker.quest_of``'s to decide: the quest of that name must be ``repo``'s."""

    repo: str
    branch: str
    """The branch pushed to: ``quest/<id>``, or ``quest/<id>-r<revision>`` after a rollback
    or a reopening (``Quest.branch``); only the quest's current one is its work."""
    head: str
    pusher: str
    by_bot: bool
    """questbot pushed it itself (its own ``<slug>[bot]`` account, of type Bot): a patch,
    rebase or reproduction commit, not a person's revision."""


@dataclass(frozen=True, slots=True)
class BasePush:
    """The default branch moved."""

    repo: str
    before: str
    after: str
    pusher: str
    touched_settings: bool = False
    """A commit in the push changed ``.github/questbot.yml``: settings must be read again."""


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
    quests only, ``bot.worker.quest_of`` checks (an id is no secret)."""
    action: str
    actor: str
    head_sha: str
    check_run_id: int
    number: int
    """The quest's pull request, from the check run's ``pull_requests`` (0 when absent)."""


Intent = Installed | Failure | Passed | IssueSignal | QuestPush | BasePush | CommentCommands | \
    ButtonPress | PullClosed | PullReopened | ReviewSubmitted | InboxTicked | InboxClosed


@dataclass
class Intents:
    """Where handlers put what they read; ``app`` tells questbot's own check runs, suites and
    pushes apart (``GET /app``: an App need not be called questbot)."""

    app: AppIdentity
    items: list[Intent] = field(default_factory=list)


def _ours(thing: dict[str, Any], app: AppIdentity) -> bool:
    """A check run or suite questbot's App made: its ``app`` is ours, by id or by slug."""
    made_by = obj(thing.get("app"))
    return ident(made_by.get("id")) == app.id or text(made_by.get("slug")) == app.slug


installations = routing.Router()
failures = routing.Router()
pushes = routing.Router()
conversation = routing.Router()


@installations.register("installation")
@installations.register("installation_repositories")
async def _installed(event: sansio.Event, out: Intents) -> None:
    inst = ident(obj(event.data.get("installation")).get("id"))
    if inst is None:
        return
    listed = items(event.data.get("repositories")) or items(
        event.data.get("repositories_added"))
    repos = tuple(name for r in listed if (name := text(r.get("full_name"))))
    if repos and event.data.get("action") not in {"deleted", "removed"}:
        out.items.append(Installed(inst, repos))


def _group(suite_id: object) -> str:
    suite = ident(suite_id)
    return f"suite:{suite}" if suite is not None else ""


def _outcome(out: Intents, data: dict[str, Any], *, branch: object, conclusion: object,
             fingerprint: str, title: str, source: str, sha: str, group: str,
             run: str, details_url: str = "") -> None:
    """A completed run on the default branch: a failure, a success, or nothing for questbot
    (cancelled, skipped, neutral, or on another branch)."""
    repo = repo_of(data)
    if repo is None or not sha or branch != default_branch(data):
        return
    if conclusion == "success":
        out.items.append(Passed(repo, fingerprint, sha, group, run, source))
    elif text(conclusion) in FAILED:
        out.items.append(Failure(repo, fingerprint, title, source, sha, group, run,
                                 details_url))


def _run_of(kind: str, number: object, *more: object) -> str:
    found = ident(number)
    if found is None:
        return ""
    return ":".join([kind, str(found), *(str(m) for m in more)])


@failures.register("check_run", action="completed")
async def _check_run(event: sansio.Event, out: Intents) -> None:
    run = obj(event.data.get("check_run"))
    name, suite = text(run.get("name")), obj(run.get("check_suite"))
    if _ours(run, out.app) or not name:
        return
    _outcome(out, event.data, branch=suite.get("head_branch"), conclusion=run.get("conclusion"),
             fingerprint=f"check:{name}", title=f"check {name} failed",
             source=text(run.get("html_url")), sha=text(run.get("head_sha")),
             group=_group(suite.get("id")), run=_run_of("check_run", run.get("id")),
             details_url=text(run.get("details_url")))


@failures.register("check_suite", action="completed")
async def _check_suite(event: sansio.Event, out: Intents) -> None:
    suite = obj(event.data.get("check_suite"))
    if _ours(suite, out.app):
        return
    name = slug_of(suite) or "suite"
    _outcome(out, event.data, branch=suite.get("head_branch"),
             conclusion=suite.get("conclusion"), fingerprint=f"suite:{name}",
             title=f"check suite {name} failed", source=text(suite.get("url")),
             sha=text(suite.get("head_sha")), group=_group(suite.get("id")),
             run=_run_of("check_suite", suite.get("id")))


@failures.register("workflow_run", action="completed")
async def _workflow_run(event: sansio.Event, out: Intents) -> None:
    run = obj(event.data.get("workflow_run"))
    name, attempt = text(run.get("name")), ident(run.get("run_attempt")) or 1
    if not name:
        return
    _outcome(out, event.data, branch=run.get("head_branch"), conclusion=run.get("conclusion"),
             fingerprint=f"workflow:{name}", title=f"workflow {name} failed",
             source=text(run.get("html_url")), sha=text(run.get("head_sha")),
             group=_group(run.get("check_suite_id")),
             run=_run_of("workflow_run", run.get("id"), attempt))


@failures.register("issues", action="opened")
@failures.register("issues", action="labeled")
async def _issue(event: sansio.Event, out: Intents) -> None:
    issue = obj(event.data.get("issue"))
    repo, number = repo_of(event.data), ident(issue.get("number"))
    if repo is None or number is None or issue.get("pull_request"):
        return
    labels = tuple(name for label in items(issue.get("labels"))
                   if (name := text(label.get("name"))))
    out.items.append(IssueSignal(repo, number, text(issue.get("title")),
                                 text(issue.get("html_url")), labels))


@pushes.register("push")
async def _push(event: sansio.Event, out: Intents) -> None:
    data = event.data
    repo = repo_of(data)
    ref, after = text(data.get("ref")), text(data.get("after"))
    if repo is None or not ref.startswith("refs/heads/") or set(after) <= {"0"}:
        return  # a deleted branch has an all-zero `after`
    branch = ref.removeprefix("refs/heads/")
    sender = data.get("sender")
    pusher = login_of(sender) or text(obj(data.get("pusher")).get("name"))
    if branch.startswith(QUEST_BRANCH_PREFIX):
        if quest_of_branch(branch):
            ours = is_bot(sender) and pusher == out.app.bot_login
            out.items.append(QuestPush(repo, branch, after, pusher, ours))
    elif branch == default_branch(data):
        touched = any(SETTINGS_FILE in paths for c in items(data.get("commits"))
                      for k in ("added", "modified", "removed")
                      if isinstance(paths := c.get(k), list))
        out.items.append(BasePush(repo, text(data.get("before")), after, pusher, touched))


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
async def _comment(event: sansio.Event, out: Intents) -> None:
    comment = obj(event.data.get("comment"))
    intent = _comment_intent(event.data, comment.get("user"), _said(comment.get("body")))
    if intent is not None:
        out.items.append(intent)


@conversation.register("issue_comment", action="edited")
async def _edited(event: sansio.Event, out: Intents) -> None:
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
async def _button(event: sansio.Event, out: Intents) -> None:
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


ROUTER = routing.Router(installations, failures, pushes, conversation, pulls, inbox)
EVENTS_READ: frozenset[str] = frozenset(ROUTER._shallow_routes) | frozenset(ROUTER._deep_routes)
"""Every event a handler here reads (gidgethub's ``Router`` keeps its routes in these two
dicts and lists them nowhere else): the events ``app.yml`` subscribes to, besides the
installation events every App gets, and the ones the web process stores."""


async def read_intents(event_name: str, data: dict[str, Any], *, delivery_id: str,
                       app: AppIdentity) -> list[Intent]:
    """Every intent one delivery holds (often none: most deliveries are not for questbot)."""
    out = Intents(app)
    if not isinstance(data.get("action", ""), str):
        # gidgethub looks the action up in a dict: an array or object there would raise
        data = {key: value for key, value in data.items() if key != "action"}
    event = sansio.Event(data, event=event_name, delivery_id=delivery_id)
    await ROUTER.dispatch(event, out)
    inst = ident(obj(data.get("installation")).get("id"))
    repo = repo_of(data)
    if inst is not None and repo is not None:
        out.items.insert(0, Installed(inst, (repo,)))
    return out.items
