"""deploy/healthcheck.py and deploy/seccomp.py on their own: which port the health check asks
and what it answers for 200, 503 and silence; what the seccomp generator adds and refuses.

Both are scripts the image or a self-hoster runs outside questbot's package, so they are
loaded from their files, as they run.
"""

from __future__ import annotations

import importlib.util
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from types import ModuleType

import pytest

from questbot_testing.stack import free_port
from tests.deploy import files


def load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, files.ROOT / "deploy" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


healthcheck = load("healthcheck")
seccomp = load("seccomp")


def test_the_health_check_asks_the_process_pid_1_runs(tmp_path: Path) -> None:
    """The Dockerfile's HEALTHCHECK has no argument: PID 1's command line (tini's, with
    questbot's after it) says which process this container is."""
    cmdline = tmp_path / "cmdline"
    cmdline.write_bytes(b"tini\0--\0python\0-m\0bot\0worker\0")
    assert healthcheck.role([], cmdline) == "worker"
    cmdline.write_bytes(b"tini\0--\0python\0-m\0bot\0serve\0")
    assert healthcheck.role([], cmdline) == "serve"
    assert healthcheck.role(["worker"], cmdline) == "worker"
    assert healthcheck.role([], tmp_path / "absent") == "serve"
    assert healthcheck.port("serve", {}) == 8080
    assert healthcheck.port("worker", {}) == 9100
    assert healthcheck.port("serve", {"PORT": "3000"}) == 3000
    assert healthcheck.port("worker", {"QUESTBOT_METRICS_PORT": "9200"}) == 9200
    with pytest.raises(SystemExit):
        healthcheck.port("scheduler", {})


@pytest.fixture
def answering() -> Iterator[tuple[int, list[int]]]:
    """A /healthz on loopback answering the status at the head of the list."""
    statuses = [200]

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = json.dumps({"status": "ok" if statuses[0] == 200 else "degraded"}).encode()
            self.send_response(statuses[0] if self.path == "/healthz" else 404)
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = HTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1], statuses
    finally:
        server.shutdown()
        server.server_close()


def test_the_health_check_passes_only_on_200(answering: tuple[int, list[int]],
                                             monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    port, statuses = answering
    monkeypatch.setenv("PORT", str(port))
    assert healthcheck.main(["serve"]) == 0
    statuses[0] = 503
    assert healthcheck.main(["serve"]) == 1
    assert "503" in capsys.readouterr().out  # what docker inspect's health log keeps
    monkeypatch.setenv("PORT", str(free_port()))
    assert healthcheck.main(["serve"]) == 1
    assert "no answer" in capsys.readouterr().out


def test_the_seccomp_generator_adds_one_rule_and_keeps_the_rest() -> None:
    """Docker's allow-list stays whole; one rule allows bubblewrap's six calls; running it on
    its own output does not add a second."""
    default = {"defaultAction": "SCMP_ACT_ERRNO",
               "syscalls": [{"names": ["read", "write"], "action": "SCMP_ACT_ALLOW"},
                            {"names": ["clone"], "action": "SCMP_ACT_ALLOW",
                             "args": [{"index": 0, "value": 2114060288,
                                       "op": "SCMP_CMP_MASKED_EQ"}]}]}
    extended = seccomp.with_bubblewrap(default)
    assert extended["syscalls"][:2] == default["syscalls"]
    assert extended["syscalls"][2]["names"] == ["clone", "unshare", "mount", "umount2",
                                                "pivot_root", "sethostname"]
    assert extended["defaultAction"] == "SCMP_ACT_ERRNO"
    assert seccomp.with_bubblewrap(extended) == extended


def test_the_seccomp_generator_refuses_a_profile_that_allows_by_default(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "allow.json"
    path.write_text(json.dumps({"defaultAction": "SCMP_ACT_ALLOW", "syscalls": []}))
    assert seccomp.main([str(path)]) == 1
    assert "allows what it does not list" in capsys.readouterr().err
    assert seccomp.main([]) == 2
