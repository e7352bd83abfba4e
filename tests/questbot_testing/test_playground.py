"""Trying questbot by hand: ``python -m questbot_testing.playground start`` keeps the whole
stack running, and from another process a person makes a check fail, reads what questbot wrote,
comments ``/approve A`` and asks ``questbot status`` — as the README says. Ctrl-C stops it and
leaves nothing behind. The demo's ``--help`` says what it does."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from questbot_testing import PROJECT


def play(state: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "questbot_testing.playground", *args],
                          env={**os.environ, "QUESTBOT_PLAYGROUND": str(state)},
                          capture_output=True, text=True, timeout=120, check=check)


def until(what: str, probe: object, timeout: float = 90.0) -> str:
    deadline = time.monotonic() + timeout
    last = ""
    while time.monotonic() < deadline:
        last = probe()  # type: ignore[operator]
        if what in last:
            return last
        time.sleep(0.5)
    raise AssertionError(f"{what!r} never appeared; last:\n{last[-3000:]}")


@pytest.fixture
def playground(tmp_path: Path) -> Iterator[tuple[subprocess.Popen[str], Path]]:
    state = tmp_path / "playground.json"
    env = {k: v for k, v in os.environ.items() if k != "REDIS_URL"}
    proc = subprocess.Popen([sys.executable, "-m", "questbot_testing.playground", "start",
                             "--scripted"], env={**env, "QUESTBOT_PLAYGROUND": str(state)},
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            cwd=tmp_path)
    deadline = time.monotonic() + 90
    while not state.exists():
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            raise AssertionError(f"the playground did not start:\n{proc.communicate()[0]}")
        time.sleep(0.2)
    try:
        yield proc, state
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_by_hand_a_failing_check_a_comment_and_status(
    playground: tuple[subprocess.Popen[str], Path]
) -> None:
    proc, state = playground
    where = json.loads(state.read_text())
    assert where["repo"] == "octo/sample" and where["redis_url"].startswith("redis://")
    assert "the `tests` check failed" in play(state, "fail").stdout
    listing = until("pull request, open", lambda: play(state, "show").stdout)
    number = next(line.split()[0].lstrip("#") for line in listing.splitlines()
                  if "pull request, open" in line)
    thread = until("Checkpoint A", lambda: play(state, "show", number).stdout)
    assert "questbot[bot]" in thread
    play(state, "comment", number, "/approve A", "--as", "rex")
    refused = until("was not applied", lambda: play(state, "show", number).stdout)
    assert "needs write access" in refused
    play(state, "comment", number, "/approve A")
    status = [str(Path(sys.executable).with_name("questbot")), "status", "--repo", "octo/sample"]
    until("planned", lambda: subprocess.run(
        status, env={**os.environ, "REDIS_URL": where["redis_url"]}, capture_output=True,
        text=True, check=True).stdout)
    payload = json.loads(play(state, "payload", "issues", "opened", "--here").stdout)
    assert payload["repository"]["full_name"] == "octo/sample"
    assert payload["installation"]["id"] == where["installation_id"]
    proc.send_signal(signal.SIGINT)
    out, _ = proc.communicate(timeout=60)
    assert proc.returncode == 0, out
    assert "Ctrl-C stops everything" in out and out.rstrip().endswith("stopped.")
    assert not state.exists()
    gone = play(state, "show", check=False)
    assert gone.returncode != 0 and "no playground is running" in gone.stderr


def test_text_from_others_is_shown_not_obeyed() -> None:
    from questbot_testing.playground import visible

    hostile = "ok\x1b]0;owned\x07\x1b[2J\u202enoisserpxe\u202c\x9b31m done\n\tnext"
    shown = visible(hostile)
    assert "\x1b" not in shown and "\u202e" not in shown and "\x9b" not in shown
    assert shown.startswith("ok") and shown.endswith("done\n\tnext")


def test_the_demo_says_what_it_does() -> None:
    done = subprocess.run([sys.executable, str(PROJECT / "scripts" / "demo.py"), "--help"],
                          capture_output=True, text=True, check=True, timeout=60)
    assert done.stdout.startswith("usage: scripts/demo")
    assert "--keep" in done.stdout and "--scripted" in done.stdout
