"""Running git as a subprocess, the same careful way for the agent's local work and the git
transport to GitHub.

Three things every git command here shares:

* **A bare environment.** git sees ``PATH``, ``LANG`` and what the caller adds — never the
  worker's environment (the App's private key, ``REDIS_URL``), never the operator's git
  configuration (``GIT_CONFIG_NOSYSTEM``, ``GIT_CONFIG_GLOBAL=/dev/null``) and never a
  ``GIT_TRACE``/``GIT_CURL_VERBOSE`` that would print an ``Authorization`` header.
* **Safe configuration** on the command line: no hooks (a checkout's code never runs through
  git), no signing, no line-ending rewrites, no credential helper of the machine's, no
  prompts (``GIT_TERMINAL_PROMPT=0``), git's protocol version 2.
* **Secrets redacted.** A caller names the secrets a command carries (``secrets``); they are
  cut out of its output before anyone can log it.

``run_git`` reports what happened (``GitRun``) and raises nothing for a failing command: the
workspace turns a failure into its own error, the transport tells a network fault (retry) from
a refusal (do not).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

GIT_TIMEOUT_SECONDS = 300.0
"""No git command of questbot's takes minutes; one that does is stuck, not slow."""
SAFE_CONFIG = ("-c", "core.hooksPath=/dev/null", "-c", "commit.gpgsign=false",
               "-c", "core.autocrlf=false", "-c", "init.defaultBranch=main",
               "-c", "credential.helper=", "-c", "protocol.version=2",
               "-c", "core.fsmonitor=false")  # fmt: skip
REDACTED = "***"


@dataclass(frozen=True, slots=True)
class GitRun:
    """One git command's end: its exit code (``None``: killed after the timeout), stdout and
    stderr, secrets cut out."""

    code: int | None
    out: bytes
    err: str

    @property
    def ok(self) -> bool:
        return self.code == 0

    @property
    def text(self) -> str:
        return self.out.decode(errors="replace").strip()


def git_environment(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment of a git command: the bare minimum, plus ``extra``."""
    env = {"PATH": os.environ.get("PATH", "/usr/local/bin:/usr/bin:/bin"),
           "LANG": "C.UTF-8", "GIT_TERMINAL_PROMPT": "0", "GIT_CONFIG_NOSYSTEM": "1",
           "GIT_CONFIG_GLOBAL": os.devnull, "GIT_ASKPASS": "/bin/false"}  # fmt: skip
    env.update(extra or {})
    return env


def redact(text: str, secrets: Iterable[str]) -> str:
    for secret in secrets:
        if secret:
            text = text.replace(secret, REDACTED)
    return text


async def run_git(cwd: Path, *args: str, stdin: bytes | None = None,
                  env: Mapping[str, str] | None = None, secrets: Iterable[str] = (),
                  timeout: float = GIT_TIMEOUT_SECONDS) -> GitRun:
    """Run ``git <SAFE_CONFIG> <args>`` in ``cwd`` without blocking the event loop."""
    hidden = tuple(secrets)
    process = await asyncio.create_subprocess_exec(
        "git", *SAFE_CONFIG, *args, cwd=cwd, env=git_environment(env),
        stdin=asyncio.subprocess.PIPE if stdin is not None else asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    try:
        out, err = await asyncio.wait_for(process.communicate(stdin), timeout)
    except TimeoutError:
        with contextlib.suppress(ProcessLookupError):
            process.kill()
        await process.wait()
        return GitRun(None, b"", f"killed after {timeout:g} s")
    return GitRun(process.returncode, out,
                  redact(err.decode(errors="replace").strip(), hidden))
