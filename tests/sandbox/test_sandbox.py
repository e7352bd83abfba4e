"""The sandbox API (``bot.agent.sandbox``) on this machine's bubblewrap: what a command sees,
what it may do, and what happens where the sandbox cannot run."""

from __future__ import annotations

import logging
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric import rsa

from bot.agent import sandbox
from bot.agent.sandbox import SandboxMode, SandboxPolicy, SandboxUnavailable
from bot.agent.sandbox.probe import announce
from bot.errors import PermanentError
from bot.settings.process import load_config
from bot.worker.assembly import start_sandbox
from questbot_testing import PROJECT
from tests.test_config import SECRET, pem

PY = sandbox.python()
NO_BWRAP = SandboxPolicy(bwrap="/nonexistent/questbot-bwrap")


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    path = tmp_path / "checkout"
    path.mkdir()
    return path


def py(code: str, checkout: Path, **kwargs: object) -> sandbox.CommandResult:
    return sandbox.run([PY, "-c", code], cwd=checkout, timeout_seconds=30, **kwargs)  # type: ignore[arg-type]


def test_this_machine_confines_commands() -> None:
    found = sandbox.status(SandboxPolicy())
    assert found.confined and found.usable, found.detail


def test_the_first_process_and_the_command_carry_only_the_allow_list(
        checkout: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("QUESTBOT_WORKER_SECRET", "worker-secret-value")
    result = py("import os\n"
                "first = open('/proc/1/environ', 'rb').read().split(b'\\0')\n"
                "print(sorted(k.split(b'=')[0].decode() for k in first if k))\n"
                "print(sorted(os.environ))\n"
                "print(os.getpid() < 10, os.getuid())", checkout, env={"EXTRA": "given"})
    assert result.exit_code == 0, result.output_tail
    allowed = ["EXTRA", "GIT_CONFIG_NOSYSTEM", "GIT_TERMINAL_PROMPT", "HOME", "LANG", "PATH",
               "TMPDIR"]
    first, own, pid = result.output_tail.splitlines()
    assert eval(first) == allowed  # our own repr of a list of names
    assert eval(own) == sorted([*allowed, "PWD"])  # --chdir sets PWD
    assert pid == "True 65534"  # a PID namespace of its own, as nobody
    assert result.sandboxed
    assert "worker-secret-value" not in result.output_tail


def test_only_the_checkout_and_tmp_are_writable_and_tmp_is_private(
        checkout: Path, tmp_path: Path) -> None:
    result = py("import pathlib\n"
                "pathlib.Path('made.txt').write_text('ok')\n"
                f"pathlib.Path('{tmp_path}/escaped').write_text('ok')\n"  # the private /tmp
                "for p in ['/usr/escaped', '/escaped', '/root/escaped', '/etc/escaped']:\n"
                "    try:\n"
                "        pathlib.Path(p).write_text('x')\n"
                "        print('WROTE', p)\n"
                "    except OSError as e:\n"
                "        print('refused', p, e.errno)\n", checkout)
    assert result.exit_code == 0, result.output_tail
    assert "WROTE" not in result.output_tail
    assert (checkout / "made.txt").read_text() == "ok"
    assert not (tmp_path / "escaped").exists() and not Path("/escaped").exists()


def test_the_checkouts_git_directory_is_read_only(checkout: Path) -> None:
    (checkout / ".git").mkdir()
    (checkout / ".git" / "config").write_text("[core]\n")
    result = py("import pathlib\n"
                "p = pathlib.Path('.git/config')\n"
                "try:\n"
                "    p.write_text('[core]\\n\\tfsmonitor = /tmp/evil\\n')\n"
                "except OSError:\n"
                "    raise SystemExit(3)\n", checkout)
    assert result.exit_code == 3
    assert (checkout / ".git" / "config").read_text() == "[core]\n"


def test_no_network_by_default_and_the_network_with_the_flag(checkout: Path) -> None:
    with socket.create_server(("127.0.0.1", 0)) as server:
        port = server.getsockname()[1]
        threading.Thread(target=lambda: server.accept()[0].close(), daemon=True).start()
        code = ("import socket\n"
                f"socket.create_connection(('127.0.0.1', {port}), timeout=3).close()\n"
                "print('connected')")
        assert py(code, checkout).exit_code != 0
        reached = py(code, checkout, network=True)
        assert reached.exit_code == 0 and "connected" in reached.output_tail


def test_not_started_timeout_and_memory_keep_the_contract(checkout: Path) -> None:
    missing = sandbox.run(["questbot-no-such-program"], cwd=checkout)
    assert missing.exit_code == sandbox.EXIT_NOT_STARTED
    assert "could not start 'questbot-no-such-program'" in missing.output_tail
    host_python = PROJECT / ".venv" / "bin" / "python"
    assert host_python.exists()
    outside = sandbox.run([str(host_python), "-V"], cwd=checkout)
    assert outside.exit_code == sandbox.EXIT_NOT_STARTED  # exists on the host, not inside
    slow = sandbox.run([PY, "-c", "import time; print('start', flush=True); time.sleep(30)"],
                       cwd=checkout, timeout_seconds=1)
    assert (slow.exit_code, slow.timed_out, slow.output_tail) == (124, True, "start\n")
    small = SandboxPolicy(memory_bytes=256 * 1024 * 1024)
    hog = sandbox.run([PY, "-c", "b = bytearray(1024 ** 3); print('allocated')"], cwd=checkout,
                      policy=small)
    assert hog.exit_code != 0 and "MemoryError" in hog.output_tail


def test_a_secret_inside_a_visible_directory_is_covered(tmp_path: Path, checkout: Path) -> None:
    tools = tmp_path / "tools"
    tools.mkdir()
    (tools / "app.pem").write_text("-----BEGIN RSA PRIVATE KEY-----\n")
    (tools / "visible.txt").write_text("a tool\n")
    policy = SandboxPolicy(readonly=(tools,), secrets=((tools / "app.pem").resolve(),))
    result = py("try:\n"
                f"    print(open('{tools}/app.pem').read())\n"
                "except PermissionError:\n"
                "    print('covered')\n"
                f"print(open('{tools}/visible.txt').read())", checkout, policy=policy)
    assert result.exit_code == 0, result.output_tail
    assert result.output_tail == "covered\na tool\n\n"  # /dev/null, which nodev keeps shut


def test_without_bubblewrap_nothing_runs(checkout: Path) -> None:
    found = sandbox.status(NO_BWRAP)
    assert not found.available and not found.usable
    assert "apt-get install bubblewrap" in found.detail
    with pytest.raises(SandboxUnavailable) as caught:
        sandbox.run(["true"], cwd=checkout, policy=NO_BWRAP)
    assert isinstance(caught.value, PermanentError)
    assert "QUESTBOT_SANDBOX=unsafe-off" in str(caught.value)


def test_the_operators_opt_out_runs_unconfined(checkout: Path) -> None:
    policy = SandboxPolicy(mode=SandboxMode.UNSAFE_OFF, bwrap="/nonexistent/questbot-bwrap")
    result = py("import os; print(os.getuid())", checkout, policy=policy)
    assert result.exit_code == 0 and not result.sandboxed
    assert result.output_tail.strip() == str(__import__("os").getuid())


@pytest.fixture
def installed() -> Iterator[None]:
    before = sandbox.current()
    try:
        yield
    finally:
        sandbox.install(before)


def test_the_worker_says_at_start_how_repository_code_runs(
        caplog: pytest.LogCaptureFixture, installed: None) -> None:
    log = logging.getLogger("test.sandbox")
    with caplog.at_level(logging.INFO, logger="test.sandbox"):
        assert announce(NO_BWRAP, log).usable is False
        assert announce(SandboxPolicy(), log).confined
        assert announce(SandboxPolicy(mode=SandboxMode.UNSAFE_OFF), log).usable
    refused, confined, off = caplog.records
    assert refused.levelno == logging.ERROR and "refuses to run repository code" in (
        refused.getMessage())
    assert confined.levelno == logging.INFO and "confines commands" in confined.getMessage()
    assert off.levelno == logging.WARNING and "unconfined" in off.getMessage()
    assert "QUESTBOT_SANDBOX=unsafe-off" in off.getMessage()


def test_the_worker_installs_its_configured_policy_with_the_key_hidden(
        tmp_path: Path, caplog: pytest.LogCaptureFixture, installed: None) -> None:
    key = tmp_path / "app.pem"
    key.write_text(pem(rsa.generate_private_key(public_exponent=65537, key_size=2048)))
    config = load_config({"GITHUB_APP_ID": "123", "GITHUB_WEBHOOK_SECRET": SECRET,
                          "GITHUB_PRIVATE_KEY_PATH": str(key), "QUESTBOT_SANDBOX": "unsafe-off"})
    with caplog.at_level(logging.WARNING, logger="bot.worker.assembly"):
        found = start_sandbox(config)
    assert found.mode is SandboxMode.UNSAFE_OFF and not found.confined
    assert sandbox.current().secrets == (key.resolve(),)
    assert any("unconfined" in r.getMessage() for r in caplog.records)
