"""The fake's own HTTP control surface, for driving it from another process.

In a test the fake is an object: ``fake.comment(...)``, ``fake.repo(...).pulls``. Run on its own
(``python -m questbot_testing.fakegithub --control``), a harness in another process does the same
through these routes, all JSON, all under ``/_fake/control/`` (never faulted, never logged as
requests):

``POST repositories``  ``{"full_name", "files": {path: text}, "permissions": {login: level}}``
``POST checks``        ``{"repo", "name", "conclusion": "failure", "sha": <default: main>}``
                       — another App's check run completes (``check_run`` webhook)
``POST comments``      ``{"repo", "number", "body", "user"}`` (``issue_comment`` webhook)
``POST pulls``         ``{"repo"}``: the repository's pull requests (number, head, merged)
``POST faults``        ``{"rate": 0.0}`` — change the injected fault rate while running
``POST drops``         ``{"count": 3}`` — the next webhook attempts fail to connect (the
                       receiver was down): GitHub's delivery log shows them failed
``GET  state``         everything a harness checks afterwards: each repository's issues, pull
                       requests, comments with their reactions, check runs, commits and refs;
                       every API request (with the JSON bodies of writes); every webhook attempt
                       and which deliveries were acknowledged; GitHub's delivery log (guid,
                       status, redelivery); the faults injected; violations.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from aiohttp import web

if TYPE_CHECKING:
    from questbot_testing.fakegithub.server import FakeGitHub
    from questbot_testing.fakegithub.state import Repository

PREFIX = "/_fake/control/"


def control(fake: FakeGitHub) -> Callable[[web.Request], Awaitable[web.StreamResponse]]:
    """The handler ``FakeGitHub.control`` calls for every ``/_fake/control/...`` request."""
    routes: dict[tuple[str, str], Callable[[FakeGitHub, Any], Awaitable[Any]]] = {
        ("POST", "repositories"): _repository,
        ("POST", "checks"): _check,
        ("POST", "comments"): _comment,
        ("POST", "faults"): _faults,
        ("POST", "drops"): _drops,
        ("POST", "pulls"): _pulls,
        ("GET", "state"): _state,
    }

    async def handle(request: web.Request) -> web.StreamResponse:
        name = request.path.removeprefix(PREFIX)
        route = routes.get((request.method, name))
        if route is None:
            return web.json_response({"message": f"no control route {request.method} {name}"},
                                     status=404)
        body = await request.json() if request.can_read_body else {}
        try:
            return web.json_response(await route(fake, body))
        except (KeyError, ValueError) as exc:
            return web.json_response({"message": f"{type(exc).__name__}: {exc}"}, status=422)

    return handle


async def _repository(fake: FakeGitHub, body: dict[str, Any]) -> dict[str, Any]:
    repo = fake.create_repository(body["full_name"], dict(body.get("files") or {}))
    for login, level in (body.get("permissions") or {}).items():
        fake.set_permission(repo.full_name, login, level)
    return {"installation_id": repo.installation_id, "main": repo.branch_sha(repo.default_branch)}


async def _check(fake: FakeGitHub, body: dict[str, Any]) -> dict[str, Any]:
    repo = fake.repo(body["repo"])
    sha = body.get("sha") or repo.branch_sha(repo.default_branch)
    run = await fake.complete_check_run(repo.full_name, str(sha), body["name"],
                                        body.get("conclusion", "failure"))
    return {"id": run.id, "sha": sha}


async def _comment(fake: FakeGitHub, body: dict[str, Any]) -> dict[str, Any]:
    comment = await fake.comment(body["repo"], int(body["number"]), body["body"],
                                 user=body["user"])
    return {"id": comment.id}


async def _pulls(fake: FakeGitHub, body: dict[str, Any]) -> list[dict[str, Any]]:
    return _pull_rows(fake.repo(body["repo"]))


async def _faults(fake: FakeGitHub, body: dict[str, Any]) -> dict[str, Any]:
    rate = float(body["rate"])
    if not 0.0 <= rate <= 1.0:
        raise ValueError(f"the fault rate must be between 0 and 1, got {rate}")
    fake.faults.rate = rate
    return {"rate": rate}


async def _drops(fake: FakeGitHub, body: dict[str, Any]) -> dict[str, Any]:
    count = int(body["count"])
    if count < 0:
        raise ValueError(f"the number of attempts to drop must be 0 or more, got {count}")
    fake.hooks.drop(count)
    return {"dropping": count}


async def _state(fake: FakeGitHub, _body: Any) -> dict[str, Any]:
    dispatcher = fake.dispatcher
    return {
        "repositories": {repo.full_name: _repo(repo) for repo in fake.world.repositories.values()},
        "requests": [
            {"at": e.at, "method": e.method, "path": e.path, "operation_id": e.operation_id,
             "status": e.status, "fault": e.fault, "hidden_status": e.hidden_status,
             "json": e.json if e.method != "GET" else None}
            for e in fake.requests
        ],
        "webhooks": {
            "submitted": list(dispatcher.submitted) if dispatcher else [],
            "attempts": [a.as_json() for a in dispatcher.attempts] if dispatcher else [],
            "acknowledged": sorted(dispatcher.acknowledged) if dispatcher else [],
            "in_flight": dispatcher.in_flight if dispatcher else 0,
            "log": [{"id": e.id, "guid": e.guid, "event": e.delivery.event,
                     "status": e.status, "status_code": e.status_code,
                     "redelivery": e.redelivery} for e in fake.hooks.entries],
        },
        "faults": [{"at": f.at, "method": f.method, "path": f.path, "kind": f.kind,
                    "status": f.status} for f in fake.faults.injected],
        "violations": list(fake.violations),
    }


def _repo(repo: Repository) -> dict[str, Any]:
    return {
        "installation_id": repo.installation_id,
        "default_branch": repo.default_branch,
        "refs": dict(repo.refs),
        "issues": [{"number": i.number, "title": i.title, "user": i.user, "state": i.state,
                    "body": i.body, "is_pull_request": i.is_pull_request, "labels": i.labels}
                   for i in repo.issues.values()],
        "pulls": _pull_rows(repo),
        "comments": [{"id": c.id, "issue_number": c.issue_number, "user": c.user,
                      "body": c.body, "reactions": [list(r) for r in c.reactions]}
                     for c in repo.comments.values()],
        "check_runs": [{"id": r.id, "head_sha": r.head_sha, "name": r.name, "status": r.status,
                        "conclusion": r.conclusion, "external_id": r.external_id,
                        "app_slug": r.app_slug} for r in repo.check_runs.values()],
        "commits": {c.sha: {"message": c.message, "parents": list(c.parents),
                            "author": c.author} for c in repo.git.commits.values()},
    }


def _pull_rows(repo: Repository) -> list[dict[str, Any]]:
    return [{"number": p.number, "head_ref": p.head_ref, "base_ref": p.base_ref,
             "head_sha": p.head_sha, "base_sha": p.base_sha, "merged": p.merged,
             "merged_by": p.merged_by, "merge_commit_sha": p.merge_commit_sha,
             "requested_reviewers": list(p.requested_reviewers)}
            for p in repo.pulls.values()]
