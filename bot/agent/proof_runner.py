"""The proof runner: run a repository's own checks at a head, in a fresh worktree, and seal it.

This is an adapter (it runs processes), not part of the pure machine. Given a git repository,
a base and a head, it:

1. resolves both to full commit SHAs (``git rev-parse --verify <rev>^{commit}``);
2. adds a detached ``git worktree`` for the head (and, when there is a reproduction, one for
   the base) under a new temporary directory, with hooks disabled;
3. runs each check command at the head, and the reproduction at the base and at the head;
4. removes the worktrees and the temporary directory, whatever happened;
5. returns a ``bot.core.proof.ProofBundle`` naming the quest, revision and risk it was given,
   with its canonical digest, plus a log of what each command printed.

Decisions where the seeds are silent:

* Commands are argv tuples, run without a shell. A command that cannot be started records
  exit code 127; one that exceeds its time limit is killed with its whole process group and
  records exit code 124 (the shell and ``timeout(1)`` conventions), so ``CheckRecord`` needs
  no extra field and a timeout can never pass.
* ``output_sha256`` is the SHA-256 of the command's complete combined stdout+stderr, hashed
  as it streams; only the last ``output_cap`` bytes are kept in memory (and in the log),
  because that is where test runners print their summary and what a repair needs.
* When a command ends (or times out) whatever is left of its process group is killed, so a
  check cannot leave a daemon behind holding the output pipe open or running on.
* Commands see a minimal environment (``PATH``, ``LANG``, ``HOME`` set to a scratch directory,
  ``GIT_TERMINAL_PROMPT=0``) plus what the caller passes: repository code must not inherit the
  App's own secrets from the worker's environment.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import signal
import subprocess
import tempfile
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO

from pydantic import BaseModel, ConfigDict, Field

from bot.agent.errors import ProofRunError
from bot.core.proof import CheckRecord, ProofBundle, Reproduction, Risk

EXIT_TIMED_OUT = 124
EXIT_NOT_STARTED = 127
DEFAULT_TIMEOUT_SECONDS = 600.0
DEFAULT_OUTPUT_CAP = 256 * 1024


class CheckCommand(BaseModel):
    """A named command, as an argv list (never a shell string)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(min_length=1)
    argv: tuple[str, ...] = Field(min_length=1)


class CommandResult(BaseModel):
    """How one command ended, and the tail of what it printed."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    exit_code: int
    timed_out: bool = False
    output_sha256: str
    output_tail: str
    truncated: bool = False


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


class _Drain:
    """Reads a pipe to the end: hashes everything, keeps only the last ``cap`` bytes."""

    def __init__(self, stream: IO[bytes], cap: int) -> None:
        self._stream, self._cap = stream, cap
        self.sha = hashlib.sha256()
        self.tail = bytearray()
        self.total = 0
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        for chunk in iter(lambda: self._stream.read(65536), b""):
            self.sha.update(chunk)
            self.total += len(chunk)
            self.tail += chunk
            if len(self.tail) > self._cap:
                del self.tail[: len(self.tail) - self._cap]


def run_command(
    argv: Sequence[str],
    cwd: Path,
    *,
    env: Mapping[str, str],
    timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS,
    output_cap: int = DEFAULT_OUTPUT_CAP,
) -> CommandResult:
    """Run ``argv`` in ``cwd`` with a time limit, capturing combined output."""
    try:
        process = subprocess.Popen(  # noqa: S603 - argv list from repository config, no shell
            list(argv),
            cwd=cwd,
            env=dict(env),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    except OSError as exc:
        text = f"questbot: could not start {argv[0]!r}: {exc.strerror or exc}\n"
        return CommandResult(
            exit_code=EXIT_NOT_STARTED,
            output_sha256=hashlib.sha256(text.encode()).hexdigest(),
            output_tail=text,
        )
    assert process.stdout is not None
    drain = _Drain(process.stdout, output_cap)
    timed_out = False
    try:
        exit_code = process.wait(timeout=timeout_seconds)
    except subprocess.TimeoutExpired:
        timed_out = True
        exit_code = EXIT_TIMED_OUT
    finally:
        # The command ran in its own session: kill whatever of its group is left (a timed-out
        # command, or a daemon a finished one left behind holding the pipe open).
        _kill_group(process.pid)
        process.wait()
        drain.thread.join()
        process.stdout.close()
    return CommandResult(
        exit_code=exit_code,
        timed_out=timed_out,
        output_sha256=drain.sha.hexdigest(),
        output_tail=bytes(drain.tail).decode("utf-8", errors="replace"),
        truncated=drain.total > len(drain.tail),
    )


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pid, signal.SIGKILL)


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
    repo = Path(repo).resolve(strict=True)
    base_sha, head_sha = resolve_commit(repo, base), resolve_commit(repo, head)
    scratch = Path(tempfile.mkdtemp(prefix="questbot-proof-"))
    worktrees: list[Path] = []
    logs: list[CommandLog] = []

    def add_worktree(label: str, sha: str) -> Path:
        path = scratch / label
        _git(repo, "worktree", "add", "--detach", "--quiet", str(path), sha)
        worktrees.append(path)
        return path

    def run(command: CheckCommand, at: str, where: Path, command_env: Mapping[str, str]) -> int:
        result = run_command(
            command.argv,
            where,
            env=command_env,
            timeout_seconds=timeout_seconds,
            output_cap=output_cap,
        )
        logs.append(CommandLog(name=command.name, at=at, argv=command.argv, result=result))
        return result.exit_code

    try:
        home = scratch / "home"
        home.mkdir()
        command_env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "LANG": "C.UTF-8",
            "HOME": str(home),
            "GIT_TERMINAL_PROMPT": "0",
            **(env or {}),
        }
        head_tree = add_worktree("head", head_sha)
        records = []
        for command in checks:
            run(command, "head", head_tree, command_env)
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
            base_tree = add_worktree("base", base_sha)
            base_exit = run(reproduction, "base", base_tree, command_env)
            head_exit = run(reproduction, "head", head_tree, command_env)
            repro = Reproduction(
                name=reproduction.name,
                command=reproduction.argv,
                base_exit_code=base_exit,
                head_exit_code=head_exit,
            )
    finally:
        _cleanup(repo, scratch, worktrees)

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


def _cleanup(repo: Path, scratch: Path, worktrees: list[Path]) -> None:
    """Remove our worktrees and the scratch directory; never leave a registered worktree."""
    for path in worktrees:
        try:
            _git(repo, "worktree", "remove", "--force", "--force", str(path))
        except ProofRunError:
            shutil.rmtree(path, ignore_errors=True)
    shutil.rmtree(scratch, ignore_errors=True)
    # never mask the error that brought us here; a later prune tidies up
    with contextlib.suppress(ProofRunError):
        _git(repo, "worktree", "prune")
