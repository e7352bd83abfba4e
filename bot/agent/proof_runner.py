"""The proof runner: run a repository's own checks at a head, in a fresh worktree, and seal it.

This is an adapter (it runs processes), not part of the pure machine. Given a git repository,
a base and a head, it:

1. resolves both to full commit SHAs (``git rev-parse --verify <rev>^{commit}``);
2. copies both commits, their history and the tags on it into a clean repository of its own
   (``clean_copy``), and adds a detached ``git worktree`` of that copy for the head's checks
   (and, when there is a reproduction, one for the base and a second one for the head) under a
   new temporary directory, with hooks disabled;
3. runs the check commands at the head, in order, in one worktree, and the reproduction at the
   base and at the head, each in a worktree and ``HOME`` of its own;
4. removes the temporary directory, copy and worktrees with it, whatever happened;
5. returns a ``bot.core.proof.ProofBundle`` naming the quest, revision and risk it was given,
   with its canonical digest, plus a log of what each command printed.

Decisions where the seeds are silent:

* Every command runs in the sandbox (``bot.agent.sandbox``): the worktree is its only writable
  directory besides a scratch ``HOME``; the clean copy's git directory is visible read-only,
  so ``git`` works in a check and a check cannot rewrite what the worker's own git reads.
* A check never sees the git directory of the repository it was given. That may be an
  operator's clone (``python -m bot proof --checkout``) whose ``.git/config`` holds a credential
  in ``http.extraheader`` or a token in a remote's URL, whose reflogs name them, whose hooks
  and notes are the operator's; a worktree of it would show all of that to the check (its
  ``.git`` file names the repository's git directory, bound into the sandbox). The clean copy
  is fetched from it by git's own transport — objects only: a fresh ``config``, no remote, no
  reflog, no ``FETCH_HEAD`` naming the path — and holds what a check may need of git: the
  commits' history (as shallow as the source's) and the tags that point into it.
  ``bot.agent.sandbox.running`` holds the process contract: argv without a shell, exit 127
  for a command that could not start and 124 for one that ran out of time (so
  ``CheckRecord`` needs no extra field and a timeout can never pass), ``output_sha256`` over
  the complete output with only its tail kept, and nothing left running afterwards.
* What a command leaves behind reaches no other part of the proof. The checks share their
  worktree and ``HOME`` with each other, as the steps of one CI job do (``install`` then
  ``test`` may build on each other), but never with the reproduction: each run of it gets a
  fresh worktree of its commit and a fresh ``HOME``. Otherwise repository code in a check could
  rewrite the reproduction's test, or drop a ``usercustomize.py`` into ``HOME``'s user site,
  and the bundle would record a head exit code the head's commit never produced.
* Commands see the sandbox's minimal environment (``PATH``, ``LANG``, ``HOME``, ``TMPDIR``,
  ``GIT_TERMINAL_PROMPT=0``) plus what the caller passes: repository code must not inherit
  the App's own secrets from the worker's environment.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from bot.agent import sandbox
from bot.agent.errors import ProofRunError
from bot.agent.sandbox import DEFAULT_OUTPUT_CAP as DEFAULT_OUTPUT_CAP
from bot.agent.sandbox import DEFAULT_TIMEOUT_SECONDS as DEFAULT_TIMEOUT_SECONDS
from bot.agent.sandbox import EXIT_NOT_STARTED as EXIT_NOT_STARTED
from bot.agent.sandbox import EXIT_TIMED_OUT as EXIT_TIMED_OUT
from bot.agent.sandbox import CommandResult as CommandResult
from bot.core.proof import CheckRecord, ProofBundle, Reproduction, Risk


class CheckCommand(BaseModel):
    """A named command, as an argv list (never a shell string)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(min_length=1)
    argv: tuple[str, ...] = Field(min_length=1)


class CommandLog(BaseModel):
    """One command the proof ran, where (``head`` or ``base``), and its result."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    at: str
    argv: tuple[str, ...]
    result: CommandResult


class ProofRun(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    bundle: ProofBundle
    digest: str
    logs: tuple[CommandLog, ...]


def _git_executable() -> str:
    found = shutil.which("git")
    if found is None:
        raise ProofRunError("git is not on PATH; the proof runner needs it")
    return found


def _git(repo: Path, *args: str) -> str:
    command = [_git_executable(), "-c", "core.hooksPath=/dev/null", *args]
    try:
        completed = subprocess.run(  # noqa: S603 - fixed git argv, no shell
            command, cwd=repo, check=True, capture_output=True, text=True
        )
    except subprocess.CalledProcessError as exc:
        detail = (exc.stderr or "").strip()
        raise ProofRunError(f"git {' '.join(args)} failed in {repo}: {detail}") from exc
    return completed.stdout.strip()


def resolve_commit(repo: Path, rev: str) -> str:
    """The full SHA of ``rev`` in ``repo``; ``ProofRunError`` when it names no commit."""
    if rev.startswith("-"):
        raise ProofRunError(f"revision {rev!r} looks like an option; refusing it")
    return _git(repo, "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}")


def clean_copy(repo: Path, commits: Sequence[str], dest: Path) -> Path:
    """A new repository at ``dest`` holding ``commits`` of ``repo``, their history and the
    tags on it, and nothing else of ``repo`` (see the module docstring for why)."""
    dest.mkdir(parents=True)
    _git(dest, "init", "--quiet", "--template=")
    refspecs = [f"+{sha}:refs/questbot/proof/{n}" for n, sha in enumerate(dict.fromkeys(commits))]
    # --update-shallow: the worker's own repositories hold depth-1 fetches of GitHub's commits
    _git(dest, "-c", "core.logAllRefUpdates=false", "fetch", "--quiet", "--update-shallow",
         "--no-write-fetch-head", "--", str(repo), *refspecs)
    return dest


def run_command(
    argv: Sequence[str],
    cwd: Path,
    *,
    env: Mapping[str, str] | None = None,
    timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS,
    output_cap: int = DEFAULT_OUTPUT_CAP,
    home: Path | None = None,
    network: bool = False,
) -> CommandResult:
    """Run ``argv`` in ``cwd`` in the sandbox with a time limit, capturing combined output.

    ``cwd`` (and ``home``) are the only writable directories; the network is reachable only
    with ``network``. Raises ``SandboxUnavailable`` when nothing may run here."""
    return sandbox.run(argv, cwd=cwd, env=env, timeout_seconds=timeout_seconds,
                       output_cap=output_cap, home=home, network=network)


def run_proof(
    repo: Path | str,
    *,
    quest_id: str,
    revision: int,
    risk: Risk,
    base: str,
    head: str,
    checks: Sequence[CheckCommand],
    reproduction: CheckCommand | None = None,
    timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS,
    output_cap: int = DEFAULT_OUTPUT_CAP,
    env: Mapping[str, str] | None = None,
) -> ProofRun:
    """Run ``checks`` at ``head`` (and ``reproduction`` at base and head); seal the bundle."""
    source = Path(repo).resolve(strict=True)
    base_sha, head_sha = resolve_commit(source, base), resolve_commit(source, head)
    scratch = Path(tempfile.mkdtemp(prefix="questbot-proof-"))
    logs: list[CommandLog] = []

    def add_worktree(label: str, sha: str) -> Path:
        path = scratch / label
        _git(copy, "worktree", "add", "--detach", "--quiet", str(path), sha)
        return path

    def fresh_home(label: str) -> Path:
        path = scratch / label
        path.mkdir()
        return path

    def run(command: CheckCommand, at: str, where: Path, home: Path) -> int:
        result = run_command(
            command.argv,
            where,
            env=env,
            home=home,
            timeout_seconds=timeout_seconds,
            output_cap=output_cap,
        )
        logs.append(CommandLog(name=command.name, at=at, argv=command.argv, result=result))
        return result.exit_code

    try:
        copy = clean_copy(source, [head_sha, base_sha], scratch / "repository")
        head_tree, checks_home = add_worktree("head", head_sha), fresh_home("home")
        records = []
        for command in checks:
            run(command, "head", head_tree, checks_home)
            digest = logs[-1].result.output_sha256
            records.append(
                CheckRecord(
                    name=command.name,
                    command=command.argv,
                    exit_code=logs[-1].result.exit_code,
                    output_sha256=digest,
                )
            )
        repro: Reproduction | None = None
        if reproduction is not None:
            base_exit = run(reproduction, "base", add_worktree("base", base_sha),
                            fresh_home("home-base"))
            head_exit = run(reproduction, "head", add_worktree("head-repro", head_sha),
                            fresh_home("home-head"))
            repro = Reproduction(
                name=reproduction.name,
                command=reproduction.argv,
                base_exit_code=base_exit,
                head_exit_code=head_exit,
            )
    finally:
        shutil.rmtree(scratch, ignore_errors=True)  # the copy and its worktrees with it

    bundle = ProofBundle(
        quest_id=quest_id,
        revision=revision,
        risk=risk,
        base=base_sha,
        head=head_sha,
        checks=tuple(records),
        reproduction=repro,
    )
    return ProofRun(bundle=bundle, digest=bundle.digest(), logs=tuple(logs))
