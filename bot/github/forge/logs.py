"""The failing job's log, from GitHub Actions, for the agent to read.

A quest sensed from a failing check names the run that reported it (``SignalSensed.run``):
``check_run:<id>`` — for Actions a job's id is its check run's — or
``workflow_run:<id>:<attempt>``, whose attempt's jobs (``actions/list-jobs-for-workflow-run-
attempt``) name the failed one. The job's log is ``actions/download-job-logs-for-workflow-run``:
GitHub answers ``302`` with a link that expires after a minute, on another host; the HTTP
client follows it and, the origin being another, sends it no ``Authorization`` (aiohttp drops
the header on a redirect to another origin), so the installation token never leaves GitHub.

There may be no log to read, and then the agent works without one: another App's check (no
Actions job: ``404``), a log past the repository's retention or deleted (``410``), a suite,
which names no job. Each is ``None``, logged; only a fault GitHub may recover from (a 5xx, a
rate limit after its waits) is raised, so the effect is tried again.
"""

from __future__ import annotations

import logging

import gidgethub

from bot.github.forge.refusals import is_permanent, status_of
from bot.github.forge.repository import Forge
from bot.github.forge.watch import ACTIONS

log = logging.getLogger(__name__)

FAILED = ("failure", "timed_out")
GONE = 410
MAX_LOG_CHARS = 8 * 1024 * 1024
"""Of a job's log, at most its last 8 MiB of text are kept: the agent is shown the failing
step's tail (``bot.agent.ci_log``), and a runaway log must not fill the worker's memory."""


class JobLogs:
    """The Actions logs of one repository."""

    def __init__(self, forge: Forge) -> None:
        self.forge = forge

    async def failing_log(self, run: str, *, app: str | None = None) -> str | None:
        """The log of the failed job ``run`` names (see the module docs), or ``None``.
        ``app``: the App that made a check run, when its webhook said — another App's check
        has no Actions job, so nothing is asked (GitHub would answer 404)."""
        if run.startswith("check_run:") and app and app != ACTIONS:
            log.info("no log for %s of %s: a check of the App %s, not an Actions job", run,
                     self.forge.repo, app)
            return None
        try:
            job = await self._failed_job(run)
            if job is None:
                return None
            text = await self.forge.gh.getitem(f"{self.forge.base}/actions/jobs/{job}/logs")
        except gidgethub.HTTPException as exc:
            if not (is_permanent(exc) or status_of(exc) == GONE):
                raise
            log.info("no log for %s of %s: GitHub answered %s", run, self.forge.repo,
                     status_of(exc))
            return None
        if isinstance(text, bytes):
            text = text.decode(errors="replace")
        return text[-MAX_LOG_CHARS:] if isinstance(text, str) and text else None

    async def _failed_job(self, run: str) -> int | None:
        kind, _, rest = run.partition(":")
        ident, _, attempt = rest.partition(":")
        if not ident.isdigit():
            return None
        if kind == "check_run":
            return int(ident)
        if kind != "workflow_run":
            return None  # a suite names no job; its runs report the same failure
        data = await self.forge.gh.getitem(
            f"{self.forge.base}/actions/runs/{ident}/attempts/"
            f"{attempt if attempt.isdigit() else 1}/jobs")
        failed = [job for job in data.get("jobs") or () if job.get("conclusion") in FAILED]
        return int(failed[0]["id"]) if failed else None
