"""How many processes a confined command may have, and what makes that number hold.

A fork bomb in a check must end within the check's limits without hurting the worker or a
check beside it. The sandbox's own PID namespace makes it end with the check (killing
bubblewrap ends every process in it, ``bot.agent.sandbox.running``); a process limit keeps it
from filling the machine's process table until then. Two mechanisms, because neither holds
everywhere:

* **RLIMIT_NPROC** (``prlimit --nproc``), set on every command. Since Linux 5.14 the kernel
  counts it per user *of a user namespace*, and every sandbox has a user namespace of its own,
  so it counts that sandbox's processes and threads only — not the worker's, not another
  check's. It does not hold where the worker runs as root: bubblewrap maps the sandbox's
  ``nobody`` onto the worker's user, and the kernel never applies RLIMIT_NPROC to root's
  processes (``copy_process`` exempts ``INIT_USER``).
* **A pids cgroup** (``pids.max``), where this process can make one — as root, with the pids
  controller mounted writable (cgroup v1's ``pids`` hierarchy, or cgroup v2 where the
  controller can be enabled below this process's own cgroup). Each command gets a cgroup of
  its own, under this process's, joined by a shell *before* it execs bubblewrap, so no process
  of the sandbox starts outside it; the cgroup is emptied and removed when the command ended.

``bot.agent.sandbox.probe`` finds which hold here and says so; where neither does, the worker
says at start that only a check's time limit ends a fork bomb, and what would change that.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import time
import uuid
from collections.abc import Iterator, Sequence
from pathlib import Path

log = logging.getLogger(__name__)

CGROUP_DIR = "questbot-sandbox"
"""The cgroup, below this process's own, under which each command gets one."""
REMOVE_SECONDS = 5.0
JOIN_SCRIPT = 'echo $$ > "$1" && shift && unset PWD && exec "$@"'
"""Run outside the sandbox, as the worker: move this shell into the cgroup, then become
bubblewrap — so every process of the sandbox is born inside it. ``PWD``, which the shell
exports of its own accord, is dropped: bubblewrap passes its environment to the sandbox's
first process, and that is the allow-list and nothing else."""


def nproc_holds() -> bool:
    """Whether RLIMIT_NPROC binds the sandbox's processes: not when they are root outside."""
    return os.geteuid() != 0


def _own_cgroups() -> dict[str, str]:
    """This process's cgroup per hierarchy: ``pids`` (v1) and ``""`` (v2) → its path."""
    own: dict[str, str] = {}
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/cgroup").read_text().splitlines():
            _id, controllers, path = line.split(":", 2)
            for name in controllers.split(",") if controllers else [""]:
                own[name] = path
    return own


def _pids_mounts() -> list[tuple[Path, str]]:
    """Where a pids controller is mounted: (mount point, ``pids`` or ``""`` for v2)."""
    found: list[tuple[Path, str]] = []
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/mountinfo").read_text().splitlines():
            before, _dash, after = line.partition(" - ")
            fields, rest = before.split(), after.split()
            if len(fields) < 5 or len(rest) < 3 or fields[3] != "/":
                continue  # a bind of a subtree: its paths are not the hierarchy's
            point = Path(fields[4].replace("\\040", " "))
            if rest[0] == "cgroup" and "pids" in rest[2].split(","):
                found.append((point, "pids"))
            elif rest[0] == "cgroup2":
                with contextlib.suppress(OSError):
                    if "pids" in (point / "cgroup.controllers").read_text().split():
                        found.append((point, ""))
    return found


def _usable(root: Path, v2: bool) -> bool:
    """Whether a child of ``root`` gets a ``pids.max`` this process can set (``root`` is made
    for the trial, and removed again when it fails)."""
    made = False
    try:
        made = not root.is_dir()
        root.mkdir(exist_ok=True)
        if v2:
            (root / "cgroup.subtree_control").write_text("+pids")
        trial = root / f"{os.getpid()}-probe-{uuid.uuid4().hex[:8]}"
        trial.mkdir()
        try:
            (trial / "pids.max").write_text("max")
        finally:
            trial.rmdir()
    except OSError:
        if made:
            with contextlib.suppress(OSError):
                root.rmdir()
        return False
    return True


def pids_cgroup_root() -> Path | None:
    """The directory under which each command's pids cgroup is made, or ``None`` where this
    process cannot make one (not root, no pids controller, a read-only cgroup tree)."""
    own = _own_cgroups()
    for point, hierarchy in _pids_mounts():
        path = own.get(hierarchy)
        if path is None:
            continue
        base = point / path.lstrip("/")
        if hierarchy == "":
            # cgroup v2 enables a controller for children only where the parent enables it,
            # and a cgroup holding processes (this one) cannot: try, and take no for an answer
            with contextlib.suppress(OSError):
                (base / "cgroup.subtree_control").write_text("+pids")
        root = base / CGROUP_DIR
        if _usable(root, v2=hierarchy == ""):
            _remove_leftovers(root)
            return root
    return None


def _remove_leftovers(root: Path) -> None:
    """The cgroups a process that is gone left behind (a worker killed mid-check): each is
    named for the process that made it, and one still in use is not empty and stays."""
    with contextlib.suppress(OSError):
        for child in root.iterdir():
            owner = child.name.split("-", 1)[0]
            if child.is_dir() and owner.isdigit() and not Path("/proc", owner).exists():
                with contextlib.suppress(OSError):
                    child.rmdir()


def join_argv(cgroup: Path, argv: Sequence[str]) -> list[str]:
    """``argv`` started inside ``cgroup``: a shell joins it, then execs ``argv``."""
    return ["/bin/sh", "-c", JOIN_SCRIPT, "questbot-join", str(cgroup / "cgroup.procs"), *argv]


@contextlib.contextmanager
def pids_cgroup(root: Path, limit: int) -> Iterator[Path]:
    """A cgroup of its own for one command, at most ``limit`` tasks in it; removed (whatever
    is left in it killed first) when the block ends."""
    group = root / f"{os.getpid()}-{uuid.uuid4().hex[:12]}"
    group.mkdir()
    try:
        (group / "pids.max").write_text(str(limit))
        yield group
    finally:
        _remove(group)


def _remove(group: Path) -> None:
    deadline = time.monotonic() + REMOVE_SECONDS
    while True:
        with contextlib.suppress(OSError, ValueError):
            for pid in (group / "cgroup.procs").read_text().split():
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(int(pid), signal.SIGKILL)
        try:
            group.rmdir()
            return
        except FileNotFoundError:
            return
        except OSError as exc:
            if time.monotonic() > deadline:
                log.warning("could not remove the sandbox's cgroup %s (%s); it is removed "
                            "when the next worker starts", group, exc.strerror)
                return
            time.sleep(0.05)
