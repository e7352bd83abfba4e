"""GitHub Actions in the fake: a workflow run of matrix jobs on a commit, and the webhooks it
makes — a ``check_run`` per job, the ``check_suite``, the ``workflow_run``, and (for Apps that
subscribe) a ``workflow_job`` per job — shaped like the real examples GitHub publishes
(``questbot_testing.published``). What links them is what links them on GitHub: the check
suite (``check_run.check_suite.id``, ``check_suite.id``, ``workflow_run.check_suite_id``), the
head commit, and a job's id, which is its check run's.

The webhooks are built, not sent (``completed``), so a test can deliver them in any order or
at once (``deliver``). Re-runs (``actions/re-run-workflow-failed-jobs``,
``actions/re-run-job-for-workflow-run``, in ``routes_ci``) start a new attempt with new check
runs for the failed jobs, queued; ``script_rerun`` says what the next attempt's jobs conclude,
and then the re-run completes at once and its webhooks are sent, as GitHub would send them when
it finishes. Whether a new attempt gets a new check suite is not documented; the fake keeps the
suite unless the run says otherwise (``new_suite_per_attempt``), and the tests try both.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from questbot_testing.fakegithub.state import CheckRun, Repository, WorkflowRun, iso
from questbot_testing.fakegithub.webhooks import (
    Delivery,
    DeliveryResult,
    build_delivery,
    build_payload,
)

if TYPE_CHECKING:
    from questbot_testing.fakegithub.server import FakeGitHub

ACTIONS_SLUG = "github-actions"
ACTIONS_APP_ID = 15368
"""GitHub Actions' App on github.com: every Actions check run and suite names it."""
ACTIONS_SENDER = "github-actions[bot]"
FAILED = ("failure", "timed_out")


@dataclass
class Job:
    id: int
    """Also its check run's id, as on GitHub."""
    name: str
    attempt: int
    status: str = "completed"
    conclusion: str | None = None
    log: str | None = None
    """What the runner printed (``fakegithub.actions_logs``); ``None``: a log in the usual
    shape for its name and conclusion."""
    log_gone: bool = False
    """Past retention or deleted: ``.../logs`` answers 410."""
    output: str = ""
    """What the job's own step printed, when a test ran the check for real
    (``questbot_testing.bugs.ci``): its log is written around it (``actions_logs.job_log``)."""


@dataclass
class ActionsRun(WorkflowRun):
    """A workflow run with its jobs, in ``Repository.workflow_runs`` like any other run."""

    check_suite_id: int = 0
    suites: dict[int, int] = field(default_factory=dict)
    """Attempt → its check suite's id."""
    workflow_id: int = 0
    path: str = ".github/workflows/ci.yml"
    run_number: int = 1
    jobs: list[Job] = field(default_factory=list)
    """Every attempt's jobs, oldest first."""
    reruns: list[dict[str, str]] = field(default_factory=list)
    """What the next re-runs' jobs conclude (job name → conclusion), oldest first."""
    rerun_outputs: list[dict[str, str]] = field(default_factory=list)
    """What those re-runs' jobs print (job name → output), in step with ``reruns``."""
    new_suite_per_attempt: bool = False

    def attempt_jobs(self, attempt: int | None = None) -> list[Job]:
        wanted = self.run_attempt if attempt is None else attempt
        return [job for job in self.jobs if job.attempt == wanted]

    def latest(self) -> dict[str, Job]:
        """Each job's newest run, by name."""
        return {job.name: job for job in self.jobs}

    def suite(self, attempt: int | None = None) -> int:
        return self.suites.get(self.run_attempt if attempt is None else attempt,
                               self.check_suite_id)

    def conclude(self) -> None:
        jobs = list(self.latest().values())
        if any(job.status != "completed" for job in jobs):
            self.status, self.conclusion = "in_progress", None
        else:
            failed = any(job.conclusion in FAILED for job in jobs)
            self.status, self.conclusion = "completed", "failure" if failed else "success"


def actions_run(fake: FakeGitHub, full_name: str, sha: str, jobs: Mapping[str, str], *,
                workflow: str = "CI", branch: str | None = None,
                new_suite_per_attempt: bool = False) -> ActionsRun:
    """A completed run of ``workflow`` on ``sha`` whose jobs concluded as ``jobs`` says (name
    → ``success``/``failure``…), with a check run per job under one check suite."""
    repo = fake.repo(full_name)
    run = ActionsRun(fake.world.new_id(), workflow, sha, branch or repo.default_branch,
                     check_suite_id=fake.world.new_id(), workflow_id=fake.world.new_id(),
                     new_suite_per_attempt=new_suite_per_attempt)
    run.suites[1] = run.check_suite_id
    for name, conclusion in jobs.items():
        add_job(fake, repo, run, name, conclusion)
    run.conclude()
    repo.workflow_runs[run.id] = run
    return run


def add_job(fake: FakeGitHub, repo: Repository, run: ActionsRun, name: str,
            conclusion: str | None) -> Job:
    now = iso()
    status = "completed" if conclusion else "queued"
    check = CheckRun(fake.world.new_id(), run.head_sha, name, status, conclusion, "", now,
                     now if conclusion else None,
                     details_url=f"https://github.com/{repo.full_name}/actions/runs/{run.id}",
                     output={"title": f"{name}: {conclusion or 'queued'}", "summary": ""},
                     app_slug=ACTIONS_SLUG)
    repo.check_runs[check.id] = check
    job = Job(check.id, name, run.run_attempt, status, conclusion)
    run.jobs.append(job)
    return job


def finish(fake: FakeGitHub, full_name: str, run: ActionsRun,
           conclusions: Mapping[str, str], outputs: Mapping[str, str] | None = None) -> None:
    """Complete the queued jobs of the run's newest attempt as ``conclusions`` says, having
    printed ``outputs`` (job name → output; by default a line in the usual shape)."""
    repo = fake.repo(full_name)
    for job in run.attempt_jobs():
        if job.status != "completed" and job.name in conclusions:
            job.status, job.conclusion = "completed", conclusions[job.name]
            job.output = (outputs or {}).get(job.name, job.output)
            check = repo.check_runs[job.id]
            check.status, check.conclusion, check.completed_at = "completed", job.conclusion, iso()
    run.conclude()


def script_rerun(run: ActionsRun, conclusions: Mapping[str, str],
                 outputs: Mapping[str, str] | None = None) -> None:
    """What the jobs of the next re-run of ``run`` conclude (and print: ``outputs``); the
    re-run then finishes at once."""
    run.reruns.append(dict(conclusions))
    run.rerun_outputs.append(dict(outputs or {}))


def rerun_jobs(fake: FakeGitHub, repo: Repository, run: ActionsRun,
               names: Iterable[str]) -> list[Job]:
    """A new attempt of ``run`` re-running the jobs ``names``, queued (new check runs)."""
    run.run_attempt += 1
    if run.new_suite_per_attempt:
        run.suites[run.run_attempt] = fake.world.new_id()
    jobs = [add_job(fake, repo, run, name, None) for name in names]
    run.conclude()
    return jobs


# -- webhooks ------------------------------------------------------------------------------


def _build(fake: FakeGitHub, repo: Repository, event: str, example: str,
           overrides: dict[str, Any]) -> Delivery:
    """``event`` as GitHub would deliver it to the App for ``repo``, built and signed."""
    payload = build_payload(event, example, overrides, installation_id=repo.installation_id,
                            user=ACTIONS_SENDER, user_type="Bot")
    payload["repository"] = fake._webhook_repo(repo)
    return build_delivery(event, payload, fake.webhook_secret, target_id=fake.world.app_id)


def _app() -> dict[str, Any]:
    return {"id": ACTIONS_APP_ID, "slug": ACTIONS_SLUG, "name": "GitHub Actions",
            "node_id": "MDM6QXBwMTUzNjg="}


def _suite(run: ActionsRun, attempt: int) -> dict[str, Any]:
    return {"id": run.suite(attempt), "node_id": f"CS_{run.suite(attempt)}",
            "head_branch": run.head_branch, "head_sha": run.head_sha, "app": _app(),
            "url": f"https://api.github.com/check-suites/{run.suite(attempt)}",
            "pull_requests": []}


def check_run_webhook(fake: FakeGitHub, repo: Repository, run: ActionsRun, job: Job) -> Delivery:
    check = repo.check_runs[job.id]
    return _build(fake, repo, "check_run", "completed", {"check_run": {
        "id": job.id, "node_id": f"CR_{job.id}", "name": job.name, "head_sha": run.head_sha,
        "external_id": "", "status": job.status, "conclusion": job.conclusion,
        "started_at": check.started_at, "completed_at": check.completed_at,
        "html_url": f"https://github.com/{repo.full_name}/actions/runs/{run.id}/job/{job.id}",
        "url": f"https://api.github.com/repos/{repo.full_name}/check-runs/{job.id}",
        "details_url": check.details_url, "app": _app(), "pull_requests": [],
        "output": {"title": check.output.get("title"), "summary": "", "text": None},
        "check_suite": {**_suite(run, job.attempt), "status": run.status,
                        "conclusion": run.conclusion}}})


def check_suite_webhook(fake: FakeGitHub, repo: Repository, run: ActionsRun,
                        attempt: int) -> Delivery:
    return _build(fake, repo, "check_suite", "completed", {"check_suite": {
        **_suite(run, attempt), "status": "completed", "conclusion": run.conclusion,
        "latest_check_runs_count": len(run.latest()),
        "before": run.head_sha, "after": run.head_sha,
        "check_runs_url": f"https://api.github.com/repos/{repo.full_name}/check-suites/"
                          f"{run.suite(attempt)}/check-runs"}})


def workflow_run_webhook(fake: FakeGitHub, repo: Repository, run: ActionsRun,
                         attempt: int) -> Delivery:
    url = f"https://api.github.com/repos/{repo.full_name}/actions/runs/{run.id}"
    return _build(fake, repo, "workflow_run", "completed", {"workflow": {
        "id": run.workflow_id, "name": run.name, "path": run.path}, "workflow_run": {
        "id": run.id, "name": run.name, "node_id": f"WR_{run.id}", "head_sha": run.head_sha,
        "head_branch": run.head_branch, "check_suite_id": run.suite(attempt),
        "check_suite_node_id": f"CS_{run.suite(attempt)}", "run_attempt": attempt,
        "run_number": run.run_number, "workflow_id": run.workflow_id, "path": run.path,
        "status": "completed", "conclusion": run.conclusion, "event": "push",
        "html_url": f"https://github.com/{repo.full_name}/actions/runs/{run.id}", "url": url,
        "jobs_url": f"{url}/jobs", "logs_url": f"{url}/logs", "rerun_url": f"{url}/rerun",
        "check_suite_url": f"https://api.github.com/repos/{repo.full_name}/check-suites/"
                           f"{run.suite(attempt)}",
        "previous_attempt_url": f"{url}/attempts/{attempt - 1}" if attempt > 1 else None,
        "pull_requests": [], "head_commit": {"id": run.head_sha}}})


def workflow_job_webhook(fake: FakeGitHub, repo: Repository, run: ActionsRun,
                         job: Job) -> Delivery:
    return _build(fake, repo, "workflow_job", "completed.failure.with-organization.payload.json",
                  {"workflow_job": {
                      "id": job.id, "run_id": run.id, "run_attempt": job.attempt,
                      "name": job.name, "workflow_name": run.name, "head_sha": run.head_sha,
                      "head_branch": run.head_branch, "status": job.status,
                      "conclusion": job.conclusion,
                      "run_url": f"https://api.github.com/repos/{repo.full_name}/actions/runs/"
                                 f"{run.id}",
                      "check_run_url": f"https://api.github.com/repos/{repo.full_name}/"
                                       f"check-runs/{job.id}"}})


def completed(fake: FakeGitHub, full_name: str, run: ActionsRun, *, attempt: int | None = None,
              workflow_job: bool = False) -> list[Delivery]:
    """The webhooks GitHub sends when an attempt of ``run`` completes: a ``check_run`` per
    job of that attempt (and a ``workflow_job``, for Apps subscribed to it), the
    ``check_suite`` and the ``workflow_run`` — in that order, which tests may change."""
    repo = fake.repo(full_name)
    attempt = run.run_attempt if attempt is None else attempt
    jobs = run.attempt_jobs(attempt)
    out = [check_run_webhook(fake, repo, run, job) for job in jobs]
    if workflow_job:
        out += [workflow_job_webhook(fake, repo, run, job) for job in jobs]
    return [*out, check_suite_webhook(fake, repo, run, attempt),
            workflow_run_webhook(fake, repo, run, attempt)]


async def deliver(fake: FakeGitHub, deliveries: Iterable[Delivery]) -> list[DeliveryResult]:
    """Send ``deliveries`` in the order given, as GitHub's Hookshot does."""
    return [await fake._send(delivery) for delivery in deliveries]
