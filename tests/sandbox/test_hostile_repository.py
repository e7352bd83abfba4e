"""A hostile repository's checks, run by ``python -m bot proof`` as a quest's proof runs them.

Each check is an attack that exits 0 only when it got what it was after (printing
``ESCAPED``): the App's private key (at the path the worker's configuration names), the
worker's environment — its own, ``/proc/1/environ``, every ``/proc/<pid>/environ`` it can
see —, files outside the checkout (the worker's code and home, the Redis data directory,
``/etc/shadow``), Redis on its port, the network, writing outside the checkout (its ``.git``
included), a user namespace of its own, a daemon left behind, memory, time. The attacker is
given every path and port it would have to guess (``targets.json``): the worst case.

Every attack must fail, nothing secret may appear anywhere in what the proof printed, the host
must show no trace of the writes or the daemon, and a benign check beside them still passes.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from questbot_testing.redis_server import RedisServer
from tests.agent.conftest import git

ROOT = Path(__file__).resolve().parents[2]
KEY_MARKER = "questbot-test-app-key-MARKER"
SECRETS = {
    "GITHUB_WEBHOOK_SECRET": "webhook-secret-MARKER-1",
    "QUESTBOT_TEST_TOKEN": "worker-token-MARKER-2",
    "AGENT_API_KEY": "agent-key-MARKER-3",  # passed to command agents, never to proofs
}
DAEMON_MARKER = "questbot-hostile-daemon-MARKER"
TIMEOUT = 8

PRELUDE = '''\
import json, os, pathlib, socket, subprocess, sys, time
T = json.loads(pathlib.Path(__file__).with_name("targets.json").read_text())
def escaped(what):
    print("ESCAPED:", what)
    sys.exit(0)
'''

ATTACKS = {
    "key": '''
        for path in T["key_files"]:
            try:
                text = open(path).read()
            except OSError as exc:
                print("blocked", path, exc)
                continue
            if T["key_marker"] in text:
                escaped(f"read the App key at {path}")
        sys.exit(1)
    ''',
    "environ": '''
        seen = " ".join(f"{k}={v}" for k, v in os.environ.items())
        for secret in T["secrets"]:
            if secret in seen:
                escaped(f"the worker's environment holds {secret}")
        sys.exit(1)
    ''',
    "proc": '''
        found = []
        pids = [p for p in os.listdir("/proc") if p.isdigit()] + ["self", str(os.getppid())]
        for pid in pids:
            for name in ("environ", "cmdline"):
                try:
                    data = open(f"/proc/{pid}/{name}", "rb").read().decode(errors="replace")
                except OSError:
                    continue
                found += [f"/proc/{pid}/{name}" for s in T["secrets"] if s in data]
        print("pids seen:", sorted(p for p in pids if p.isdigit()), "parent:", os.getppid())
        if found:
            escaped(found)
        sys.exit(1)
    ''',
    "files": '''
        got = []
        for path in T["outside_files"]:
            try:
                open(path, "rb").read(64)
                got.append(path)
            except OSError as exc:
                print("blocked", path, exc.strerror)
        for path in T["outside_dirs"]:
            try:
                if os.listdir(path):
                    got.append(path)
            except OSError as exc:
                print("blocked", path, exc.strerror)
        if got:
            escaped(got)
        sys.exit(1)
    ''',
    "redis": '''
        for host in T["hosts"]:
            try:
                with socket.create_connection((host, T["redis_port"]), timeout=1) as sock:
                    sock.sendall(b"PING\\r\\n")
                    if sock.recv(16).startswith(b"+PONG"):
                        escaped(f"Redis answered at {host}:{T['redis_port']}")
            except OSError as exc:
                print("blocked", host, exc)
        sys.exit(1)
    ''',
    "network": '''
        for host in T["hosts"]:
            try:
                socket.create_connection((host, T["listener_port"]), timeout=1).close()
                escaped(f"reached the host's listener at {host}")
            except OSError as exc:
                print("blocked", host, exc)
        for host, port in (("1.1.1.1", 443), ("8.8.8.8", 53)):
            try:
                socket.create_connection((host, port), timeout=1).close()
                escaped(f"reached {host}:{port}")
            except OSError as exc:
                print("blocked", host, exc)
        try:
            socket.getaddrinfo("github.com", 443)
            escaped("resolved github.com")
        except OSError as exc:
            print("no DNS:", exc)
        sys.exit(1)
    ''',
    "write": '''
        wrote = []
        for path in T["write_outside"]:
            try:
                pathlib.Path(path).write_text("escaped")
                if not path.startswith("/tmp/"):  # the private /tmp takes it; the host is checked
                    wrote.append(path)
            except OSError as exc:
                print("blocked", path, exc.strerror)
        gitdir = pathlib.Path(".git").read_text().split(":", 1)[1].strip()
        common = pathlib.Path(gitdir).parent.parent
        for path in (pathlib.Path(".git"), common / "config", common / "hooks" / "post-checkout"):
            try:
                with open(path, "a") as handle:
                    handle.write("\\n[core]\\n\\tfsmonitor = /tmp/evil\\n")
                wrote.append(str(path))
            except OSError as exc:
                print("blocked", path, exc.strerror)
        if wrote:
            escaped(wrote)
        sys.exit(1)
    ''',
    "userns": '''
        try:
            os.setuid(0)
            escaped("became root")
        except OSError as exc:
            print("setuid:", exc)
        if subprocess.run(["unshare", "--user", "--map-root-user", "true"]).returncode == 0:
            escaped("made a user namespace of its own")
        sys.exit(1)
    ''',
    "daemon": '''
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                os.execv(sys.executable, [sys.executable, "-c",
                         "import time; time.sleep(120)", T["daemon_marker"]])
            os._exit(0)
        print("left a daemon behind")
        sys.exit(0)  # the check itself "passes": the host is checked for the daemon
    ''',
    "memory": '''
        try:
            hog = bytearray(T["memory_bytes"])
        except MemoryError:
            print("MemoryError")
            sys.exit(1)
        escaped(f"allocated {len(hog)} bytes")
    ''',
    "time": '''
        time.sleep(120)
        escaped("ran for two minutes")
    ''',
}

BENIGN = '''\
import pathlib, tempfile
from app import add
assert add(2, 3) == 5
pathlib.Path("build.txt").write_text("the checkout is writable")
with tempfile.NamedTemporaryFile() as handle:  # and so is the private /tmp
    handle.write(b"ok")
print("benign check passed")
'''


def host_addresses() -> list[str]:
    hosts = {"127.0.0.1"}
    with contextlib.suppress(OSError):
        hosts.update(str(info[4][0]) for info in socket.getaddrinfo(
            socket.gethostname(), None, socket.AF_INET))
    with contextlib.suppress(OSError), socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as udp:
        udp.connect(("192.0.2.1", 9))  # no packet is sent: this asks for the outgoing address
        hosts.add(str(udp.getsockname()[0]))
    return sorted(hosts)


@pytest.fixture(scope="module")
def redis_server() -> Iterator[RedisServer]:
    server = RedisServer()
    server.start()
    try:
        yield server
    finally:
        server.cleanup()


@pytest.fixture
def listener() -> Iterator[int]:
    """A TCP listener on every address of the host, as any service of the worker's would be."""
    with socket.create_server(("0.0.0.0", 0)) as server:
        server.settimeout(0.2)
        stop = threading.Event()

        def accept() -> None:
            while not stop.is_set():
                try:
                    server.accept()[0].close()
                except OSError:
                    continue

        thread = threading.Thread(target=accept, daemon=True)
        thread.start()
        yield server.getsockname()[1]
        stop.set()
        thread.join()


@pytest.fixture
def worker(tmp_path: Path) -> dict[str, Path]:
    """The worker's own files: its key, a file of its state, its home's dotfile."""
    home = tmp_path / "worker-home"
    home.mkdir()
    (home / ".netrc").write_text("machine github.com password worker-token-MARKER-2\n")
    key = tmp_path / "secrets" / "app.pem"
    key.parent.mkdir()
    key.write_text(f"-----BEGIN RSA PRIVATE KEY-----\n{KEY_MARKER}\n"
                   "-----END RSA PRIVATE KEY-----\n")
    return {"home": home, "key": key}


def hostile_repository(tmp_path: Path, targets: dict[str, Any]) -> Path:
    repo = tmp_path / "hostile"
    (repo / "attacks").mkdir(parents=True)
    (repo / "app.py").write_text("def add(a, b):\n    return a + b\n")
    (repo / "check.py").write_text(BENIGN)
    for name, body in ATTACKS.items():
        (repo / "attacks" / f"{name}.py").write_text(PRELUDE + textwrap.dedent(body))
    (repo / "attacks" / "targets.json").write_text(json.dumps(targets))
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "a repository whose checks attack the worker")
    return repo


def proof(checkout: Path, commands: list[str],
          env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-m", "bot", "proof", "--checkout", str(checkout), "--json",
            "--timeout", str(TIMEOUT)]
    for command in commands:
        argv += ["--command", command]
    return subprocess.run(argv, capture_output=True, text=True, env=env, cwd=ROOT, timeout=300,
                          check=False)  # fmt: skip


def worker_env(worker: dict[str, Path], redis_server: RedisServer) -> dict[str, str]:
    return {**os.environ, **SECRETS, "PYTHONPATH": str(ROOT), "HOME": str(worker["home"]),
            "GITHUB_PRIVATE_KEY_PATH": str(worker["key"]), "REDIS_URL": redis_server.url,
            "QUESTBOT_SANDBOX_MEMORY_MB": "512"}


def daemons() -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if DAEMON_MARKER.encode() in (entry / "cmdline").read_bytes():
                found.append(int(entry.name))
        except (OSError, ValueError):
            continue
    return found


def test_every_attack_of_a_hostile_repository_fails(
        tmp_path: Path, worker: dict[str, Path], redis_server: RedisServer,
        listener: int) -> None:
    escaped_tmp = Path("/tmp") / f"questbot-escaped-{os.getpid()}"
    write_outside = [str(tmp_path / "escaped.txt"), str(ROOT / "escaped.txt"),
                     str(worker["home"] / "escaped.txt"), "/usr/local/escaped.txt",
                     "/etc/escaped.txt", str(escaped_tmp), str(redis_server.directory / "x")]
    targets = {
        "key_files": [str(worker["key"]), str(worker["key"].resolve())],
        "key_marker": KEY_MARKER, "secrets": [*SECRETS.values(), KEY_MARKER],
        "outside_files": [str(ROOT / "bot" / "config.py"), str(worker["home"] / ".netrc"),
                          str(redis_server.directory / "redis.log"), "/etc/shadow",
                          "/etc/hostname", str(Path.home() / ".bashrc")],
        "outside_dirs": [str(ROOT), "/work", str(redis_server.directory), str(worker["home"]),
                         str(worker["key"].parent)],
        "hosts": host_addresses(), "redis_port": redis_server.port, "listener_port": listener,
        "write_outside": write_outside, "daemon_marker": DAEMON_MARKER,
        "memory_bytes": 2 * 1024 ** 3,
    }  # fmt: skip
    repo = hostile_repository(tmp_path, targets)
    commands = ["python check.py", *(f"python attacks/{name}.py" for name in ATTACKS)]
    started = time.monotonic()
    done = proof(repo, commands, worker_env(worker, redis_server))
    took = time.monotonic() - started

    assert done.returncode == 1, done.stderr  # checks failed; the proof itself ran
    result = json.loads(done.stdout)
    assert result["sandboxed"] is True and result["passed"] is False
    exits = {log["name"]: log["exit_code"] for log in result["logs"]}
    tails = {log["name"]: log["output_tail"] for log in result["logs"]}
    assert exits.pop("python check.py") == 0, tails["python check.py"]
    assert exits.pop("python attacks/daemon.py") == 0  # judged on the host, below
    assert exits.pop("python attacks/time.py") == 124
    escaped = {name: code for name, code in exits.items() if code == 0}
    assert escaped == {}, {name: tails[name] for name in escaped}
    assert "ESCAPED" not in done.stdout
    crashed = [name for name, tail in tails.items() if "Traceback" in tail]
    assert crashed == [], {name: tails[name] for name in crashed}  # each attack ran to its end
    # the worktree's .git and its copy's git directory and config (the copy has no hooks
    # directory to write a hook into: that write fails with "No such file or directory")
    assert tails["python attacks/write.py"].count("Read-only file system") >= 4
    assert "post-checkout No such file or directory" in tails["python attacks/write.py"]
    assert "parent: 1" in tails["python attacks/proc.py"]  # bubblewrap's reaper, not the worker
    for secret in [*SECRETS.values(), KEY_MARKER]:
        assert secret not in done.stdout and secret not in done.stderr
    assert "MemoryError" in tails["python attacks/memory.py"]
    assert all(log["timed_out"] == (log["name"] == "python attacks/time.py")
               for log in result["logs"])
    assert took < TIMEOUT + 60  # the time limit held, and no daemon held the output pipe open
    for path in write_outside:
        assert not Path(path).exists(), f"{path} was written from inside the sandbox"
    assert "fsmonitor" not in (repo / ".git" / "config").read_text()
    assert not (repo / ".git" / "hooks" / "post-checkout").exists()
    assert daemons() == [], "a daemon the check started outlived the proof"
    assert not (repo / "build.txt").exists()  # the proof ran in a worktree of its own


def test_the_attacks_are_real_they_succeed_unconfined(
        tmp_path: Path, worker: dict[str, Path], redis_server: RedisServer) -> None:
    """The control: with the operator's ``unsafe-off``, the same attacks get what they want —
    so their failure above is the sandbox's doing, not a broken attack."""
    targets = {"key_files": [str(worker["key"])], "key_marker": KEY_MARKER,
               "secrets": list(SECRETS.values()), "hosts": ["127.0.0.1"],
               "redis_port": redis_server.port, "outside_dirs": [],
               "outside_files": [str(worker["home"] / ".netrc")]}
    repo = hostile_repository(tmp_path, targets)
    attacks = ["key", "environ", "proc", "files", "redis"]
    done = proof(repo, [f"python attacks/{name}.py" for name in attacks],
                 {**worker_env(worker, redis_server), "QUESTBOT_SANDBOX": "unsafe-off"})
    assert "UNCONFINED" in done.stderr
    result = json.loads(done.stdout)
    assert result["sandboxed"] is False
    exits = {log["name"].removeprefix("python attacks/").removesuffix(".py"): log["exit_code"]
             for log in result["logs"]}
    # the command's own environment is the allow-list even unconfined; /proc gives it away
    assert exits == {"key": 0, "environ": 1, "proc": 0, "files": 0, "redis": 0}, result["logs"]


def test_a_benign_repository_passes_and_a_failing_check_fails(tmp_path: Path) -> None:
    repo = hostile_repository(tmp_path, {})
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    passed = proof(repo, ["python check.py"], env)
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert json.loads(passed.stdout)["passed"] is True
    failed = proof(repo, ["python check.py", "python -c 'raise SystemExit(3)'"], env)
    assert failed.returncode == 1
    assert [log["exit_code"] for log in json.loads(failed.stdout)["logs"]] == [0, 3]
    text = subprocess.run([sys.executable, "-m", "bot", "proof", "--checkout", str(repo),
                           "--command", "python check.py"], capture_output=True, text=True,
                          env=env, cwd=ROOT, check=False)  # fmt: skip
    assert text.returncode == 0 and "pass  python check.py at head: exit 0" in text.stdout


def test_the_checks_of_the_settings_file_are_the_default(tmp_path: Path) -> None:
    repo = hostile_repository(tmp_path, {})
    (repo / ".github").mkdir()
    (repo / ".github" / "questbot.yml").write_text(
        "proof:\n  commands:\n    - python check.py\n    - python attacks/environ.py\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "settings")
    done = proof(repo, [], {**os.environ, **SECRETS, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 1, done.stderr
    logs = json.loads(done.stdout)["logs"]
    assert [(log["name"], log["exit_code"]) for log in logs] == [
        ("python check.py", 0), ("python attacks/environ.py", 1)]


@pytest.mark.parametrize(("setup", "expected"), [
    ("missing", "is not a directory"),
    ("no checks", "no checks to run"),
    ("bad command", "cannot be split"),
    ("bad sandbox setting", "QUESTBOT_SANDBOX=off"),
])
def test_checks_that_cannot_be_run_exit_2(tmp_path: Path, setup: str, expected: str) -> None:
    repo = hostile_repository(tmp_path, {})
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    checkout, commands = repo, ["python check.py"]
    if setup == "missing":
        checkout = tmp_path / "nowhere"
    elif setup == "no checks":
        commands = []
    elif setup == "bad command":
        commands = ["python 'unterminated"]
    else:
        env["QUESTBOT_SANDBOX"] = "off"
    done = proof(checkout, commands, env)
    assert done.returncode == 2 and expected in done.stderr, done.stderr
    assert done.stdout == ""


def test_a_plain_directory_is_proved_as_one_commit(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "app.py").write_text("def add(a, b):\n    return a + b\n")
    (plain / "check.py").write_text(BENIGN)
    done = proof(plain, ["python check.py"], {**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stdout + done.stderr
    assert not (plain / ".git").exists() and not (plain / "build.txt").exists()
