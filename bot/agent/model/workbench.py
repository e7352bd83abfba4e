"""The tools a model works with: the quest's checkout, its failing log, and commands.

Every path a model names is judged as a claim's evidence is (``CheckoutView.resolve``): no
absolute paths, no ``..``, nothing in ``.git``, nothing a symlink leads out of the checkout.
Then it is opened without following any link (``bot.agent.beneath``), because a command the
model runs at the same time may swap a directory for a link to the worker's files after the
path was judged. ``write_file`` writes no file under ``.github/`` (CI workflows and
questbot's own settings are a person's call) and never through a link. A refused path is an
answer to the model (``ToolRefused``, which the conversation hands back as a retry), not a
worker error. Whatever a tool reads from the repository, the log or a command's output goes
back fenced as untrusted data (``bot.agent.model.untrusted``).

Commands are argv lists, never shell strings, and run through
``bot.agent.proof_runner.run_command`` — the one runner for repository code: the bubblewrap
sandbox (``bot.agent.sandbox``) with a scrubbed environment, no network, and time and output
limits. A model cannot reach GitHub, the network, or the worker's environment: it has these
tools and nothing else.
"""

from __future__ import annotations

import asyncio
import fnmatch
import os
import re
import stat
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from bot.agent.beneath import open_beneath, read_at, read_beneath, write_beneath
from bot.agent.errors import AgentError, UnsafePath
from bot.agent.model.untrusted import failing_step, fence
from bot.agent.proof_runner import CommandResult, run_command
from bot.agent.scope import persons_call
from bot.agent.validation import CheckoutView
from bot.errors import Refused

MAX_LISTED = 500
MAX_READ_LINES = 400
MAX_READ_CHARS = 40_000
MAX_MATCHES = 100
MAX_FILE_BYTES = 1_000_000
"""The largest file ``search`` reads and ``write_file`` writes."""
MAX_READ_BYTES = 4_000_000
"""What ``read_file`` reads of a file at most: its lines are cut to ``MAX_READ_CHARS`` anyway."""
MAX_OUTPUT_CHARS = 8_000
COMMAND_TIMEOUT_SECONDS = 300.0
MAX_COMMANDS = 20
"""Commands one answer may run: a loop of ``run_command`` is a budget problem, not research."""


class ToolRefused(AgentError, Refused):
    """What a tool says back to the model when it will not do what was asked."""


@dataclass
class Workbench:
    """The tools over one checkout, for one agent run."""

    checkout: Path
    home: Path
    log: str | None = None
    writable: bool = False
    commands: int = 0
    written: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.view = CheckoutView(self.checkout)

    def _path(self, path: str) -> Path:
        try:
            return self.view.resolve(path)
        except UnsafePath as exc:
            raise ToolRefused(f"{path!r} is not in the checkout: {exc.reason}") from None

    def _relative(self, where: Path) -> str:
        return where.relative_to(self.view.root).as_posix()

    def list_files(self, directory: str = ".", pattern: str = "*") -> str:
        """The files under ``directory`` whose name matches ``pattern``, one path a line."""
        found = [path for path, _fd, name in self._walk(directory)
                 if fnmatch.fnmatch(name, pattern)]
        shown = found[:MAX_LISTED]
        more = f"\n… and {len(found) - MAX_LISTED} more" if len(found) > MAX_LISTED else ""
        return fence(f"file list of {directory}", "\n".join(shown) + more or "(no files)")

    def _walk(self, directory: str) -> Iterator[tuple[str, int, str]]:
        """``(path, directory fd, name)`` of every file under ``directory`` that lies in the
        checkout, ``.git`` left out. Walked by descriptors (``os.fwalk``), never into a link,
        so a directory swapped for a link mid-walk is not followed; a link to a file is
        listed only when it leads to a file of the checkout."""
        root = self._path(directory)
        start = self._relative(root)
        try:
            top = (os.open(self.view.root, os.O_RDONLY | os.O_DIRECTORY) if start == "."
                   else open_beneath(self.view.root, start, os.O_RDONLY | os.O_DIRECTORY))
        except OSError:
            raise ToolRefused(f"{directory!r} is not a directory of the checkout") from None
        try:
            for current, dirs, files, dir_fd in os.fwalk(".", dir_fd=top,
                                                         follow_symlinks=False):
                dirs[:] = sorted(d for d in dirs if d != ".git")
                for name in sorted(files):
                    path = PurePosixPath(start, current, name).as_posix()
                    try:
                        info = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
                    except OSError:
                        continue
                    if stat.S_ISLNK(info.st_mode) and not self._inside(path):
                        continue
                    yield path, dir_fd, name
        finally:
            os.close(top)

    def _inside(self, path: str) -> bool:
        try:
            return self.view.resolve(path).is_file()
        except (UnsafePath, ValueError, OSError):
            return False

    def _read(self, path: str, where: Path, limit: int) -> bytes:
        """The bytes of the judged ``where``, opened without following a link."""
        try:
            return read_beneath(self.view.root, self._relative(where), limit)
        except FileNotFoundError:
            raise ToolRefused(f"{path!r} does not exist in the checkout") from None
        except OSError:
            raise ToolRefused(f"{path!r} is not a file of the checkout: it is something else, "
                              "or a link appeared on the way while it was read") from None

    def read_file(self, path: str, start_line: int = 1, end_line: int | None = None) -> str:
        """Lines ``start_line``..``end_line`` of ``path``, numbered, as evidence to cite."""
        where = self._path(path)
        if not where.is_file():
            raise ToolRefused(f"{path!r} does not exist in the checkout")
        lines = self._read(path, where, MAX_READ_BYTES).decode(
            "utf-8", errors="replace").splitlines()
        first = max(start_line, 1)
        last = min(end_line or len(lines), len(lines), first + MAX_READ_LINES - 1)
        numbered = "\n".join(f"{n:>5}  {lines[n - 1]}" for n in range(first, last + 1))
        note = f"\n(lines {first}-{last} of {len(lines)})" if (first, last) != (1, len(lines)) \
            else ""
        return fence(f"file {path}", numbered[:MAX_READ_CHARS] + note)

    def search(self, pattern: str, directory: str = ".") -> str:
        """Lines matching the regular expression ``pattern`` under ``directory``."""
        try:
            wanted = re.compile(pattern)
        except re.error as exc:
            raise ToolRefused(f"{pattern!r} is not a regular expression: {exc}") from None
        matches: list[str] = []
        for path, dir_fd, name in self._walk(directory):
            data = self._search_read(path, dir_fd, name)
            if data is None or b"\x00" in data[:4096]:
                continue  # not a file of the checkout, too large, or binary
            for number, line in enumerate(data.decode("utf-8", "replace").splitlines(), 1):
                if wanted.search(line):
                    matches.append(f"{path}:{number}: {line[:300]}")
                    if len(matches) >= MAX_MATCHES:
                        return fence(f"search {pattern}", "\n".join(matches) + "\n…")
        return fence(f"search {pattern}", "\n".join(matches) or "(no matches)")

    def _search_read(self, path: str, dir_fd: int, name: str) -> bytes | None:
        """A file ``_walk`` found, read as a link-free path: in its directory, or — a link
        to a file of the checkout — where it leads."""
        data = read_at(dir_fd, name, MAX_FILE_BYTES + 1)
        if data is None:
            try:
                data = self._read(path, self._path(path), MAX_FILE_BYTES + 1)
            except ToolRefused:
                return None
        return None if len(data) > MAX_FILE_BYTES else data

    def read_log(self) -> str:
        """The failing job's log, from the step that failed."""
        if not self.log:
            return "No CI log came with this quest; the signal and the checkout are the evidence."
        return fence("CI log of the failing step", failing_step(self.log))

    def write_file(self, path: str, content: str) -> str:
        """Write ``content`` as the whole of ``path`` in the checkout."""
        if not self.writable:
            raise ToolRefused("this stage reads the checkout; it does not change it")
        data = content.encode()
        if len(data) > MAX_FILE_BYTES:
            raise ToolRefused(f"{path!r} would exceed {MAX_FILE_BYTES} bytes")
        where = self._path(path)
        if persons_call(path):
            raise ToolRefused(f"{path!r} is under .github/: CI workflows and questbot's "
                              "settings are a person's call, never an agent's")
        inside = PurePosixPath(self._relative(where))
        if inside != PurePosixPath(path) or where.is_symlink() or persons_call(str(inside)):
            raise ToolRefused(f"{path!r} is a symbolic link, or lies below one; questbot "
                              "writes files, never through links")
        if where.is_dir():
            raise ToolRefused(f"{path!r} is a directory")
        try:
            write_beneath(self.view.root, inside, data)
        except OSError:
            raise ToolRefused(f"{path!r} cannot be written: something other than a file is "
                              "there, or a link appeared on the way") from None
        self.written.append(path)
        return f"wrote {len(content.splitlines())} lines to {path}"

    async def run(self, argv: Sequence[str]) -> str:
        """Run ``argv`` (no shell) in the checkout; its exit code and the end of its output."""
        if not argv or not all(isinstance(a, str) and a for a in argv):
            raise ToolRefused("a command is a non-empty list of non-empty arguments")
        if self.commands >= MAX_COMMANDS:
            raise ToolRefused(f"{MAX_COMMANDS} commands were run already; answer with what "
                              "they showed")
        self.commands += 1
        result = await self.execute(argv)
        return (f"exit code {result.exit_code}"
                + (" (timed out)" if result.timed_out else "") + "\n"
                + fence(f"output of {' '.join(argv)[:100]}",
                        result.output_tail[-MAX_OUTPUT_CHARS:]))

    async def execute(self, argv: Sequence[str]) -> CommandResult:
        """Run ``argv`` in the checkout as repository code runs: the proof runner's sandbox,
        with the checkout and a scratch home the only writable places and no network."""
        self.home.mkdir(parents=True, exist_ok=True)
        return await asyncio.to_thread(run_command, list(argv), self.checkout, home=self.home,
                                       timeout_seconds=COMMAND_TIMEOUT_SECONDS)
