"""The generated lifecycle docs are current, and the replay CLI reproduces the example journals."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from bot.__main__ import main
from bot.core import State
from bot.tools.lifecycle_docs import render
from bot.tools.replay import read_journal

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"


def test_lifecycle_docs_are_generated_from_the_table() -> None:
    current = (ROOT / "docs" / "lifecycle.md").read_text(encoding="utf-8")
    assert current == render(), "docs/lifecycle.md is stale: run scripts/gen_lifecycle_docs.py"
    for state in State:
        assert f"`{state.value}`" in current


@pytest.mark.parametrize(("name", "state", "revision"), [
    ("main-line-closed.jsonl", "closed", 1),
    ("rollback-revision-2.jsonl", "researching", 2),
    ("parked-attempts-exhausted.jsonl", "parked", 1),
])
def test_replay_cli_reproduces_the_examples(
    name: str, state: str, revision: int, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["replay", str(EXAMPLES / name), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert (out["state"], out["revision"], out["invalid"]) == (state, revision, None)
    keys = [e["key"] for e in out["effects"]]
    assert len(keys) == len(set(keys)) and keys
    events = read_journal(EXAMPLES / name)
    assert all(k.split(":")[3] in {e.id for e in events} for k in keys)


def test_replay_of_the_rollback_example_shows_revision_2_research(
    capsys: pytest.CaptureFixture[str],
) -> None:
    main(["replay", str(EXAMPLES / "rollback-revision-2.jsonl")])
    text = capsys.readouterr().out
    assert "researching at revision 2" in text
    assert "revision 1: revert the merged change on GitHub" in text
    assert "revision 2: run the agent's stage (research)" in text
    assert "q-rollback:1:" not in text  # no key chains: those are --json's


def test_replay_exits_non_zero_and_names_the_invalid_transition(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = (EXAMPLES / "main-line-closed.jsonl").read_text().splitlines()
    bad = json.loads(next(line for line in lines if '"checkpoint_decided"' in line))  # at A
    bad["id"] = "bad-1"
    journal = tmp_path / "bad.jsonl"
    journal.write_text("\n".join([*lines[:2], json.dumps(bad), *lines[2:]]) + "\n")
    assert main(["replay", str(journal)]) == 1
    text = capsys.readouterr().out
    assert "invalid transition: event #2 (bad-1, checkpoint_decided) in state researching" in text


def test_replay_reports_a_malformed_journal_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    journal = tmp_path / "broken.jsonl"
    journal.write_text('{"type": "landed"}\n')
    assert main(["replay", str(journal)]) == 2
    assert "broken.jsonl:1: not a valid event" in capsys.readouterr().err


def test_replay_runs_as_a_module() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "bot", "replay", str(EXAMPLES / "main-line-closed.jsonl")],
        capture_output=True, text=True, check=False, cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr
    assert "closed at revision 1" in done.stdout


def test_examples_are_what_the_scenarios_build() -> None:
    """examples/ is written by scripts/make_examples.py; it must not drift from the core."""
    from questbot_testing.journals import main_line
    from scripts.make_examples import attempts_exhausted, rollback

    for name, builder in [("main-line-closed.jsonl", main_line("q-main")),
                          ("rollback-revision-2.jsonl", rollback()),
                          ("parked-attempts-exhausted.jsonl", attempts_exhausted())]:
        assert read_journal(EXAMPLES / name) == builder.events
