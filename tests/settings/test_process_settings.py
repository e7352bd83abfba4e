"""The process's settings as people meet them (issue 24, item 4): every one in the README's
table, a misspelt one named with the setting it was meant to be, each process's ``--help``
naming what it reads."""

from __future__ import annotations

import argparse
import os
import re
from pathlib import Path

import pytest

from bot.__main__ import _config, build_parser
from bot.settings.process import Config, load_config, read_by, setting_names
from bot.settings.process.names import unknown_settings
from questbot_testing.fakegithub import shared_key_pair

ROOT = Path(__file__).resolve().parents[2]
NAME = re.compile(r"`([A-Z][A-Z0-9_]+)`")


def readme_settings() -> list[str]:
    """The variables the first column of the README's table under "Setting up" names."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## Setting up", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| `")]
    return [name for row in rows for name in NAME.findall(row.split("|")[1])]


def test_every_setting_is_in_the_readme_and_nothing_else_is() -> None:
    named = readme_settings()
    assert len(named) == len(set(named)), "a setting is in the table twice"
    assert set(named) == set(setting_names())
    assert "QUESTBOT_PUBLIC_URL" in named  # the one the README missed


def test_every_field_of_the_settings_model_has_a_variable() -> None:
    aliases = [field.validation_alias for field in Config.model_fields.values()]
    assert all(isinstance(alias, str) and alias.isupper() for alias in aliases)
    assert len(set(aliases)) == len(aliases)


@pytest.fixture
def env() -> dict[str, str]:
    return {"GITHUB_APP_ID": "123", "GITHUB_PRIVATE_KEY": shared_key_pair().private_pem,
            "GITHUB_WEBHOOK_SECRET": "a-webhook-secret-long-enough"}


def test_a_misspelt_setting_is_named_with_the_one_it_was_meant_to_be(
        env: dict[str, str]) -> None:
    config = load_config({**env, "QUESTBOT_MODLE": "gpt-4.1-mini"})
    assert config.warnings == ("QUESTBOT_MODLE is not a setting questbot reads; did you "
                               "mean QUESTBOT_MODEL?",)
    assert config.model_name is None  # still no model: a warning, not a guess


def test_in_the_env_file_too(env: dict[str, str], tmp_path: Path) -> None:
    dotenv = tmp_path / ".env"
    dotenv.write_text("QUESTBOT_SANBOX=unsafe-off\nGITHUB_APP_IDD=7\nOTHER_TOOL=1\n")
    warnings = load_config(env, env_file=dotenv).warnings
    assert warnings == (
        f"GITHUB_APP_IDD (in {dotenv}) is not a setting questbot reads; did you mean "
        "GITHUB_APP_ID?",
        f"QUESTBOT_SANBOX (in {dotenv}) is not a setting questbot reads; did you mean "
        "QUESTBOT_SANDBOX?")


def test_known_and_development_variables_are_not_warned_about(env: dict[str, str],
                                                               tmp_path: Path) -> None:
    quiet = {**env, "QUESTBOT_MODEL": "m", "QUESTBOT_CACHE": "/cache", "QUESTBOT_ENV_FILE": "x",
             "QUESTBOT_CHAOS_SEED": "1", "PATH": "/bin", "GITHUB_TOKEN": "t"}
    assert load_config(quiet).warnings == ()
    dotenv = tmp_path / ".env"  # register's GitHub Enterprise host: close to a setting, and read
    dotenv.write_text("GITHUB_URL=https://github.example\n")
    assert load_config(env, env_file=dotenv).warnings == ()
    assert unknown_settings({"QUESTBOT_SOMETHING_NEW": "1"}, {}, setting_names()) == [
        "QUESTBOT_SOMETHING_NEW is not a setting questbot reads; the README's table under "
        "\"Setting up\" lists every setting"]


def test_the_process_says_it_at_start(env: dict[str, str], tmp_path: Path,
                                      monkeypatch: pytest.MonkeyPatch,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    """``serve`` and ``worker`` load their settings through ``_config``: the warning reaches
    stderr before anything starts."""
    monkeypatch.chdir(tmp_path)  # no .env of the checkout's
    for name in [name for name in os.environ if name.startswith("QUESTBOT_")]:
        monkeypatch.delenv(name)  # whatever the machine running the tests sets
    for name, value in {**env, "QUESTBOT_MODLE": "x"}.items():
        monkeypatch.setenv(name, value)
    _config()
    assert capsys.readouterr().err == (
        "questbot: warning: QUESTBOT_MODLE is not a setting questbot reads; did you mean "
        "QUESTBOT_MODEL?\n")


@pytest.mark.parametrize("process", ["serve", "worker"])
def test_each_process_help_names_the_settings_it_reads(process: str) -> None:
    subparsers = next(a for a in build_parser()._actions if a.dest == "command")
    text = subparsers.choices[process].format_help()  # type: ignore[attr-defined]
    flat = " ".join(text.split())
    for name in read_by(process):
        assert name in flat
    assert "`" not in text and "QUESTBOT_ENV_FILE" in flat and "./.env" in flat
    assert ("GITHUB_WEBHOOK_SECRET" in flat) and (("QUESTBOT_MODEL" in flat) == (
        process == "worker"))


def _helps(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()) -> dict[str, str]:
    found = {" ".join(path): parser.format_help()}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                found |= _helps(child, (*path, name))
    return found


def test_every_help_is_plain_text_and_names_its_settings() -> None:
    helps = _helps(build_parser())
    assert not [name for name, text in helps.items() if "`" in text or "``" in text]
    reading = {"serve", "worker", "status", "proof", "register", "receive", "lessons",
               "review request", "model check"}
    assert not [name for name in reading if "Settings it reads" not in helps[name]]
    for name in reading - {"serve", "worker"}:  # what it names are settings or their notes
        said = " ".join(helps[name].split()).split("Settings it reads", 1)[1]
        assert set(re.findall(r"\b[A-Z][A-Z0-9_]{3,}\b", said)) <= {
            *setting_names(), "GITHUB_URL"}, name
