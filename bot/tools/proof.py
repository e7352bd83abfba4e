"""A repository's checks, run in the sandbox as a quest's proof runs them: ``python -m bot proof``.

What a maintainer (or a test) runs to see what questbot's proof would say about a checkout,
with nothing of GitHub involved: the same ``bot.agent.proof_runner.run_proof`` — a fresh
worktree of the commit, each check confined by ``bot.agent.sandbox`` — and the same bundle.

* The checkout is a git repository (the proof runs at its ``HEAD``, or ``--head``; changes not
  committed are not part of it, as they would not be part of a push), or a plain directory,
  whose files are committed into a scratch repository first.
* The checks are the ``--command`` options, each split as a POSIX shell would split it
  (``shlex``) into an argv that runs without a shell; without any, the ``proof.commands`` of
  the ``.github/questbot.yml`` at that commit, as a quest would use them.
* ``--reproduction`` with ``--base`` also runs a reproduction at the base and at the head; the
  proof passes only if it fails on the base and passes at the head.

Exit status: 0 when every check passed, 1 when one failed (a command that could not start
failed with 127, one that ran out of time with 124), 2 when the checks could not be run at
all (no sandbox here, not a repository, no checks, a malformed settings file).
"""

from __future__ import annotations

import shlex
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bot.agent.proof_runner import CheckCommand, ProofRun, run_proof
from bot.core.proof import Risk
from bot.errors import QuestbotError, Refused
from bot.settings.repository.schema import parse_settings

SETTINGS_PATH = ".github/questbot.yml"
TAIL_LINES = 15


class ProofSetupError(Refused):
    """The checks cannot be run as asked (no such directory, no checks, a bad command)."""


@dataclass(frozen=True, slots=True)
class LocalProof:
    """What ``prove_checkout`` ran, and on what."""

    checkout: Path
    run: ProofRun
    sandboxed: bool


def _git(cwd: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    git = shutil.which("git")
    if git is None:
        raise ProofSetupError("git is not on PATH; the proof runner needs it")
    return subprocess.run(  # noqa: S603 - fixed git argv, no shell
        [git, "-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false",
         "-c", "user.name=questbot", "-c", "user.email=questbot@users.noreply.github.com",
         "-c", "commit.gpgsign=false", "-c", "init.defaultBranch=main", *args],
        cwd=cwd, capture_output=True, text=True, check=check)  # fmt: skip


def parse_commands(commands: Sequence[str]) -> list[CheckCommand]:
    """``--command`` texts as argv lists (``shlex``); never handed to a shell."""
    checks = []
    for text in commands:
        try:
            argv = shlex.split(text)
        except ValueError as exc:
            raise ProofSetupError(f"--command {text!r} cannot be split into arguments: "
                                  f"{exc}") from None
        if not argv:
            raise ProofSetupError("--command '' names no program; give one, such as "
                                  "--command 'python -m pytest -q'")
        checks.append(CheckCommand(name=" ".join(argv), argv=tuple(argv)))
    return checks


def _repository(checkout: Path, scratch: Path) -> Path:
    """``checkout`` itself when it is a git work tree's top, else a one-commit copy of it."""
    inside = _git(checkout, "rev-parse", "--show-toplevel", check=False)
    if inside.returncode == 0 and Path(inside.stdout.strip()).resolve() == checkout:
        return checkout
    copy = scratch / "repo"
    shutil.copytree(checkout, copy, symlinks=True, ignore=shutil.ignore_patterns(".git"))
    _git(copy, "init", "-q")
    _git(copy, "add", "-A")
    _git(copy, "commit", "-q", "--allow-empty", "--no-verify", "-m", f"files of {checkout}")
    return copy


def _configured(repo: Path, head: str) -> list[CheckCommand]:
    shown = _git(repo, "show", f"{head}:{SETTINGS_PATH}", check=False)
    if shown.returncode != 0:
        return []
    try:
        settings = parse_settings(shown.stdout)
    except QuestbotError as exc:
        raise ProofSetupError(f"{SETTINGS_PATH} at {head}: {exc}") from None
    return [CheckCommand(name=" ".join(argv), argv=argv) for argv in settings.proof.commands]


def prove_checkout(checkout: Path, *, commands: Sequence[str] = (), head: str = "HEAD",
                   base: str | None = None, reproduction: str | None = None,
                   timeout_seconds: float = 600.0) -> LocalProof:
    """Run the checks of ``checkout`` at ``head`` in the sandbox; the proof's bundle and logs.

    Raises ``ProofSetupError``, ``ProofRunError`` or ``SandboxUnavailable`` when they could not
    be run."""
    if not checkout.is_dir():
        raise ProofSetupError(f"{checkout} is not a directory; give --checkout a repository's "
                              "working tree")
    checkout = checkout.resolve()
    repro = None
    if reproduction is not None:
        if base is None:
            raise ProofSetupError("--reproduction needs --base: the commit it must fail on")
        repro = parse_commands([reproduction])[0]
    with tempfile.TemporaryDirectory(prefix="questbot-local-proof-") as tmp:
        repo = _repository(checkout, Path(tmp))
        checks = parse_commands(commands) if commands else _configured(repo, head)
        if not checks:
            raise ProofSetupError(f"no checks to run: pass --command, or list them under "
                                  f"proof.commands in {SETTINGS_PATH}")
        run = run_proof(repo, quest_id="local", revision=1, risk=Risk.LOW, base=base or head,
                        head=head, checks=checks, reproduction=repro,
                        timeout_seconds=timeout_seconds)
    sandboxed = all(log.result.sandboxed for log in run.logs)
    return LocalProof(checkout=checkout, run=run, sandboxed=sandboxed)


def passed(proof: LocalProof) -> bool:
    return proof.run.bundle.all_passed


def proof_json(proof: LocalProof) -> dict[str, Any]:
    return {
        "checkout": str(proof.checkout), "passed": passed(proof), "sandboxed": proof.sandboxed,
        "digest": proof.run.digest, "bundle": proof.run.bundle.as_json(),
        "logs": [{"name": log.name, "at": log.at, "argv": list(log.argv),
                  **log.result.model_dump(mode="json")} for log in proof.run.logs],
    }  # fmt: skip


def proof_text(proof: LocalProof) -> str:
    bundle = proof.run.bundle
    confined = "in the sandbox" if proof.sandboxed else "UNCONFINED (QUESTBOT_SANDBOX=unsafe-off)"
    lines = [f"proof of {proof.checkout} at {bundle.head[:12]}, {confined}:"]
    for log in proof.run.logs:
        ok = log.result.exit_code == 0 if log.at == "head" else log.result.exit_code != 0
        verdict = "pass" if ok else "FAIL"
        why = " (timed out)" if log.result.timed_out else ""
        lines.append(f"  {verdict}  {log.name} at {log.at}: exit {log.result.exit_code}{why}")
        if not ok:
            tail = log.result.output_tail.rstrip().splitlines()[-TAIL_LINES:]
            lines += [f"        | {line}" for line in tail]
    if bundle.reproduction is not None:
        state = "confirmed" if bundle.reproduction.confirmed else "NOT confirmed"
        lines.append(f"  reproduction {bundle.reproduction.name!r}: {state} (exit "
                     f"{bundle.reproduction.base_exit_code} on the base, "
                     f"{bundle.reproduction.head_exit_code} at the head)")
    lines.append(f"{'passed' if passed(proof) else 'FAILED'}; bundle digest {proof.run.digest}")
    return "\n".join(lines)
