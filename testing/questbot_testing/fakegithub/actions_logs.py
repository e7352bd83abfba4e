"""Actions logs in the fake, as GitHub serves them: a job's, and a workflow run's archive.

``GET /repos/{owner}/{repo}/actions/jobs/{job_id}/logs``
(``actions/download-job-logs-for-workflow-run``) answers ``302`` with a ``Location`` to a
plain-text file that "expires after 1 minute" (the REST description; BEHAVIOUR.md §10). The
link is on another host (``pipelines.actions.githubusercontent.com`` in the description's
example), so an HTTP client following it drops the ``Authorization`` header, and the storage
behind it refuses a request that carries one; the fake serves the file on a different origin
(``localhost`` rather than ``127.0.0.1``) and refuses ``Authorization`` there the same way.

A job the repository has no record of is ``404``, as every unknown id is. A job whose log is
gone — past the repository's retention (90 days by default) or deleted — is ``410`` here:
the description documents only the ``302``, and GitHub answers a log it no longer has with
an error rather than an empty file (``Job.log_gone``). A link asked for more than a minute
after it was made is refused ``403``, as the expired signed link is.

A job's log is what the runner printed, each line prefixed with its timestamp: every step
opens with ``##[group]Run <command>``, its header closes with ``##[endgroup]``, its output
follows, and a failing step ends with ``##[error]Process completed with exit code N.``
(``job_log`` writes one in that shape when a test gives none).

A run's logs (``actions/download-workflow-run-logs``, in ``routes_checks``) redirect to a zip
archive under ``RUN_PREFIX``: ``WorkflowRun.logs``, an empty archive unless a test set one.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING
from urllib.parse import quote

from aiohttp import web

from questbot_testing.fakegithub import ci
from questbot_testing.fakegithub.calls import Call, GitHubError, Reply, not_found

if TYPE_CHECKING:
    from questbot_testing.fakegithub.server import FakeGitHub

LINK_SECONDS = 60
PREFIX = "/_fake/job-logs/"
RUN_PREFIX = "/_fake/logs/"
STAMP = "2026-03-01T00:00:{:02d}.0000000Z "


def job_log(job: ci.Job, output: str = "") -> str:
    """A runner's log for ``job``: set-up and checkout steps, then its own step, which fails
    unless the job succeeded."""
    lines = ["##[group]Runner Image", "Image: ubuntu-24.04", "##[endgroup]",
             "##[group]Run actions/checkout@v4", "with:", "  fetch-depth: 1", "##[endgroup]",
             "Syncing repository", f"##[group]Run {job.name}", f"{job.name}",
             "shell: /usr/bin/bash -e {0}", "##[endgroup]",
             *(output or f"{job.name}: {job.conclusion}").splitlines()]
    if job.conclusion in ci.FAILED:
        lines.append("##[error]Process completed with exit code 1.")
    lines += ["Post job cleanup.", "Cleaning up orphan processes"]
    return "".join(STAMP.format(i % 60) + line + "\n" for i, line in enumerate(lines))


def _other_origin(url: str) -> str:
    """The fake's own address under another name: another origin, the same server."""
    if "://127.0.0.1:" in url:
        return url.replace("://127.0.0.1:", "://localhost:")
    return url.replace("://localhost:", "://127.0.0.1:")


async def download(call: Call) -> Reply:
    repo = call.repository
    job_id = call.int_param("job_id")
    job = next((j for run in repo.workflow_runs.values() if isinstance(run, ci.ActionsRun)
                for j in run.jobs if j.id == job_id), None)
    if job is None:
        raise not_found()
    if job.log_gone:
        raise GitHubError(410, "Gone")
    host = _other_origin(call.fake.url)
    location = (f"{host}{PREFIX}{quote(repo.full_name)}/{job_id}"
                f"?urlExpires={int(time.time()) + LINK_SECONDS}")
    return Reply(302, headers={"Location": location})


def serve(fake: FakeGitHub, request: web.Request, raw_path: str) -> web.Response:
    """The signed link's answer: the log as plain text, or the storage's refusal."""
    if "Authorization" in request.headers:
        return web.Response(status=403, text="Server failed to authenticate the request. "
                            "Only one auth mechanism allowed.")
    if int(request.query.get("urlExpires", "0")) < time.time():
        return web.Response(status=403, text="Signature not valid in the specified time frame")
    owner, name, job_id = raw_path.removeprefix(PREFIX).split("/")
    repo = fake.world.repository(f"{owner}/{name}")
    job = next((j for run in (repo.workflow_runs.values() if repo else ())
                if isinstance(run, ci.ActionsRun) for j in run.jobs if j.id == int(job_id)),
               None)
    if job is None:
        return web.Response(status=404, text="The specified blob does not exist.")
    return web.Response(text=job.log if job.log is not None else job_log(job, job.output),
                        content_type="text/plain")


def serve_run_logs(fake: FakeGitHub, raw_path: str) -> web.Response:
    owner, repo, run_id = raw_path.removeprefix(RUN_PREFIX).split("/")
    found = fake.world.repository(f"{owner}/{repo}")
    run = found.workflow_runs.get(int(run_id)) if found else None
    return web.Response(body=run.logs if run else b"", content_type="application/zip")
