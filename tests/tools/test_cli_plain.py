"""The command line as people use it (issue 24, item 4): a Redis that does not answer is one
line and exit 2, for every command that touches it; a reader that stops reading (``| head``)
ends the command quietly; effects read as phrases, not key chains."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot.__main__ import main
from bot.core.effects import EffectType
from bot.words.effects import effect_phrase
from questbot_testing.stack import free_port

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"

REDIS_COMMANDS = {
    "status": ["status", "q-nowhere"],
    "status --repo": ["status", "--repo", "octo/demo"],
    "replay --redis": ["replay", "q-nowhere"],
    "lessons": ["lessons", "octo/demo"],
    "lessons --drop": ["lessons", "octo/demo", "--drop", "q-nowhere"],
    "review request": ["review", "request", "q-nowhere", "--role", "human"],
}


@pytest.fixture
def closed_redis() -> str:
    """A Redis URL where nothing listens (a port just freed), with a password to hide."""
    return f"redis://:hunter2-password@127.0.0.1:{free_port()}/0"


@pytest.mark.parametrize("name", sorted(REDIS_COMMANDS))
def test_every_command_says_in_one_line_that_redis_does_not_answer(
    name: str, closed_redis: str, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = [*REDIS_COMMANDS[name], "--redis", closed_redis]
    assert main(argv) == 2
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1, captured.err
    assert lines[0].startswith(f"{name.split(' --')[0]}: could not ")
    assert "Redis" in lines[0] and "Traceback" not in captured.err
    assert "hunter2-password" not in captured.err  # the URL's password is hidden
    assert captured.out == ""


def test_the_redis_of_the_environment_is_named_when_no_url_is_given(
    closed_redis: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)  # no .env of the checkout's
    monkeypatch.setenv("REDIS_URL", closed_redis)
    assert main(["lessons", "octo/demo"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "connection refused" in err, err
    assert f"127.0.0.1:{closed_redis.rsplit(':', 1)[1].split('/')[0]}" in err
    assert "REDIS_URL" in err  # what to do


def test_a_command_whose_reader_stops_reading_ends_quietly() -> None:
    """A real pipe whose reading end is closed before the command writes (``| head`` that
    stopped): no ``BrokenPipeError``, nothing on stderr, Python's own exit status for it."""
    child = subprocess.Popen(
        [sys.executable, "-m", "bot", "replay", str(EXAMPLES / "main-line-closed.jsonl"),
         "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert child.stdout is not None and child.stderr is not None
    child.stdout.close()  # the reader is gone before the first line
    err = child.stderr.read().decode()
    assert child.wait(timeout=120) == 1, err
    assert err == "", err


def test_a_pipe_into_head_prints_no_traceback() -> None:
    """The shell's own pipe, as people type it."""
    done = subprocess.run(
        ["bash", "-c", f"'{sys.executable}' -m bot replay "
         f"'{EXAMPLES / 'rollback-revision-2.jsonl'}' --json | head -c 1 >/dev/null; "
         f"'{sys.executable}' -m bot replay '{EXAMPLES / 'rollback-revision-2.jsonl'}' "
         "--json | (exec 0<&-; true)"],
        capture_output=True, text=True, cwd=ROOT, timeout=120, check=False,
        env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert "BrokenPipeError" not in done.stderr and "Traceback" not in done.stderr, \
        done.stderr


@given(st.sampled_from(list(EffectType)), st.integers(1, 99),
       st.dictionaries(st.sampled_from(["stage", "checkpoint", "check", "seal"]),
                       st.text(max_size=200)),
       st.integers(0, 5))
def test_an_effect_reads_as_one_short_line(effect_type: EffectType, revision: int,
                                           payload: dict[str, str], occurrence: int) -> None:
    phrase = effect_phrase(effect_type.value, revision, payload, occurrence)
    assert phrase.startswith(f"revision {revision}: ")
    assert "_" not in phrase.split(":", 1)[1].split("(")[0]  # words, not the type's name
    assert "\n" not in phrase and "\x1b" not in phrase
    assert len(phrase) < 200
    assert ("again" in phrase) == (occurrence > 0)


def test_status_without_a_quest_names_every_way_to_ask(
        capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["status"]) == 2
    err = capsys.readouterr().err
    assert "quest id" in err and "--journal" in err and "--repo" in err
