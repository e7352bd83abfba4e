"""CI for the bug set: each check run for real, in questbot's sandbox, and reported to the fake
GitHub as a GitHub Actions run whose job printed what the check printed.

Why for real: a bug's failing check is the evidence questbot and its agent start from, and a
recorded log could drift from the code it claims to be about. So the check runs at the commit
it reports on, through ``python -m bot proof`` — questbot's own command for running a
repository's checks in the sandbox (a stable entry point; nothing of ``bot`` is imported) —
and its output becomes the job's log, with the scratch checkout's path written as the one an
Actions runner works in (``/home/runner/work/<name>/<name>``). Triage's re-run of the failed
job is scripted with what the bug's next CI attempt prints and concludes (``Bug.attempt``),
run the same way; an attempt that runs the very command of the one before on the same files
is not run twice: in the sandbox it can only print the same.
"""

from __future__ import annotations

import asyncio
import json
import re
import shlex
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from questbot_testing.bugs import Bug
from questbot_testing.fakegithub import ci

if TYPE_CHECKING:
    from questbot_testing.fakegithub import FakeGitHub

JOB = "tests"
"""The one job of each repository's CI workflow, and so the failing check's name."""
_SCRATCH = r"/[^\s'\"]*questbot-proof-[^/\s'\"]+/head/"


@dataclass(frozen=True)
class Job:
    """One run of a check: the repository's ``name``, its ``files`` and the ``command``."""

    name: str
    files: dict[str, str]
    command: str


@dataclass(frozen=True)
class CheckResult:
    command: str
    passed: bool
    output: str


async def run_checks(jobs: Sequence[Job]) -> list[CheckResult]:
    """Each job's command over its files in questbot's sandbox, as ``python -m bot proof``
    runs a repository's checks, and its output as an Actions runner would print it.

    One ``proof`` run takes them all, as one runner takes several jobs: each repository in a
    directory of its own, each command run there in a sandbox of its own (``sh -c 'cd …'``).
    Starting questbot's command line costs most of a second; the checks themselves, a tenth."""
    if not jobs:
        return []
    with tempfile.TemporaryDirectory(prefix="questbot-bug-ci-") as tmp:
        root = Path(tmp) / "runner"
        argv = [sys.executable, "-m", "bot", "proof", "--checkout", str(root), "--json"]
        for n, job in enumerate(jobs):
            for path, text in job.files.items():
                (root / _dir(n, job) / path).parent.mkdir(parents=True, exist_ok=True)
                (root / _dir(n, job) / path).write_text(text)
            argv += ["--command", shlex.join(["sh", "-c", f"cd {_dir(n, job)} && {job.command}"])]
        process = await asyncio.create_subprocess_exec(
            *argv, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
        out, err = await process.communicate()
    if process.returncode not in (0, 1):
        raise RuntimeError(f"the checks could not be run (exit {process.returncode}): "
                           f"{err.decode(errors='replace')[-2000:]}")
    logs = json.loads(out)["logs"]
    if len(logs) != len(jobs):
        raise RuntimeError(f"{len(jobs)} checks were asked for and {len(logs)} ran")
    results = []
    for n, (job, log) in enumerate(zip(jobs, logs, strict=True)):
        runner = f"/home/runner/work/{job.name}/{job.name}/"
        output = re.sub(_SCRATCH + re.escape(_dir(n, job)) + "/", runner, str(log["output_tail"]))
        results.append(CheckResult(job.command, log["exit_code"] == 0, output))
    return results


async def run_check(files: dict[str, str], command: str, *, name: str = "repo") -> CheckResult:
    """One check: ``run_checks`` of one job."""
    (result,) = await run_checks([Job(name, files, command)])
    return result


def _dir(n: int, job: Job) -> str:
    return f"{n:02d}-{job.name}"


def printed(result: CheckResult) -> str:
    """The job step's output: the command as the runner echoes it, then what it printed."""
    return f"{result.command}\n{result.output}"


def attempt_jobs(bug: Bug, files: dict[str, str]) -> list[Job]:
    """The bug's first CI attempt on ``files``, and the re-run's when it runs another
    command."""
    jobs = [Job(bug.name, files, bug.attempt(1))]
    if bug.attempt(2) != bug.attempt(1):
        jobs.append(Job(bug.name, files, bug.attempt(2)))
    return jobs


async def attempts(bugs: Sequence[Bug]) -> list[tuple[CheckResult, CheckResult]]:
    """Each bug's first CI attempt on its repository and the re-run's, all in one go."""
    jobs = [attempt_jobs(bug, bug.files()) for bug in bugs]
    results = iter(await run_checks([job for each in jobs for job in each]))
    out = []
    for each in jobs:
        first = next(results)
        out.append((first, next(results) if len(each) == 2 else first))
    return out


def report(fake: FakeGitHub, repo: str, sha: str, first: CheckResult,
           rerun: CheckResult | None = None) -> ci.ActionsRun:
    """The CI run of ``repo`` on ``sha``, completed as ``first`` concluded; a re-run, when
    questbot asks for one, concludes as ``rerun`` did. Deliver it with
    ``ci.deliver(fake, ci.completed(fake, repo, run))``."""
    run = ci.actions_run(fake, repo, sha, {JOB: _conclusion(first)})
    (job,) = run.jobs
    job.output = printed(first)
    if rerun is not None:
        ci.script_rerun(run, {JOB: _conclusion(rerun)}, {JOB: printed(rerun)})
    return run


def _conclusion(result: CheckResult) -> str:
    return "success" if result.passed else "failure"
