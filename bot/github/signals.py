"""Webhook payloads → intents: what happened on GitHub, in questbot's words, with no I/O.

One gidgethub ``Router`` per concern (failures and issues, pushes and pull requests, comments
and buttons, installations); ``ROUTER`` combines them. A handler reads a payload and appends
intents to the ``Intents`` it is given — nothing more. Turning an intent into a core event
needs lookups (which quest has this fingerprint? who may approve?), and that is the worker's
job (``bot.worker.intake``). Payloads are read defensively: GitHub's examples show fields that are
absent or null on some deliveries, and a missing field means "not for us", never a crash.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from gidgethub import routing, sansio

from bot.github.commands import Command, CommandProblem, parse_commands

QUEST_BRANCH_PREFIX = "quest/"
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


@dataclass(frozen=True, slots=True)
class Passed:
    """A check completed successfully on a commit: a watching quest may learn it is clean.

    Read and produced, but not yet consumed: the worker's intake ignores it, and a watching
    quest is closed by its watch timer (``watch_clean``). The type stays because issue 11
    ("Real GitHub") gives it a use; until then it is the one intent nothing acts on."""

    repo: str
    fingerprint: str
    sha: str


@dataclass(frozen=True, slots=True)
class IssueSignal:
    repo: str
    number: int
    title: str
    source: str
    labels: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class QuestPush:
    """Someone pushed to a quest branch."""

    repo: str
    quest_id: str
    head: str
    pusher: str
    by_bot: bool


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


@dataclass(frozen=True, slots=True)
class ButtonPress:
    """A person clicked Approve / Revise / Reject on questbot's check run."""

    repo: str
    quest_id: str
    action: str
    actor: str
    head_sha: str
    check_run_id: int
    number: int
    """The quest's pull request, from the check run's ``pull_requests`` (0 when absent)."""


Intent = Installed | Failure | Passed | IssueSignal | QuestPush | BasePush | CommentCommands | \
    ButtonPress


@dataclass
class Intents:
    """Where handlers put what they read; ``app_slug`` tells questbot's own check runs apart."""

    app_slug: str = "questbot"
    items: list[Intent] = field(default_factory=list)


def _repo(data: dict[str, Any]) -> str | None:
    repo = data.get("repository") or {}
    name = repo.get("full_name")
    return name if isinstance(name, str) else None


def _default_branch(data: dict[str, Any]) -> str:
    return str((data.get("repository") or {}).get("default_branch") or "main")


def _is_bot(user: dict[str, Any] | None) -> bool:
    user = user or {}
    return user.get("type") == "Bot" or str(user.get("login", "")).endswith("[bot]")


def _slug(obj: dict[str, Any]) -> str:
    return str((obj.get("app") or {}).get("slug") or "")


installations = routing.Router()
failures = routing.Router()
pushes = routing.Router()
conversation = routing.Router()


@installations.register("installation")
@installations.register("installation_repositories")
async def _installed(event: sansio.Event, out: Intents) -> None:
    inst = (event.data.get("installation") or {}).get("id")
    if not isinstance(inst, int):
        return
    listed = event.data.get("repositories") or event.data.get("repositories_added") or []
    repos = tuple(r["full_name"] for r in listed if isinstance(r, dict) and "full_name" in r)
    if repos and event.data.get("action") not in {"deleted", "removed"}:
        out.items.append(Installed(inst, repos))


@failures.register("check_run", action="completed")
async def _check_run(event: sansio.Event, out: Intents) -> None:
    run = event.data.get("check_run") or {}
    repo = _repo(event.data)
    suite = run.get("check_suite") or {}
    if repo is None or _slug(run) == out.app_slug or not run.get("head_sha"):
        return
    fingerprint = f"check:{run.get('name')}"
    if run.get("conclusion") == "success":
        out.items.append(Passed(repo, fingerprint, run["head_sha"]))
        return
    if run.get("conclusion") in FAILED and suite.get("head_branch") == _default_branch(
            event.data):
        out.items.append(Failure(repo, fingerprint, f"check {run.get('name')} failed",
                                 str(run.get("html_url") or ""), run["head_sha"]))


@failures.register("check_suite", action="completed")
async def _check_suite(event: sansio.Event, out: Intents) -> None:
    suite = event.data.get("check_suite") or {}
    repo = _repo(event.data)
    if (repo is None or _slug(suite) == out.app_slug or suite.get("conclusion") not in FAILED
            or suite.get("head_branch") != _default_branch(event.data)):
        return
    name = _slug(suite) or "suite"
    out.items.append(Failure(repo, f"suite:{name}", f"check suite {name} failed",
                             str(suite.get("url") or ""), str(suite.get("head_sha") or "")))


@failures.register("workflow_run", action="completed")
async def _workflow_run(event: sansio.Event, out: Intents) -> None:
    run = event.data.get("workflow_run") or {}
    repo = _repo(event.data)
    if (repo is None or run.get("conclusion") not in FAILED
            or run.get("head_branch") != _default_branch(event.data)):
        return
    out.items.append(Failure(repo, f"workflow:{run.get('name')}",
                             f"workflow {run.get('name')} failed", str(run.get("html_url") or ""),
                             str(run.get("head_sha") or "")))


@failures.register("issues", action="opened")
@failures.register("issues", action="labeled")
async def _issue(event: sansio.Event, out: Intents) -> None:
    issue = event.data.get("issue") or {}
    repo = _repo(event.data)
    if repo is None or not isinstance(issue.get("number"), int) or issue.get("pull_request"):
        return
    labels = tuple(str(lbl.get("name")) for lbl in issue.get("labels") or []
                   if isinstance(lbl, dict))
    out.items.append(IssueSignal(repo, issue["number"], str(issue.get("title") or ""),
                                 str(issue.get("html_url") or ""), labels))


@pushes.register("push")
async def _push(event: sansio.Event, out: Intents) -> None:
    data = event.data
    repo = _repo(data)
    ref = str(data.get("ref") or "")
    after = str(data.get("after") or "")
    if repo is None or not ref.startswith("refs/heads/") or set(after) <= {"0"}:
        return  # a deleted branch has an all-zero `after`
    branch = ref.removeprefix("refs/heads/")
    sender = data.get("sender") or {}
    pusher = str(sender.get("login") or (data.get("pusher") or {}).get("name") or "")
    if branch.startswith(QUEST_BRANCH_PREFIX):
        quest_id = branch.removeprefix(QUEST_BRANCH_PREFIX)
        if quest_id and "/" not in quest_id and "-revert-" not in quest_id:
            out.items.append(QuestPush(repo, quest_id, after, pusher, _is_bot(sender)))
    elif branch == _default_branch(data):
        touched = any(SETTINGS_FILE in (c.get(k) or []) for c in data.get("commits") or []
                      if isinstance(c, dict) for k in ("added", "modified", "removed"))
        out.items.append(BasePush(repo, str(data.get("before") or ""), after, pusher, touched))


@conversation.register("issue_comment", action="created")
async def _comment(event: sansio.Event, out: Intents) -> None:
    data = event.data
    comment = data.get("comment") or {}
    issue = data.get("issue") or {}
    repo = _repo(data)
    if repo is None or _is_bot(comment.get("user")) or not isinstance(comment.get("id"), int):
        return
    commands = tuple(parse_commands(str(comment.get("body") or "")))
    if not commands:
        return
    out.items.append(CommentCommands(
        repo, int(issue.get("number") or 0), bool(issue.get("pull_request")), comment["id"],
        str((comment.get("user") or {}).get("login") or ""), commands))


@conversation.register("check_run", action="requested_action")
async def _button(event: sansio.Event, out: Intents) -> None:
    data = event.data
    run = data.get("check_run") or {}
    repo = _repo(data)
    action = (data.get("requested_action") or {}).get("identifier")
    if repo is None or not run.get("external_id") or not isinstance(action, str):
        return
    pulls = [p for p in run.get("pull_requests") or [] if isinstance(p, dict)]
    out.items.append(ButtonPress(repo, str(run["external_id"]), action,
                                 str((data.get("sender") or {}).get("login") or ""),
                                 str(run.get("head_sha") or ""), int(run.get("id") or 0),
                                 int(pulls[0].get("number") or 0) if pulls else 0))


ROUTER = routing.Router(installations, failures, pushes, conversation)


async def read_intents(event_name: str, data: dict[str, Any], *, delivery_id: str,
                       app_slug: str = "questbot") -> list[Intent]:
    """Every intent one delivery holds (often none: most deliveries are not for questbot)."""
    out = Intents(app_slug=app_slug)
    event = sansio.Event(data, event=event_name, delivery_id=delivery_id)
    await ROUTER.dispatch(event, out)
    inst = (data.get("installation") or {}).get("id")
    repo = _repo(data)
    if isinstance(inst, int) and repo is not None:
        out.items.insert(0, Installed(inst, (repo,)))
    return out.items
