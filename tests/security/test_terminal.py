"""Text from outside, printed to an operator's terminal: it may show, never steer.

Each command that prints a repository's output, a model's words, a comment or a remote
server's answer is given text holding what a terminal obeys — an OSC that sets the window's
title, CSI sequences that clear the screen and move the cursor, a full reset, the one-byte C1
forms of CSI and OSC, a bell, a carriage return that would print "pass" over "FAIL", and bidi
overrides — and what it prints must hold none of them: ``python -m bot proof`` (the check's
output and its name from the settings file), ``status`` and ``replay`` of a journal,
``lessons``, ``receive`` (the answer of whatever listens at ``--url``), ``review request``
(the handoff prompt quotes the model's hypothesis), and the JSON log lines of every process.
"""

from __future__ import annotations

import asyncio
import io
import json
import logging
import os
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

import pytest
import redis.asyncio

from bot.__main__ import main
from bot.core import EVENT_ADAPTER, Policy
from bot.core.lessons import Ending
from bot.journal import Journal
from bot.journal.lessons import Lesson, LessonStore
from bot.observe.logs import configure_logging

ROOT = Path(__file__).resolve().parents[2]
HOSTILE = ("\x1b]0;owned-title\x07"  # OSC: set the window title
           "\x1b[2J\x1b[H"  # CSI: clear the screen, cursor home
           "\x1bc"  # RIS: reset the terminal
           "\x9b2J\x9d0;c1-title\x9c"  # the same as C1 controls
           "\u202eevil\u202c\u2066isolate\u2069"  # bidi override and isolate
           "\x07bell FAIL\rpass")  # a bell, and a line written over
OBEYED = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def obeyed(text: str) -> list[str]:
    """What in ``text`` a terminal would act on instead of showing (newline and tab are
    fine)."""
    return sorted({f"U+{ord(c):04X}" for c in OBEYED.findall(text)})


def test_the_proof_prints_a_checks_output_and_name_inert(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / ".github").mkdir(parents=True)
    (repo / "hostile.py").write_text(f"import sys\nprint({HOSTILE!r})\nsys.exit(1)\n")
    # the check's name comes from the settings file: repository text too
    (repo / ".github" / "questbot.yml").write_text(
        'proof:\n  commands:\n    - ["python", "hostile.py", "\\e]0;name-title\\a\\u202e"]\n')
    for args in (["init", "-q"], ["add", "-A"], ["-c", "user.name=t", "-c", "user.email=t@t",
                                                 "commit", "-q", "-m", "a hostile check"]):
        subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "QUESTBOT_SANDBOX_MEMORY_MB": "512"}
    for extra in ([], ["--json"]):
        done = subprocess.run([sys.executable, "-m", "bot", "proof", "--checkout", str(repo),
                               *extra], capture_output=True, text=True, env=env, cwd=ROOT,
                              timeout=300, check=False)
        assert done.returncode == 1, done.stderr
        assert obeyed(done.stdout) == [] and obeyed(done.stderr) == [], done.stdout
        if not extra:
            assert "evil" in done.stdout and "owned-title" not in done.stdout
            assert "bell FAIL\n" in done.stdout  # "pass" on a line of its own
        else:  # the JSON keeps every byte, escaped
            [log] = json.loads(done.stdout)["logs"]
            assert HOSTILE in log["output_tail"]


def journal(tmp_path: Path, quest_id: str = "q-h") -> Path:
    """A quest whose issue title, hypothesis and /revise reason are hostile text."""
    def event(n: int, type_: str, **fields: object) -> dict[str, object]:
        return {"actor": None, "at": f"2026-01-01T00:00:0{n}Z", "id": f"{quest_id}-e{n}",
                "quest_id": quest_id, "type": type_, **fields}

    events = [
        event(0, "signal_sensed", base="base0", fingerprint="fp-1", kind="check_failure",
              repo="octo/demo", severity="high", source="check_run:1",
              title=f"tests fail {HOSTILE}"),
        event(1, "triaged", duplicate_of=None, parent=None, risk="low", route="auto_fix"),
        event(2, "research_started"),
        event(3, "hypothesis_written", evidence_digest=None, summary=f"race {HOSTILE}"),
        event(4, "checkpoint_decided", actor="maintainer", automatic=False, checkpoint="A",
              reason=f"no: {HOSTILE}", snapshot=None, verdict="revise"),
    ]
    path = tmp_path / "hostile.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in events))
    return path


@pytest.mark.parametrize("command", [["status", "--journal"], ["replay"]])
def test_status_and_replay_print_a_journals_text_inert(
        command: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = journal(tmp_path, quest_id="q-h\x1b]0;id-title\x07")  # a journal file's quest id
    code = main([*command[:1], *([str(path)] if command == ["replay"] else
                                 [command[1], str(path)])])
    out = capsys.readouterr()
    assert code in (0, 1)  # 1: replay says the journal holds an invalid transition
    assert obeyed(out.out) == [] and obeyed(out.err) == [], out.out
    assert "q-h" in out.out


async def test_lessons_print_a_models_words_inert(
        redis_url: str, redis_async: redis.asyncio.Redis,
        capsys: pytest.CaptureFixture[str]) -> None:
    lesson = Lesson(quest_id="q1", revision=1, repo="octo/demo", ending=Ending.LANDED,
                    text=f"check X fails {HOSTILE}", synopsis=f"fine {HOSTILE}",
                    at=datetime(2026, 12, 1, tzinfo=UTC))
    await LessonStore(redis_async).keep(lesson)
    code = await asyncio.to_thread(main, ["lessons", "octo/demo", "--redis", redis_url])
    out = capsys.readouterr().out
    assert code == 0 and "check X fails" in out
    assert obeyed(out) == [], out


class _Hostile(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        self.rfile.read(int(self.headers["Content-Length"]))
        body = json.dumps({"status": "accepted"}).encode()[:-1] + f', "x": "{HOSTILE}"}}'.encode()
        self.send_response(202)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *_args: object) -> None:
        pass


@pytest.fixture
def hostile_receiver() -> Iterator[str]:
    """Whatever listens at ``--url``: it answers with escape sequences in its body."""
    server = HTTPServer(("127.0.0.1", 0), _Hostile)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/webhook"
    finally:
        server.shutdown()
        server.server_close()


def test_receive_prints_the_receivers_answer_inert(hostile_receiver: str,
                                                   tmp_path: Path) -> None:
    fixture = tmp_path / "payload.json"
    fixture.write_text(json.dumps({"action": "opened"}))
    done = subprocess.run([sys.executable, "-m", "bot", "receive", "issues", str(fixture),
                           "--url", hostile_receiver], capture_output=True, text=True,
                          cwd=tmp_path, timeout=60, check=False,
                          env={**os.environ, "PYTHONPATH": str(ROOT),
                               "GITHUB_WEBHOOK_SECRET": "receive-secret"})
    assert done.returncode == 0, done.stderr
    assert "202" in done.stdout and "evil" in done.stdout
    assert obeyed(done.stdout) == [] and obeyed(done.stderr) == [], done.stdout


async def test_review_request_prints_the_handoff_inert(
        redis_url: str, redis_async: redis.asyncio.Redis,
        capsys: pytest.CaptureFixture[str]) -> None:
    """The handoff prompt quotes the quest's evidence: a model's hypothesis and plan."""
    advisory = Policy.model_validate({"checkpoints": {"A": {}, "B": {"blocking": False},
                                                      "C": {"blocking": False}}})
    store = Journal(redis_async)
    for line in _planned_quest(HOSTILE):
        await store.apply(EVENT_ADAPTER.validate_json(line), advisory)
    code = await asyncio.to_thread(main, ["review", "request", "q-r", "--role",
                                          "design_reviewer", "--redis", redis_url])
    out = capsys.readouterr()
    assert code == 0, out.err
    assert "plan" in out.out and "evil" in out.out
    assert obeyed(out.out) == [] and obeyed(out.err) == [], out.out


def _planned_quest(hostile: str) -> list[str]:
    """A quest at checkpoint B whose hypothesis and plan are a model's hostile words."""
    def event(n: int, type_: str, **fields: object) -> str:
        return json.dumps({"actor": None, "at": f"2026-01-01T00:00:{n:02d}Z", "id": f"q-r-e{n}",
                           "quest_id": "q-r", "type": type_, **fields})

    return [
        event(0, "signal_sensed", base="base0", fingerprint="fp-r", kind="check_failure",
              repo="octo/demo", severity="high", source="check_run:2", title="tests fail"),
        event(1, "triaged", duplicate_of=None, parent=None, risk="low", route="auto_fix"),
        event(3, "hypothesis_written", evidence_digest=None, summary=f"race {hostile}"),
        event(4, "checkpoint_decided", actor="maintainer", automatic=False, checkpoint="A",
              reason="", snapshot=None, verdict="approve"),
        event(5, "reproduced", check="test_race", command=[], commit=None),
        event(6, "plan_written", risk="medium", summary=f"lock it {hostile}"),
    ]


def test_a_log_line_holds_no_raw_control_character() -> None:
    stream = io.StringIO()
    handler = configure_logging(stream=stream)
    try:
        logging.getLogger("questbot.test").warning("a comment said %s", HOSTILE,
                                                   extra={"title": HOSTILE})
    finally:
        logging.getLogger().removeHandler(handler)
    line = stream.getvalue()
    assert obeyed(line) == [], line
    assert json.loads(line)["message"] == f"a comment said {HOSTILE}"  # the same, escaped
