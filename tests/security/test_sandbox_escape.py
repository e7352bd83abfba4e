"""A hostile repository's checks against the machine they run on, past what
``tests/sandbox/test_hostile_repository.py`` already holds: too many processes, the kernel's
settings, and the git directory of the repository the checks came from.

* **A fork bomb** gets no more processes than the sandbox's limit, ends with its check's time
  limit, and leaves the worker and a check running beside it unharmed. RLIMIT_NPROC alone
  does not do it where the worker runs as root (the kernel exempts root's processes, and the
  sandbox's ``nobody`` is root outside when the worker is): there a pids cgroup does.
* **The kernel's settings** (``/proc/sys``) cannot be opened for writing: where the worker
  runs as root, the sandbox's processes are root to the kernel's permission check, and a
  check could set ``kernel.core_pattern`` to a program of its own, run as root on the host
  at the next crash. The test only opens the files; it never writes one.
* **The source repository's git directory** — its config with an ``http.extraheader``
  credential, a remote URL with a token, anything else in it — is not visible to a check of
  ``python -m bot proof --checkout``; the history the check needs is there all the same.

Every check here is run the way a maintainer runs one: ``python -m bot proof``, or the
sandbox API a quest's proof uses.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from bot.agent import sandbox
from bot.agent.sandbox import SandboxPolicy

ROOT = Path(__file__).resolve().parents[2]
MARKER = "questbot-sandbox-escape-MARKER"
LIMIT = 64


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "user.name=questbot tests", "-c", "user.email=tests@questbot.invalid",
         "-c", "commit.gpgsign=false", "-c", "init.defaultBranch=main", *args],
        cwd=repo, check=True, capture_output=True, text=True)  # fmt: skip
    return done.stdout.strip()


def repository(path: Path, files: dict[str, str]) -> Path:
    path.mkdir(parents=True)
    for name, text in files.items():
        (path / name).write_text(text)
    git(path, "init", "-q")
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "the checks")
    return path


def proof(checkout: Path, *commands: str, timeout: float = 60,
          **env: str) -> tuple[subprocess.CompletedProcess[str], dict[str, Any]]:
    argv = [sys.executable, "-m", "bot", "proof", "--checkout", str(checkout), "--json",
            "--timeout", str(timeout)]
    for command in commands:
        argv += ["--command", command]
    done = subprocess.run(argv, capture_output=True, text=True, cwd=ROOT, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(ROOT),
                               "QUESTBOT_SANDBOX_MEMORY_MB": "512", **env}, check=False)
    assert done.returncode in (0, 1), done.stderr
    return done, json.loads(done.stdout)


def marked_processes() -> list[int]:
    """Processes on the host whose command line holds ``MARKER`` (a bomb's, left behind)."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if MARKER.encode() in (entry / "cmdline").read_bytes():
                found.append(int(entry.name))
        except (OSError, ValueError):
            continue
    return found


CAPPED_BOMB = f'''\
import os, sys, time
# {MARKER}: forks until the kernel refuses, or until three times the limit: a bomb that
# stops by itself, so that on a machine without a limit this test fails instead of harming it
children = 0
while children < {3 * LIMIT}:
    try:
        pid = os.fork()
    except OSError as exc:
        print("refused:", exc.strerror, flush=True)
        break
    if pid == 0:
        time.sleep(60)
        os._exit(0)
    children += 1
print("forked", children, flush=True)
sys.exit(0 if children < {LIMIT} else 1)
'''


def test_a_fork_bomb_gets_no_more_processes_than_the_limit(tmp_path: Path) -> None:
    repo = repository(tmp_path / "bomb", {"bomb.py": CAPPED_BOMB})
    done, result = proof(repo, "python bomb.py", QUESTBOT_SANDBOX_PROCESSES=str(LIMIT))
    [log] = result["logs"]
    assert "refused: Resource temporarily unavailable" in log["output_tail"], log["output_tail"]
    forked = int(log["output_tail"].split("forked ")[1].split()[0])
    assert forked < LIMIT, log["output_tail"]
    assert log["exit_code"] == 0 and done.returncode == 0
    assert marked_processes() == []  # the children died with the check's PID namespace


def test_a_fork_bomb_ends_with_its_check_and_harms_nothing_beside_it(tmp_path: Path) -> None:
    policy = SandboxPolicy(processes=LIMIT, memory_bytes=256 * 1024 * 1024)
    found = sandbox.status(policy)
    # the real, unbounded bomb runs only where the sandbox bounds it: never on the host
    assert found.confined and found.processes_bounded, found.detail
    bombed, other = tmp_path / "bombed", tmp_path / "other"
    bombed.mkdir()
    other.mkdir()
    results: dict[str, sandbox.CommandResult] = {}
    timeout = 8.0

    def bomb() -> None:
        results["bomb"] = sandbox.run(
            # every process forks for ever, whatever the kernel refuses (a shell would give
            # up at the first refusal): only the time limit ends it
            [sandbox.python(), "-c", f"import os\nwhile True:\n    try:\n        os.fork()\n"
             f"    except OSError:\n        pass\n# {MARKER}"],
            cwd=bombed, timeout_seconds=timeout, policy=policy)

    started = time.monotonic()
    thread = threading.Thread(target=bomb)
    thread.start()
    try:
        time.sleep(2)  # the bomb is at its limit by now
        # the worker still starts processes...
        for _ in range(20):
            subprocess.run(["true"], check=True, timeout=10)
        # ...and a check beside the bomb starts its own and passes
        beside = sandbox.run(["/bin/sh", "-c", "for i in 1 2 3 4 5 6 7 8; do /bin/true & done;"
                              " wait; echo beside"], cwd=other, timeout_seconds=30, policy=policy)
        assert (beside.exit_code, beside.output_tail) == (0, "beside\n"), beside.output_tail
    finally:
        thread.join(timeout=120)
    took = time.monotonic() - started
    assert not thread.is_alive()
    assert results["bomb"].timed_out and results["bomb"].exit_code == sandbox.EXIT_TIMED_OUT
    assert took < timeout + 15, f"the bomb's check ended after {took:.1f} s"
    deadline = time.monotonic() + 10
    while marked_processes() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert marked_processes() == [], "a process of the bomb outlived its check"


KERNEL_SETTINGS = '''\
import os
opened = []
candidates = ["/proc/sys/kernel/core_pattern", "/proc/sys/kernel/modprobe",
              "/proc/sys/vm/swappiness", "/proc/sys/kernel/pid_max",
              "/proc/sysrq-trigger"]
for place in ("/proc/sys", "/proc/pressure"):
    for top, _dirs, files in os.walk(place):
        candidates += [os.path.join(top, name) for name in files]
for path in candidates:
    try:
        fd = os.open(path, os.O_WRONLY)  # opened only: nothing is ever written
    except OSError:
        continue
    os.close(fd)
    opened.append(path)
print("writable:", len(opened), opened[:5])
raise SystemExit(1 if opened else 0)
'''


def test_a_check_cannot_change_the_kernels_settings(tmp_path: Path) -> None:
    repo = repository(tmp_path / "sysctl", {"settings.py": KERNEL_SETTINGS})
    _done, result = proof(repo, "python settings.py")
    [log] = result["logs"]
    assert log["exit_code"] == 0, log["output_tail"]
    assert "writable: 0 []" in log["output_tail"]


GIT_SNOOP = '''\
import json, os, pathlib, subprocess, sys
marker, source = "-".join(sys.argv[1].split()), sys.argv[2]  # never whole in the argv
leaks = []
if os.path.exists(source):
    leaks.append(f"the source repository {source} is visible")
dot = pathlib.Path(".git")
places = [dot]
if dot.is_file():
    gitdir = pathlib.Path(dot.read_text().split(":", 1)[1].strip())
    places += [gitdir, gitdir.parent.parent]
for place in places:
    files = [place] if place.is_file() else list(place.rglob("*")) if place.is_dir() else []
    for path in files:
        try:
            if marker.encode() in path.read_bytes():
                leaks.append(str(path))
        except OSError:
            pass
shown = subprocess.run(["git", "config", "--list", "--show-origin"], capture_output=True,
                       text=True).stdout
if marker in shown:
    leaks.append("git config --list")
log = subprocess.run(["git", "log", "--format=%s"], capture_output=True, text=True)
described = subprocess.run(["git", "describe", "--tags"], capture_output=True, text=True)
print(json.dumps({"leaks": leaks, "log": log.stdout.split("\\n")[:2],
                  "describe": described.stdout.strip()}))
raise SystemExit(1 if leaks else 0)
'''


def test_a_check_sees_nothing_of_the_source_repositorys_git_directory(tmp_path: Path) -> None:
    clone = repository(tmp_path / "operator-clone", {"snoop.py": GIT_SNOOP})
    git(clone, "tag", "v1.0")
    (clone / "more.txt").write_text("a second commit\n")
    git(clone, "add", "-A")
    git(clone, "commit", "-q", "-m", "the second commit")
    # what an operator's clone may hold: a credential header, a token in a URL, a note
    git(clone, "config", "http.extraheader", f"AUTHORIZATION: basic {MARKER}")
    git(clone, "remote", "add", "origin", f"https://x-access-token:{MARKER}@github.com/o/r.git")
    (clone / ".git" / "questbot-notes").write_text(f"token {MARKER}\n")
    halves = MARKER.rsplit("-", 1)
    done, result = proof(clone, f"python snoop.py '{' '.join(halves)}' {clone / '.git'}")
    [log] = result["logs"]
    said = json.loads(log["output_tail"].strip().splitlines()[-1])
    assert said["leaks"] == [], said
    assert log["exit_code"] == 0
    # what a check needs of the history is there: the commits, and the tag on them
    assert said["log"] == ["the second commit", "the checks"], said
    assert said["describe"].startswith("v1.0-1-g"), said
    assert MARKER not in done.stdout
    assert git(clone, "worktree", "list").count("\n") == 0  # nothing was added to the clone
