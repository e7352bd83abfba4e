"""Can this machine confine commands? Asked once per policy, by running ``true`` in the sandbox.

Finding ``bwrap`` on ``PATH`` is not enough: in a container without user namespaces (or with
them limited by AppArmor or a seccomp filter) it is installed and fails at its first mount. So
the probe runs the very command line a check would get, with ``true`` as the check, and the
sandbox counts as available only if that exits 0. Optional flags (``--disable-userns``,
``--size`` for the tmpfs, bubblewrap 0.8 and later) are used when ``bwrap --help`` lists them.

The answer is cached per policy: a worker asks at start (``announce``, which says in the log
what it found and what it means) and every later command reuses it.
"""

from __future__ import annotations

import dataclasses
import functools
import logging
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from bot.agent.sandbox.policy import (
    Features,
    Request,
    SandboxMode,
    SandboxPolicy,
    bwrap_argv,
    sandbox_env,
)
from bot.agent.sandbox.processes import nproc_holds, pids_cgroup_root

PROBE_TIMEOUT_SECONDS = 20.0
INSTALL_HINT = ("install Debian's `bubblewrap` package (apt-get install bubblewrap; "
                "scripts/setup does) and allow unprivileged user namespaces (sysctl "
                "kernel.unprivileged_userns_clone=1, or a container run without a seccomp "
                "filter that blocks them)")


@dataclass(frozen=True, slots=True)
class SandboxStatus:
    """What the probe found. ``usable``: repository code may run (confined, or opted out)."""

    mode: SandboxMode
    available: bool
    detail: str
    features: Features | None = None

    @property
    def confined(self) -> bool:
        return self.mode is SandboxMode.BUBBLEWRAP and self.available

    @property
    def usable(self) -> bool:
        return self.confined or self.mode is SandboxMode.UNSAFE_OFF

    @property
    def processes_bounded(self) -> bool:
        """Whether a command's process limit holds here (``bot.agent.sandbox.processes``)."""
        return self.confined and self.features is not None and self.features.processes_bounded


def _features(bwrap: str, prlimit: str) -> Features:
    try:
        listed = subprocess.run([bwrap, "--help"], capture_output=True, text=True,  # noqa: S603
                                timeout=PROBE_TIMEOUT_SECONDS, env={}).stdout  # fmt: skip
    except (OSError, subprocess.TimeoutExpired):
        listed = ""
    return Features(bwrap=bwrap, prlimit=prlimit, disable_userns="--disable-userns" in listed,
                    tmpfs_size="--size" in listed, nproc=nproc_holds(),
                    pids_cgroup=None if nproc_holds() else pids_cgroup_root())


def _probe(policy: SandboxPolicy) -> SandboxStatus:
    mode = policy.mode
    bwrap = shutil.which(policy.bwrap)
    if bwrap is None:
        return SandboxStatus(mode, False, f"bubblewrap ({policy.bwrap!r}) is not "
                             f"installed; {INSTALL_HINT}")
    prlimit = shutil.which("prlimit", path="/usr/bin:/bin")
    if prlimit is None:
        return SandboxStatus(mode, False, "prlimit (util-linux) is not in /usr/bin; "
                             "install Debian's `util-linux` package")
    features = _features(bwrap, prlimit)
    policy = dataclasses.replace(policy, mode=SandboxMode.BUBBLEWRAP)  # would it confine?
    with tempfile.TemporaryDirectory(prefix="questbot-sandbox-probe-") as tmp:
        request = Request(argv=("true",), cwd=Path(tmp).resolve(), writable=(Path(tmp).resolve(),))
        try:
            done = subprocess.run(  # noqa: S603 - a fixed argv
                bwrap_argv(policy, features, request), env=sandbox_env(policy, request),
                capture_output=True, text=True, timeout=PROBE_TIMEOUT_SECONDS, cwd=tmp,
                stdin=subprocess.DEVNULL)
        except (OSError, subprocess.TimeoutExpired) as exc:
            return SandboxStatus(mode, False, f"{bwrap} could not be run ({exc}); "
                                 f"{INSTALL_HINT}", features)
    if done.returncode != 0:
        said = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no message"]
        return SandboxStatus(mode, False, f"{bwrap} cannot create its namespaces here "
                             f"(exit {done.returncode}: {said[0]}); {INSTALL_HINT}", features)
    return SandboxStatus(mode, True, f"{bwrap} confines commands (read-only system, "
                         "writable checkout, private /tmp, own PID and network namespaces, "
                         f"{_process_bound(policy, features)})", features)


def _process_bound(policy: SandboxPolicy, features: Features) -> str:
    if features.nproc:
        return f"at most {policy.processes} processes each"
    if features.pids_cgroup is not None:
        return f"at most {policy.processes} processes each, by a pids cgroup"
    return ("no limit on processes: this worker runs as root, whose processes RLIMIT_NPROC "
            "does not count, and it cannot make a pids cgroup here")


@functools.lru_cache(maxsize=8)
def status(policy: SandboxPolicy) -> SandboxStatus:
    """What ``policy`` can do on this machine (probed once, then remembered)."""
    return _probe(policy)


def announce(policy: SandboxPolicy, log: logging.Logger) -> SandboxStatus:
    """Say at start how repository code will run here, and what to do when it cannot."""
    found = status(policy)
    if policy.mode is SandboxMode.UNSAFE_OFF:
        log.warning("sandbox: OFF (QUESTBOT_SANDBOX=unsafe-off): repository code and agents "
                    "run unconfined, as this worker's user, with its files and network; unset "
                    "QUESTBOT_SANDBOX to confine them (%s)",
                    "bubblewrap would work here" if found.available else found.detail)
    elif found.available and not found.processes_bounded:
        log.warning("sandbox: %s; a fork bomb in a check runs until the check's time limit. "
                    "Run the worker as a user other than root, or where it can write a pids "
                    "cgroup, or give its container a process limit", found.detail)
    elif found.available:
        log.info("sandbox: %s", found.detail)
    else:
        log.error("sandbox: unavailable, so this worker refuses to run repository code "
                  "(proofs, reproductions, agents): %s; or, knowing it is unsafe, set "
                  "QUESTBOT_SANDBOX=unsafe-off", found.detail)
    return found
