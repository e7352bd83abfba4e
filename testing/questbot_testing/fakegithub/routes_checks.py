"""Handlers for the App itself, check runs, commit statuses, Actions runs and permissions."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from questbot_testing.fakegithub import echoes, permissions, rules
from questbot_testing.fakegithub.calls import (
    SUSPENDED,
    Call,
    GitHubError,
    Handler,
    Reply,
    not_found,
)
from questbot_testing.fakegithub.collaborators import get_permission_level
from questbot_testing.fakegithub.routes_issues import paged, unsupported, with_link
from questbot_testing.fakegithub.state import CheckRun, CommitStatus, Repository, iso

if TYPE_CHECKING:
    from questbot_testing.fakegithub.server import FakeGitHub

PERMISSIONS_NOT_GRANTED = "The permissions requested are not granted to this installation."


async def get_app(call: Call) -> Reply:
    return Reply(200, call.render.app())


async def get_root(call: Call) -> Reply:
    """``meta/root``: the hypermedia index GitHub answers ``GET /`` with."""
    return Reply(200, call.render.api.example("root"))


async def get_repository(call: Call) -> Reply:
    """``repos/get``: the repository, with its merge settings and default branch."""
    return Reply(200, call.render.full_repository(call.repository))


async def create_access_token(call: Call) -> Reply:
    """A token with the App's permissions, or the subset the body asks for; more than the
    installation granted is refused (BEHAVIOUR.md §13)."""
    installation = call.world.installations.get(call.int_param("installation_id"))
    if installation is None:
        raise not_found()
    if installation.suspended_at:
        raise GitHubError(403, SUSPENDED)  # BEHAVIOUR §23
    granted = call.world.app_permissions
    asked = call.body.get("permissions") if isinstance(call.body, dict) else None
    if asked is not None and permissions.not_granted(asked, granted):
        raise GitHubError(422, PERMISSIONS_NOT_GRANTED)
    token = call.fake.installation_token(installation.id, permissions=asked)
    body = call.render.api.example("installation-token")
    body.pop("repositories", None)
    body.update(
        token=token,
        expires_at=iso(call.world.tokens[token].expires_at),
        repository_selection="all",
        permissions=dict(call.world.tokens[token].permissions),
    )
    return Reply(201, body)


async def get_repo_installation(call: Call) -> Reply:
    installation = call.world.installations.get(call.repository.installation_id)
    if installation is None:  # removed from the installation, or uninstalled (§23)
        raise not_found()
    return Reply(200, call.render.installation(installation))


async def create_check_run(call: Call) -> Reply:
    run = await make_check_run(call.fake, call.repository, call.body)
    return Reply(201, call.render.check_run(call.repository, run))


async def make_check_run(fake: FakeGitHub, repo: Repository, body: dict[str, Any]) -> CheckRun:
    """A new check run from a ``checks/create`` body (REST's, or GraphQL's ``createCheckRun``
    read into it): the same world and the same ``check_run`` ``completed`` echo either way."""
    if body["head_sha"] not in repo.git.commits:
        raise GitHubError(422, "No commit found for SHA: " + body["head_sha"])
    try:
        rules.conclusion_required(body)
    except GitHubError:
        fake.violations.append("checks/create: a completed run without a conclusion")
        raise
    conclusion = body.get("conclusion")
    status = "completed" if conclusion else body.get("status", "queued")
    run = CheckRun(
        id=fake.world.new_id(),
        head_sha=body["head_sha"],
        name=body["name"],
        status=status,
        conclusion=conclusion,
        external_id=body.get("external_id", ""),
        started_at=body.get("started_at", iso()),
        completed_at=body.get("completed_at", iso()) if status == "completed" else None,
        details_url=body.get("details_url"),
        output=dict(body.get("output", {})),
        actions=list(body.get("actions", [])),
        app_slug=fake.world.app_slug,
    )
    repo.check_runs[run.id] = run
    if run.status == "completed":
        await echoes.check_run_completed(fake, repo, run)
    return run


async def update_check_run(call: Call) -> Reply:
    repo = call.repository
    run = repo.check_runs.get(call.int_param("check_run_id"))
    if run is None:
        raise not_found()
    await change_check_run(call.fake, repo, run, call.body)
    return Reply(200, call.render.check_run(repo, run))


async def change_check_run(fake: FakeGitHub, repo: Repository, run: CheckRun,
                           body: dict[str, Any]) -> None:
    """A ``checks/update`` body applied to ``run`` (REST's, or GraphQL's ``updateCheckRun``
    read into it), with the ``check_run`` ``completed`` echo when it completes."""
    was = run.status
    for key in ("name", "external_id", "details_url", "started_at", "completed_at", "status"):
        if key in body:
            setattr(run, key, body[key])
    if "output" in body:
        run.output = dict(body["output"])
    if "actions" in body:
        run.actions = list(body["actions"])
    if body.get("conclusion"):
        run.conclusion = body["conclusion"]
        run.status = "completed"
    if run.status == "completed" and run.completed_at is None:
        run.completed_at = iso()
    if run.status == "completed" and was != "completed":
        await echoes.check_run_completed(fake, repo, run)


async def list_check_runs(call: Call) -> Reply:
    """``checks/list-for-ref`` by ``check_name``, ``status``, ``app_id`` and ``filter``
    (``latest``, the default: the newest run of each name; ``all``), newest first, paged;
    ``total_count`` counts every match, not the page (BEHAVIOUR.md §9)."""
    unsupported(call, "checks/list-for-ref", ("check_name", "status", "filter", "app_id"))
    repo = call.repository
    sha = repo.resolve(call.params["ref"])
    if sha is None:
        raise GitHubError(422, f"No commit found for SHA: {call.params['ref']}")
    runs = [r for r in repo.check_runs.values() if r.head_sha == sha]
    if "check_name" in call.query:
        runs = [r for r in runs if r.name == call.query["check_name"]]
    if "status" in call.query:
        runs = [r for r in runs if r.status == call.query["status"]]
    if "app_id" in call.query:
        runs = [r for r in runs if str(call.world.app_id_of(r.app_slug)) == call.query["app_id"]]
    if call.query.get("filter", "latest") == "latest":
        latest = {r.name: r for r in sorted(runs, key=lambda r: r.id)}
        runs = list(latest.values())
    runs.sort(key=lambda r: -r.id)
    shown, link = paged(call, runs, f"commits/{call.params['ref']}/check-runs",
                        ("check_name", "status", "filter", "app_id"))
    rendered = [call.render.check_run(repo, r) for r in shown]
    return with_link(Reply(200, {"total_count": len(runs), "check_runs": rendered}), link)


async def create_status(call: Call) -> Reply:
    repo, body = call.repository, call.body
    sha = call.params["sha"]
    if sha not in repo.git.commits:
        raise GitHubError(422, f"No commit found for SHA: {sha}")
    status = CommitStatus(
        id=call.world.new_id(),
        sha=sha,
        state=body["state"],
        context=body.get("context", "default"),
        description=body.get("description"),
        target_url=body.get("target_url"),
        created_at=iso(),
    )
    repo.statuses.append(status)
    return Reply(201, call.render.status(repo, status))


async def list_statuses(call: Call) -> Reply:
    """``repos/list-commit-statuses-for-ref``: newest first, paged."""
    repo = call.repository
    sha = repo.resolve(call.params["ref"])
    statuses = [s for s in reversed(repo.statuses) if s.sha == sha]
    shown, link = paged(call, statuses, f"commits/{call.params['ref']}/statuses", ())
    return with_link(Reply(200, [call.render.status(repo, s) for s in shown]), link)


async def combined_status(call: Call) -> Reply:
    """``repos/get-combined-status-for-ref``: the newest status per context; ``failure`` if
    any failed or errored, ``pending`` if any is pending or there are none, else
    ``success``."""
    repo = call.repository
    sha = repo.resolve(call.params["ref"])
    if sha is None:
        raise not_found()
    latest: dict[str, CommitStatus] = {}
    for status in repo.statuses:
        if status.sha == sha:
            latest[status.context] = status
    states = {s.state for s in latest.values()}
    state = ("failure" if states & {"failure", "error"} else
             "pending" if not states or "pending" in states else "success")
    body = call.render.api.example("combined-commit-status")
    body.update(state=state, sha=sha, total_count=len(latest),
                statuses=[call.render.status_simple(repo, s) for s in latest.values()],
                repository=call.render.minimal_repository(repo),
                commit_url=f"{call.render.repo_url(repo)}/commits/{sha}",
                url=f"{call.render.repo_url(repo)}/commits/{sha}/status")
    return Reply(200, body)


async def get_workflow_run(call: Call) -> Reply:
    run = call.repository.workflow_runs.get(call.int_param("run_id"))
    if run is None:
        raise not_found()
    return Reply(200, call.render.workflow_run(call.repository, run))


async def rerun_workflow(call: Call) -> Reply:
    run = call.repository.workflow_runs.get(call.int_param("run_id"))
    if run is None:
        raise not_found()
    run.run_attempt += 1
    run.status, run.conclusion = "queued", None
    return Reply(201, {})


async def download_logs(call: Call) -> Reply:
    repo = call.repository
    run_id = call.int_param("run_id")
    if run_id not in repo.workflow_runs:
        raise not_found()
    # GitHub redirects to a short-lived archive URL; the fake serves it under /_fake/.
    location = f"{call.fake.url}/_fake/logs/{repo.full_name}/{run_id}?expires={int(time.time())}"
    return Reply(302, headers={"Location": location})


HANDLERS: dict[str, Handler] = {
    "meta/root": get_root,
    "repos/get": get_repository,
    "apps/get-authenticated": get_app,
    "apps/create-installation-access-token": create_access_token,
    "apps/get-repo-installation": get_repo_installation,
    "checks/create": create_check_run,
    "checks/update": update_check_run,
    "checks/list-for-ref": list_check_runs,
    "repos/create-commit-status": create_status,
    "repos/list-commit-statuses-for-ref": list_statuses,
    "repos/get-combined-status-for-ref": combined_status,
    "repos/get-collaborator-permission-level": get_permission_level,
    "actions/get-workflow-run": get_workflow_run,
    "actions/re-run-workflow": rerun_workflow,
    "actions/download-workflow-run-logs": download_logs,
}
