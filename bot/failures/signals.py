"""Failing checks and labelled issues, read from webhooks into intents with no I/O.

One red CI run is told many times — a ``check_run`` per failing job, the ``check_suite``, for
Actions the ``workflow_run`` — linked by the suite (``check_run.check_suite.id``,
``check_suite.id``, ``workflow_run.check_suite_id``) on one ``head_sha``. Each failure and green
result carries that ``group`` and the ``run`` that reported it, so intake makes one quest of
them and tells a re-run from the report it re-runs. ``workflow_job`` is the ``check_run`` of the
same job told again (same id) and is not read. Runs of questbot's own App are not read at all.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from gidgethub import routing, sansio

from bot.adapters import AppIdentity
from bot.github.payloads import (
    Sink,
    default_branch,
    ident,
    items,
    obj,
    repo_of,
    slug_of,
    text,
)

FAILED = frozenset({"failure", "timed_out"})


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
    app: str = ""
    """The slug of the App that made the check run (its ``app.slug`` in the webhook): whether
    questbot can re-run it is known without reading the run again (``Rerun.attempt_of``)."""


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


def _ours(thing: dict[str, Any], app: AppIdentity) -> bool:
    """A check run or suite questbot's App made: its ``app`` is ours, by id or by slug."""
    made_by = obj(thing.get("app"))
    return ident(made_by.get("id")) == app.id or text(made_by.get("slug")) == app.slug


failures = routing.Router()


def _group(suite_id: object) -> str:
    suite = ident(suite_id)
    return f"suite:{suite}" if suite is not None else ""


def _outcome(out: Sink, data: dict[str, Any], *, branch: object, conclusion: object,
             fingerprint: str, title: str, source: str, sha: str, group: str,
             run: str, details_url: str = "", app: str = "") -> None:
    """A completed run on the default branch: a failure, a success, or nothing for questbot
    (cancelled, skipped, neutral, or on another branch)."""
    repo = repo_of(data)
    if repo is None or not sha or branch != default_branch(data):
        return
    if conclusion == "success":
        out.items.append(Passed(repo, fingerprint, sha, group, run, source))
    elif text(conclusion) in FAILED:
        out.items.append(Failure(repo, fingerprint, title, source, sha, group, run,
                                 details_url, app))


def _run_of(kind: str, number: object, *more: object) -> str:
    found = ident(number)
    if found is None:
        return ""
    return ":".join([kind, str(found), *(str(m) for m in more)])


@failures.register("check_run", action="completed")
async def _check_run(event: sansio.Event, out: Sink) -> None:
    run = obj(event.data.get("check_run"))
    name, suite = text(run.get("name")), obj(run.get("check_suite"))
    if _ours(run, out.app) or not name:
        return
    _outcome(out, event.data, branch=suite.get("head_branch"), conclusion=run.get("conclusion"),
             fingerprint=f"check:{name}", title=f"check {name} failed",
             source=text(run.get("html_url")), sha=text(run.get("head_sha")),
             group=_group(suite.get("id")), run=_run_of("check_run", run.get("id")),
             details_url=text(run.get("details_url")), app=slug_of(run))


@failures.register("check_suite", action="completed")
async def _check_suite(event: sansio.Event, out: Sink) -> None:
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
async def _workflow_run(event: sansio.Event, out: Sink) -> None:
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
async def _issue(event: sansio.Event, out: Sink) -> None:
    issue = obj(event.data.get("issue"))
    repo, number = repo_of(event.data), ident(issue.get("number"))
    if repo is None or number is None or issue.get("pull_request"):
        return
    labels = tuple(name for label in items(issue.get("labels"))
                   if (name := text(label.get("name"))))
    out.items.append(IssueSignal(repo, number, text(issue.get("title")),
                                 text(issue.get("html_url")), labels))
