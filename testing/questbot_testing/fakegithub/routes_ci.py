"""Handlers for reading check runs and Actions jobs, re-running failed jobs, comparing commits.

Re-runs follow ``BEHAVIOUR.md`` §10: a re-run keeps the run id and adds an attempt; a run that
is not completed answers 403 ``This workflow is already running``. The jobs of a new attempt are
queued until ``ci.script_rerun`` has said what they conclude, and then they finish at once and
GitHub's webhooks for them are sent. Compare follows GitHub's ``status``: ``identical``,
``ahead`` (head descends from base), ``behind`` or ``diverged``.
"""

from __future__ import annotations

from typing import Any

from questbot_testing.fakegithub import actions_logs, ci
from questbot_testing.fakegithub.calls import Call, GitHubError, Handler, Reply, not_found
from questbot_testing.fakegithub.state import Repository


def _runs(repo: Repository) -> list[ci.ActionsRun]:
    return [run for run in repo.workflow_runs.values() if isinstance(run, ci.ActionsRun)]


def _job(repo: Repository, job_id: int) -> tuple[ci.ActionsRun, ci.Job]:
    for run in _runs(repo):
        for job in run.jobs:
            if job.id == job_id:
                return run, job
    raise not_found()


async def get_check_run(call: Call) -> Reply:
    run = call.repository.check_runs.get(call.int_param("check_run_id"))
    if run is None:
        raise not_found()
    return Reply(200, call.render.check_run(call.repository, run))


async def get_job(call: Call) -> Reply:
    run, job = _job(call.repository, call.int_param("job_id"))
    return Reply(200, _job_json(call, run, job))


async def list_attempt_jobs(call: Call) -> Reply:
    """``GET .../runs/{run_id}/attempts/{attempt_number}/jobs``: that attempt's jobs."""
    run = call.repository.workflow_runs.get(call.int_param("run_id"))
    if not isinstance(run, ci.ActionsRun):
        raise not_found()
    jobs = run.attempt_jobs(call.int_param("attempt_number"))
    return Reply(200, {"total_count": len(jobs),
                       "jobs": [_job_json(call, run, job) for job in jobs]})


def _job_json(call: Call, run: ci.ActionsRun, job: ci.Job) -> dict[str, Any]:
    repo = call.repository
    check = repo.check_runs[job.id]
    out: dict[str, Any] = call.render.api.example("job")
    base = call.render.repo_url(repo)
    out.update(id=job.id, node_id=f"J_{job.id}", run_id=run.id, run_attempt=job.attempt,
               run_url=f"{base}/actions/runs/{run.id}", head_sha=run.head_sha,
               head_branch=run.head_branch, url=f"{base}/actions/jobs/{job.id}",
               html_url=f"https://github.com/{repo.full_name}/actions/runs/{run.id}/job/{job.id}",
               status=job.status, conclusion=job.conclusion, started_at=check.started_at,
               completed_at=check.completed_at, name=job.name, workflow_name=run.name,
               check_run_url=f"{base}/check-runs/{job.id}", steps=[],
               created_at=check.started_at)
    return out


async def rerun(call: Call, run: ci.ActionsRun, names: list[str]) -> Reply:
    if run.status != "completed":
        raise GitHubError(403, "This workflow is already running")
    if not names:
        raise GitHubError(403, "This workflow run cannot be retried")
    repo = call.repository
    ci.rerun_jobs(call.fake, repo, run, names)
    if run.reruns:
        outputs = run.rerun_outputs.pop(0) if run.rerun_outputs else {}
        ci.finish(call.fake, repo.full_name, run, run.reruns.pop(0), outputs)
        await ci.deliver(call.fake, ci.completed(call.fake, repo.full_name, run))
    return Reply(201, {})


async def rerun_failed_jobs(call: Call) -> Reply:
    run = call.repository.workflow_runs.get(call.int_param("run_id"))
    if not isinstance(run, ci.ActionsRun):
        raise not_found()
    failed = [job.name for job in run.latest().values() if job.conclusion in ci.FAILED]
    return await rerun(call, run, failed)


async def rerun_job(call: Call) -> Reply:
    run, job = _job(call.repository, call.int_param("job_id"))
    return await rerun(call, run, [job.name])


async def compare(call: Call) -> Reply:
    repo = call.repository
    base, head = repo.resolve(call.params["base"]), repo.resolve(call.params["head"])
    if base is None or head is None:
        raise not_found()
    git = repo.git
    if base == head:
        status = "identical"
    elif git.is_ancestor(base, head):
        status = "ahead"
    elif git.is_ancestor(head, base):
        status = "behind"
    else:
        status = "diverged"
    ahead, behind = _only_in(repo, head, base), _only_in(repo, base, head)
    out: dict[str, Any] = call.render.api.example("commit-comparison")
    spec = f"{call.params['base']}...{call.params['head']}"
    merge_base = git.merge_base(base, head) or base
    out.update(url=f"{call.render.repo_url(repo)}/compare/{spec}",
               html_url=f"https://github.com/{repo.full_name}/compare/{spec}",
               permalink_url=f"https://github.com/{repo.full_name}/compare/{base}...{head}",
               diff_url=f"https://github.com/{repo.full_name}/compare/{spec}.diff",
               patch_url=f"https://github.com/{repo.full_name}/compare/{spec}.patch",
               base_commit=call.render.commit(repo, base),
               merge_base_commit=call.render.commit(repo, merge_base), status=status,
               ahead_by=len(ahead), behind_by=len(behind), total_commits=len(ahead),
               commits=[call.render.commit(repo, sha) for sha in ahead[:250]], files=[])
    return Reply(200, out)


def _only_in(repo: Repository, tip: str, other: str) -> list[str]:
    """Commits reachable from ``tip`` and not from ``other``, oldest first."""
    def reach(start: str) -> list[str]:
        seen: list[str] = []
        todo = [start]
        while todo:
            sha = todo.pop()
            if sha in seen or sha not in repo.git.commits:
                continue
            seen.append(sha)
            todo.extend(repo.git.commits[sha].parents)
        return seen

    theirs = set(reach(other))
    return [sha for sha in reversed(reach(tip)) if sha not in theirs]


HANDLERS: dict[str, Handler] = {
    "checks/get": get_check_run,
    "actions/get-job-for-workflow-run": get_job,
    "actions/list-jobs-for-workflow-run-attempt": list_attempt_jobs,
    "actions/download-job-logs-for-workflow-run": actions_logs.download,
    "actions/re-run-workflow-failed-jobs": rerun_failed_jobs,
    "actions/re-run-job-for-workflow-run": rerun_job,
    "repos/compare-commits": compare,
}
"""What the watch reads and re-runs (``bot.github.forge.watch``), and the failing job's log
the agent reads (``bot.github.forge.logs``)."""
