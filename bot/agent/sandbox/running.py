"""Running one command to its end: time limit, output limit, and nothing left behind.

The contract every caller relies on (proofs, reproductions, an agent's tool commands):

* commands are argv tuples, run without a shell; one that cannot be started records exit code
  127, one that exceeds its time limit is killed with everything it started and records 124
  (the shell and ``timeout(1)`` conventions), so a timeout can never pass;
* ``output_sha256`` is the SHA-256 of the complete combined stdout+stderr, hashed as it
  streams; only the last ``output_cap`` bytes are kept in memory, because that is where test
  runners print their summary and what a repair needs;
* when the command ends (or times out) whatever is left of its process group is killed, so a
  check cannot leave a daemon behind holding the output pipe open or running on. Under
  bubblewrap the group is bubblewrap itself: killing it ends the sandbox's PID namespace, and
  with it every process inside, whatever session or group they made for themselves.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import signal
import subprocess
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO

from pydantic import BaseModel, ConfigDict

EXIT_TIMED_OUT = 124
EXIT_NOT_STARTED = 127
DEFAULT_TIMEOUT_SECONDS = 600.0
DEFAULT_OUTPUT_CAP = 256 * 1024


class CommandResult(BaseModel):
    """How one command ended, and the tail of what it printed."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    exit_code: int
    timed_out: bool = False
    output_sha256: str
    output_tail: str
    truncated: bool = False
    sandboxed: bool = False
    """Whether it ran under bubblewrap (``False`` only when an operator opted out)."""


def not_started(argv0: str, why: str, *, sandboxed: bool) -> CommandResult:
    text = f"questbot: could not start {argv0!r}: {why}\n"
    return CommandResult(exit_code=EXIT_NOT_STARTED, sandboxed=sandboxed,
                         output_sha256=hashlib.sha256(text.encode()).hexdigest(),
                         output_tail=text)  # fmt: skip


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


def run_process(argv: Sequence[str], cwd: Path, *, env: Mapping[str, str],
                timeout_seconds: float, output_cap: int, sandboxed: bool,
                shown: str | None = None) -> CommandResult:
    """Run ``argv`` (already confined by the caller) to its end under the contract above;
    ``shown`` is the program named in a "could not start" message."""
    try:
        process = subprocess.Popen(  # noqa: S603 - an argv list, no shell
            list(argv), cwd=cwd, env=dict(env), stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
    except OSError as exc:
        return not_started(shown or argv[0], exc.strerror or str(exc), sandboxed=sandboxed)
    assert process.stdout is not None
    drain = _Drain(process.stdout, output_cap)
    timed_out = False
    try:
        exit_code = process.wait(timeout=timeout_seconds)
    except subprocess.TimeoutExpired:
        timed_out = True
        exit_code = EXIT_TIMED_OUT
    finally:
        kill_group(process.pid)
        process.wait()
        drain.thread.join()
        process.stdout.close()
    return CommandResult(
        exit_code=exit_code,
        timed_out=timed_out,
        output_sha256=drain.sha.hexdigest(),
        output_tail=bytes(drain.tail).decode("utf-8", errors="replace"),
        truncated=drain.total > len(drain.tail),
        sandboxed=sandboxed,
    )


def kill_group(pid: int) -> None:
    """SIGKILL the process group ``pid`` leads (a command started in a session of its own)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)
