"""The settings file's JSON Schema is made from the model that reads the file, published as
``docs/questbot.schema.json``, and agrees with questbot on what it accepts; ``check-config``
says what questbot would make of a file, running nothing."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from jsonschema import Draft202012Validator  # type: ignore[import-untyped]

from bot.settings.repository.json_schema import settings_schema, settings_schema_text
from bot.settings.repository.schema import SettingsError, parse_settings
from questbot_testing import PROJECT
from questbot_testing.scenario import SETTINGS

PUBLISHED = PROJECT / "docs" / "questbot.schema.json"


def readme_settings() -> str:
    readme = (PROJECT / "README.md").read_text()
    blocks = re.findall(r"```yaml\n(.*?)```", readme, flags=re.S)
    (whole,) = [block for block in blocks if block.startswith("label:")]
    return str(whole)


def schema_problems(text: str) -> list[str]:
    data: Any = yaml.safe_load(text) or {}
    validator = Draft202012Validator(settings_schema())
    return [f"{'.'.join(map(str, e.absolute_path))}: {e.message}"
            for e in validator.iter_errors(data)]


def test_the_published_schema_is_the_generated_one() -> None:
    assert PUBLISHED.read_text() == settings_schema_text(), (
        "docs/questbot.schema.json is stale: questbot check-config --schema > "
        "docs/questbot.schema.json")
    Draft202012Validator.check_schema(settings_schema())


@pytest.mark.parametrize("text", [readme_settings(), SETTINGS, "", "label: fixme\n",
                                  "proof:\n  commands: ['pytest -q', [ruff, check, .]]\n",
                                  "agent: {kind: command, preset: aider, network: true}\n"])
def test_what_questbot_accepts_the_schema_accepts(text: str) -> None:
    parse_settings(text)
    assert schema_problems(text) == []


@pytest.mark.parametrize("text", ["max_live_quest: 3\n", "checkpoints: {B: advisry}\n",
                                  "merge_method: octopus\n", "max_attempts: 0\n",
                                  "proof: {commands: [[]]}\n", "agent: {preset: vim}\n",
                                  "budget: {usd: -1}\n", "routes: {issue: maybe}\n"])
def test_what_questbot_refuses_the_schema_refuses(text: str) -> None:
    with pytest.raises(SettingsError):
        parse_settings(text)
    assert schema_problems(text) != []


def test_an_editor_shows_the_settings_words_not_ours() -> None:
    text = json.dumps(settings_schema())
    assert "``" not in text and '"title": "Max Attempts"' not in text
    assert "Quests worked on at once" in settings_schema()["properties"]["max_live_quests"][
        "description"]


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "bot", "check-config", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=60)


def test_check_config_says_what_questbot_would_make_of_a_file(tmp_path: Path) -> None:
    (tmp_path / ".github").mkdir()
    (tmp_path / ".github" / "questbot.yml").write_text("label: fixme\nmax_attempts: 5\n")
    good = run(cwd=tmp_path)
    assert good.returncode == 0
    assert good.stdout.strip() == (".github/questbot.yml is good: it sets label, max_attempts; "
                                   "everything else is the default")
    bad = tmp_path / "bad.yml"
    bad.write_text("label: fixme\nmax_live_quest: 3\ncheckpoints: {A: blocking, B: advisry}\n")
    refused = run(str(bad), cwd=tmp_path)
    assert refused.returncode == 1
    assert "2 problems; questbot would keep its last good settings" in refused.stdout
    assert "line 2: `max_live_quest` is not a setting; did you mean `max_live_quests`?" in (
        refused.stdout)
    assert "line 3: `checkpoints.B` must be one of blocking, advisory" in refused.stdout
    absent = run(str(tmp_path / "absent.yml"), cwd=tmp_path)
    assert absent.returncode == 2 and "cannot read" in absent.stderr
    schema = run("--schema", cwd=tmp_path)
    assert schema.returncode == 0 and json.loads(schema.stdout) == settings_schema()
