"""What a confined command sees: the bubblewrap command line, built from a policy and a request.

The sandbox starts from nothing (bubblewrap's root is an empty tmpfs) and adds only:

* **the system, read-only**: ``/usr`` and the ``/bin``, ``/sbin``, ``/lib*`` links or
  directories as the host has them; from ``/etc`` only what programs need to load libraries,
  name users, find certificates and resolve names (``ETC``, ``NETWORK_ETC``) — never the rest
  of ``/etc``, the worker's home, ``/work``, ``/srv`` or wherever the App's key lives;
* **the Python questbot runs on**, read-only, when it is installed outside ``/usr`` (pyenv, a
  build in ``/opt``), so ``python`` in a check means the interpreter it meant before;
* **what the operator adds**, read-only (``QUESTBOT_SANDBOX_READONLY``: a toolchain, a virtual
  environment with the test runner); a ``bin`` directory in one goes on ``PATH``;
* **the checkout, writable** (and the agent's home when it has one); a ``.git`` in it and the
  git directory a worktree's ``.git`` file names are bound read-only over it, because the
  worker runs git there afterwards, outside the sandbox, and a ``core.fsmonitor`` or hook
  written into ``.git/config`` would run as the worker;
* a private ``/tmp`` (tmpfs, capped), a minimal ``/dev`` and a ``/proc`` of its own PID
  namespace, in which the command's first process is bubblewrap's reaper; no ``/sys``. The
  root itself (bubblewrap's tmpfs of mount points) is made read-only once everything is in
  place, so the only places to write are the checkout, the home and ``/tmp``.
* ``/proc/sys`` read-only. Where the worker runs as root, the sandbox's ``nobody`` is root
  outside, and the kernel's permission check on ``/proc/sys`` looks at that: without this a
  check could set ``kernel.core_pattern`` to a program of its own, which the kernel runs as
  root on the host at the next crash (bubblewrap covers ``/proc/sys`` only when it can tell
  at setup that it is writable, and at setup it cannot). ``/proc/pressure`` likewise: a
  pressure trigger written there starts a kernel thread.

Every namespace is new (``--unshare-all``: user, mount, PID, network, IPC, UTS, cgroup), the
network too unless the request asks for it (CLI agents that call their model's API); the
process runs as ``nobody`` with no capabilities, in a session of its own (``--new-session``,
so it cannot push keys into the worker's terminal), dies with its parent and may not make user
namespaces of its own. Files the policy names as secrets are covered by ``/dev/null`` (or an
empty tmpfs) wherever they would otherwise be visible.

Environment: bubblewrap itself is started with the scrubbed environment (the allow-list in
``sandbox_env`` plus what the caller passes), not told to set it with ``--setenv``. The
sandbox's first process is a fork of bubblewrap, so its ``/proc/1/environ`` is whatever
bubblewrap was started with; and ``--setenv`` would put the values (an agent's API key) on a
command line any local user can read in ``/proc/<pid>/cmdline``.

Limits, set by ``prlimit`` (util-linux) between bubblewrap and the command: address space
(``RLIMIT_AS``), file size (``RLIMIT_FSIZE``), processes (``RLIMIT_NPROC``, and a pids cgroup
where that does not hold: ``bot.agent.sandbox.processes``) and no core dumps. Time and output
are the runner's (``bot.agent.sandbox.running``).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from bot.settings.process.sandbox import (
    DEFAULT_FILE_BYTES,
    DEFAULT_MEMORY_BYTES,
    DEFAULT_PROCESSES,
    DEFAULT_TMP_BYTES,
    MIB,
    SandboxMode,
    SandboxPolicy,
)

__all__ = ["DEFAULT_FILE_BYTES", "DEFAULT_MEMORY_BYTES", "DEFAULT_PROCESSES", "DEFAULT_TMP_BYTES",
           "MIB", "SandboxMode", "SandboxPolicy"]

SANDBOX_UID = 65534
"""``nobody``: the command owns its checkout inside (bubblewrap maps it to the worker's uid)."""
SANDBOX_TMP = "/tmp"  # noqa: S108 - the sandbox's own tmpfs, no one else's
SANDBOX_HOME = "/tmp/home"  # noqa: S108 - in that tmpfs
SYSTEM_DIRS = ("/usr",)
SYSTEM_LINKS = ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
ETC = ("ld.so.cache", "ld.so.conf", "ld.so.conf.d", "alternatives", "localtime", "timezone",
       "passwd", "group", "nsswitch.conf", "hosts", "host.conf", "gai.conf", "protocols",
       "services", "mime.types", "ssl", "ca-certificates", "ca-certificates.conf",
       f"python{sys.version_info.major}.{sys.version_info.minor}")  # fmt: skip
"""What programs read from ``/etc``: libraries, users, certificates, protocols. Not secrets."""
NETWORK_ETC = ("resolv.conf",)
SYSTEM_PATH = ("/usr/local/bin", "/usr/bin", "/bin")


@dataclass(frozen=True, slots=True)
class Request:
    """One command to run: where, what it may write, and whether it may reach the network."""

    argv: tuple[str, ...]
    cwd: Path
    writable: tuple[Path, ...]
    readonly: tuple[Path, ...] = ()
    home: Path | None = None
    network: bool = False
    env: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Features:
    """What this machine's bubblewrap and util-linux offer (``bot.agent.sandbox.probe``)."""

    bwrap: str
    prlimit: str
    disable_userns: bool = False
    tmpfs_size: bool = False
    nproc: bool = False
    """RLIMIT_NPROC binds the sandbox's processes (the worker is not root)."""
    pids_cgroup: Path | None = None
    """Where each command's pids cgroup is made, when this process can make one."""

    @property
    def processes_bounded(self) -> bool:
        return self.nproc or self.pids_cgroup is not None


def interpreter_prefix() -> Path | None:
    """The Python installation questbot runs on, when ``/usr`` does not already hold it."""
    prefix = Path(os.path.realpath(sys.base_prefix))
    return None if _under(prefix, Path("/usr")) else prefix


def python() -> str:
    """The interpreter questbot runs on, by a path the sandbox shows (a virtual environment's
    ``bin/python`` is a link into a directory the sandbox does not bind)."""
    return os.path.realpath(sys.executable)


def _under(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def _extra_readonly(policy: SandboxPolicy) -> list[Path]:
    prefix = interpreter_prefix()
    return [*([prefix] if prefix else []), *policy.readonly]


def sandbox_path(policy: SandboxPolicy) -> str:
    """``PATH`` inside: the extra read-only trees' ``bin`` first, then the system's."""
    bins = [str(root / "bin") for root in _extra_readonly(policy) if (root / "bin").is_dir()]
    return os.pathsep.join([*bins, *SYSTEM_PATH])


def sandbox_env(policy: SandboxPolicy, request: Request) -> dict[str, str]:
    """The whole environment of the command (and of bubblewrap, which passes it on)."""
    home = str(request.home) if request.home else SANDBOX_HOME
    base = {"PATH": sandbox_path(policy) if policy.confined else os.environ.get(
                "PATH", "/usr/bin:/bin"),
            "LANG": "C.UTF-8", "HOME": home, "TMPDIR": SANDBOX_TMP if policy.confined else home,
            "GIT_TERMINAL_PROMPT": "0", "GIT_CONFIG_NOSYSTEM": "1"}  # fmt: skip
    return base | dict(request.env)


def visible_roots(policy: SandboxPolicy, request: Request) -> list[Path]:
    """Every host directory the command can see at its own path."""
    system = [Path(p) for p in SYSTEM_DIRS]
    system += [Path(p) for p in SYSTEM_LINKS if os.path.isdir(p) and not os.path.islink(p)]
    etc = [Path("/etc", name) for name in (*ETC, *(NETWORK_ETC if request.network else ()))]
    home = [request.home] if request.home else []
    return [*system, *etc, *_extra_readonly(policy), *request.readonly, *request.writable, *home]


def _git_dirs(root: Path) -> list[Path]:
    """The ``.git`` of ``root`` and, for a worktree, the git directory its ``.git`` file names."""
    dot = root / ".git"
    if dot.is_dir() and not dot.is_symlink():
        return [dot]
    if dot.is_file() and not dot.is_symlink():
        text = dot.read_text(errors="replace").strip()
        if text.startswith("gitdir:"):
            gitdir = Path(text.removeprefix("gitdir:").strip())
            gitdir = gitdir if gitdir.is_absolute() else root / gitdir
            common = gitdir.parent.parent if gitdir.parent.name == "worktrees" else gitdir
            return [dot, *([common.resolve()] if common.is_dir() else [])]
        return [dot]
    return []


def bwrap_argv(policy: SandboxPolicy, features: Features, request: Request) -> list[str]:
    """The command line that runs ``request.argv`` confined as the module docstring says."""
    args = [features.bwrap, "--unshare-all", "--unshare-user",
            "--uid", str(SANDBOX_UID), "--gid", str(SANDBOX_UID),
            "--cap-drop", "ALL", "--die-with-parent", "--new-session",
            "--hostname", "questbot-sandbox"]  # fmt: skip
    if features.disable_userns:
        args.append("--disable-userns")
    if request.network:
        args.append("--share-net")
    for directory in SYSTEM_DIRS:
        args += ["--ro-bind", directory, directory]
    for name in SYSTEM_LINKS:
        if os.path.islink(name):
            args += ["--symlink", os.readlink(name), name]
        elif os.path.isdir(name):
            args += ["--ro-bind", name, name]
    for name in (*ETC, *(NETWORK_ETC if request.network else ())):
        args += ["--ro-bind-try", f"/etc/{name}", f"/etc/{name}"]
    args += ["--dev", "/dev", "--proc", "/proc", "--ro-bind", "/proc/sys", "/proc/sys",
             "--ro-bind-try", "/proc/pressure", "/proc/pressure"]
    if features.tmpfs_size:
        args += ["--size", str(policy.tmp_bytes)]
    args += ["--tmpfs", SANDBOX_TMP, "--dir", SANDBOX_HOME]
    for root in [*_extra_readonly(policy), *request.readonly]:  # after /tmp: it may be in it
        args += ["--ro-bind", str(root), str(root)]
    writable = [*request.writable, *([request.home] if request.home else [])]
    for root in writable:
        args += ["--bind", str(root), str(root)]
    for root in request.writable:
        for git_dir in _git_dirs(root):
            args += ["--ro-bind", str(git_dir), str(git_dir)]
    visible = visible_roots(policy, request)
    for secret in policy.secrets:
        if any(_under(secret, root) for root in visible) and secret.exists():
            args += ["--tmpfs", str(secret)] if secret.is_dir() else [
                "--ro-bind", "/dev/null", str(secret)]
    args += ["--remount-ro", "/",  # the root tmpfs: mount points only, nothing to fill RAM with
             "--chdir", str(request.cwd), "--",
             features.prlimit, f"--as={policy.memory_bytes}", f"--fsize={policy.file_bytes}",
             f"--nproc={policy.processes}", "--core=0", "--", *request.argv]  # fmt: skip
    return args


def find_program(policy: SandboxPolicy, request: Request, env: Mapping[str, str]) -> str | None:
    """Why ``request.argv[0]`` cannot be started inside, or ``None`` when it can.

    Checked before starting, so "could not start" stays exit 127 with questbot's own words
    rather than a message from deep inside the sandbox."""
    name = request.argv[0]
    if "/" in name:
        candidates = [Path(name) if os.path.isabs(name) else request.cwd / name]
    else:
        candidates = [Path(d) / name for d in env.get("PATH", "").split(os.pathsep) if d]
    roots = visible_roots(policy, request)
    # ``/bin/sh`` is there by the same link inside (``/bin`` → ``usr/bin``) as outside
    roots += [Path(p) for p in SYSTEM_LINKS if os.path.islink(p)]
    for candidate in candidates:
        if not (candidate.is_file() and os.access(candidate, os.X_OK)):
            continue
        named, real = Path(os.path.abspath(candidate)), Path(os.path.realpath(candidate))
        if all(any(_under(p, root) for root in roots) for p in (named, real)) and (
                real not in policy.secrets):
            return None
    where = "" if "/" in name else f" on the sandbox's PATH ({env.get('PATH', '')})"
    return f"{name!r} is not an executable the sandbox can see{where}"


def as_paths(paths: Sequence[Path | str]) -> tuple[Path, ...]:
    return tuple(Path(os.path.realpath(p)) for p in paths)
