"""What the watch asks of GitHub: where a commit stands against the merge, and re-runs.

A failure during the watch counts only on the merge commit or a later commit of the default
branch, and only once a re-run confirms it. ``order`` answers the first from the compare API
(``repos/compare-commits``, ``GET /compare/{merge}...{sha}``): ``identical`` or ``ahead`` means
the commit is the merge or descends from it, so the merged change is in it; ``behind`` or
``diverged`` means it is older or beside it, and its failure says nothing about the change.
The failure itself says the commit is on the default branch (its suite's ``head_branch``).
Two commits stand in the same order for ever, so answers are kept per process.

``Rerun`` re-runs what failed, through the one way GitHub offers for it: a GitHub Actions
workflow run's failed jobs (``actions/re-run-workflow-failed-jobs``), found from the run itself
or from a job (an Actions job's id is its check run's, ``actions/get-job-for-workflow-run``),
so the jobs, suite and run of one red attempt ask for one re-run. Another App's check run
cannot be re-run by questbot: ``checks/rerequest-run`` answers 403 to anyone but the App that
made it. Then nothing is asked; the failure stays a suspect until that App runs the check
again on the same commit (a person's re-run), or the watch ends.
"""

from __future__ import annotations

from dataclasses import dataclass

import gidgethub
from cachetools import LRUCache

from bot.github.forge.refusals import is_permanent, refusals, status_of
from bot.github.forge.repository import Forge

ACTIONS = "github-actions"
"""The slug of the GitHub Actions App, whose suites are workflow runs."""
AT_OR_AFTER = frozenset({"identical", "ahead"})

_ORDER: LRUCache[tuple[str, str, str], str] = LRUCache(maxsize=4096)


async def order(forge: Forge, base: str, head: str) -> str:
    """``identical``, ``ahead`` (``head`` descends from ``base``), ``behind`` or ``diverged``."""
    if base == head:
        return "identical"
    key = (forge.repo.lower(), base, head)
    found = _ORDER.get(key)
    if found is None:
        with refusals(f"compare {base[:12]} with {head[:12]} in {forge.repo}",
                      "check both commits exist and the App has contents: read"):
            data = await forge.gh.getitem(f"{forge.base}/compare/{base}...{head}")
        found = _ORDER[key] = str(data.get("status") or "diverged")
    return found


async def at_or_after(forge: Forge, merge_sha: str, sha: str) -> bool:
    """``sha`` is the merge commit or a later one: the merged change is in it."""
    return await order(forge, merge_sha, sha) in AT_OR_AFTER


@dataclass(frozen=True, slots=True)
class WorkflowAttempt:
    """One attempt of an Actions workflow run: what a re-run of failed jobs starts again."""

    run_id: int
    attempt: int


class Rerun:
    """Re-running a failed check of one repository, named by the run that reported it."""

    def __init__(self, forge: Forge) -> None:
        self.forge = forge

    async def attempt_of(self, run: str, *, app: str | None = None) -> WorkflowAttempt | str:
        """The Actions workflow attempt to re-run for ``run`` (``workflow_run:<id>:<attempt>``
        or ``check_run:<id>``), or why there is none: another App's check, which questbot
        cannot re-run, or a check suite, re-run through its workflow run and its jobs, which
        report the same failure. ``app``: the slug of the App that made a check run, when
        its webhook said (``checks/get`` otherwise)."""
        kind, _, rest = run.partition(":")
        ident, _, more = rest.partition(":")
        if kind == "check_suite":
            return (f"{run} is re-run through its runs: questbot re-runs a suite's failed jobs "
                    "from their own reports")
        if not ident.isdigit() or kind not in ("workflow_run", "check_run"):
            return f"{run} names no run questbot knows how to re-run"
        if kind == "workflow_run":
            return WorkflowAttempt(int(ident), int(more) if more.isdigit() else 1)
        app = app or await self._app_of(f"check-runs/{ident}", f"check run {ident}")
        if app != ACTIONS:
            return (f"{run} is a check of the App {app or 'unknown'}: only that App can re-run "
                    "it, so questbot waits for its next result on the same commit")
        with refusals(f"read Actions job {ident} of {self.forge.repo}",
                      "give the App actions: read"):
            job = await self.forge.gh.getitem(f"{self.forge.base}/actions/jobs/{ident}")
        return WorkflowAttempt(int(job["run_id"]), int(job.get("run_attempt") or 1))

    async def _app_of(self, path: str, what: str) -> str:
        with refusals(f"read {what} of {self.forge.repo}", "give the App checks: read"):
            data = await self.forge.gh.getitem(f"{self.forge.base}/{path}")
        return str((data.get("app") or {}).get("slug") or "")

    async def failed_jobs(self, attempt: WorkflowAttempt) -> str:
        """``actions/re-run-workflow-failed-jobs``: ``asked``, or ``running`` when GitHub says
        the run is already running again (someone re-ran it first). A run GitHub will not
        re-run (too old, 50 attempts) is a ``PermanentError`` saying so."""
        url = f"{self.forge.base}/actions/runs/{attempt.run_id}/rerun-failed-jobs"
        try:
            await self.forge.gh.post(url, data={})
        except gidgethub.BadRequest as exc:
            if status_of(exc) == 403 and "already running" in str(exc).lower():
                return "running"
            if is_permanent(exc):
                with refusals(f"re-run the failed jobs of workflow run {attempt.run_id} in "
                              f"{self.forge.repo}", "re-run them from the Actions tab; the "
                              "watch goes on meanwhile"):
                    raise
            raise
        return "asked"
