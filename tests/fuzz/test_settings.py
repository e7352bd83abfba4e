"""Fuzzing the settings loader: any ``.github/questbot.yml`` is settings or a report of problems.

Three kinds of text: arbitrary characters weighted toward YAML's indicators; arbitrary YAML
documents (any data, dumped in any style, with anchors and aliases); and near-valid settings —
a good file with a few values damaged, keys misspelt, sections replaced. ``parse_settings``
returns ``Settings`` that survive being written out and read back, or raises ``SettingsError``
whose every problem names a line of the file (or none) and renders as the check run's text.
Through ``RepoSettings`` on the fake GitHub, a bad file leaves the last good settings in force
and is reported on a ``questbot/settings`` check run.

The explicit examples are the crashes and hangs the fuzzer found, kept so they stay fixed.
"""

from __future__ import annotations

import re
import time
from typing import Any

import yaml
from hypothesis import example, given
from hypothesis import strategies as st

from bot.github.repo_settings import SETTINGS_CHECK, RepoSettings
from bot.settings.repository.schema import (
    Settings,
    SettingsError,
    parse_settings,
    render_settings_problem,
)
from tests.fuzz.budget import fuzz
from tests.fuzz.strategies import json_values, mutated, scalars
from tests.github.conftest import REPO, World


def _dump(data: Any, **style: Any) -> str:
    """YAML for ``data``; libyaml's emitter, since the pure-Python one takes 100 ms a value."""
    return yaml.dump(data, Dumper=yaml.CSafeDumper, **style)


GOOD: dict[str, Any] = {
    "label": "questbot", "routes": {"check_failure": "auto_fix", "issue": "human"},
    "checkpoints": {"A": "blocking", "B": "blocking", "C": "advisory"}, "shadow": False,
    "max_attempts": 3, "max_live_quests": 7, "reviewers": ["alice", "@bob"],
    "watch_window_minutes": 60, "proof": {"commands": ["pytest -q", ["ruff", "check", "."]]},
    "agent": {"kind": "command", "command": "./agent --json", "timeout_seconds": 1800},
}
"""Every setting, valid: the start of the near-valid documents."""

yaml_chars = st.text(alphabet=st.sampled_from(list("-?:,[]{}#&*!|>'\"%@`~ \n\t\r\\") +
                                              list("abAB019._<=") + ["\u00e9", "\ufeff"]),
                     max_size=80)
any_text = st.text(max_size=200) | yaml_chars


@st.composite
def documents(draw: st.DrawFn) -> str:
    """Any data as YAML, in block or flow style, sometimes with one value repeated by alias."""
    data = draw(json_values | st.dictionaries(st.sampled_from(sorted(GOOD)), json_values))
    if isinstance(data, dict) and data and draw(st.booleans()):
        key = draw(st.sampled_from(sorted(data)))
        data[f"{key}_again"] = data[key]  # safe_dump writes the shared object as &id001/*id001
    return _dump(data, default_flow_style=draw(st.sampled_from([None, True, False])),
                          allow_unicode=draw(st.booleans()), width=draw(st.integers(20, 200)))


near_valid = mutated(GOOD, max_mutations=3).map(
    lambda data: _dump(data, sort_keys=False, allow_unicode=True))
misspelt = st.builds(
    lambda good, typo, value: good.replace(f"\n{typo}:", f"\n{typo[:-1]}:", 1)
    .replace("\nshadow: false", f"\nshadow: {value}"),
    st.just(_dump(GOOD, sort_keys=False)), st.sampled_from(sorted(GOOD)),
    scalars.map(lambda value: _dump(value).split("\n")[0]),
)
settings_texts = any_text | documents() | near_valid | misspelt

_BOMB = "a: &a [x,x,x,x,x,x,x,x,x]\n" + "".join(
    f"{c}: &{c} [{','.join(['*' + p] * 9)}]\n" for p, c in zip("abcdefgh", "bcdefghi", strict=True))
FOUND = [
    "[" * 5000 + "]" * 5000,  # RecursionError in PyYAML's composer
    "proof: " + "{commands: " * 3000 + "}" * 3000,
    _BOMB,  # 387 million list items to validate: a hang
    "reviewers: &a [*a]\n",  # RecursionError while describing the self-containing value
    "? [a, b]\n: c\n",  # TypeError: unhashable type: 'list'
    "label: \ud800\n",  # UnicodeEncodeError measuring the size
    "max_attempts: " + "9" * 5000 + "\n",  # ValueError: Exceeds the limit (4300 digits)
    "label: 2001-13-01\n",  # ValueError: month must be in 1..12
    "defaults: &d {shadow: true}\n<<: *d\n",  # a merge key was refused as an unknown tag
    "{",  # libyaml's end of an unfinished document is on line 2 of a one-line file
]


def check(text: str) -> Settings | SettingsError:
    lines = len(re.split("\r\n|[\r\n\x85\u2028\u2029]", text))  # YAML's line breaks
    started = time.perf_counter()
    try:
        settings = parse_settings(text)
    except SettingsError as error:
        assert time.perf_counter() - started < 5.0
        assert error.problems
        for problem in error.problems:
            assert problem.message and (problem.line is None or 1 <= problem.line <= lines)
        assert "questbot cannot use" in render_settings_problem(error)
        return error
    assert time.perf_counter() - started < 5.0
    written = _dump(settings.model_dump(mode="json"), allow_unicode=True)
    assert parse_settings(written) == settings
    return settings


def _storable(text: str) -> bool:
    """Git stores bytes: a text with a lone surrogate has no UTF-8 to push. Long texts are left
    to the parser's fuzzer: through GitHub they cost time and show nothing more."""
    try:
        return len(text.encode()) < 4096
    except UnicodeEncodeError:
        return False


def _examples(test: Any) -> Any:
    for found in FOUND:
        test = example(found)(test)
    return test


@fuzz(250)
@given(settings_texts)
@_examples
def test_any_settings_file_is_settings_or_problems(text: str) -> None:
    check(text)


def test_a_merge_key_is_yaml_and_explicit_keys_win() -> None:
    text = "defaults: &d {shadow: true, max_attempts: 5}\n"
    assert isinstance(check(text), SettingsError)  # `defaults` is not a setting
    settings = parse_settings("<<: {shadow: true, max_attempts: 5}\nmax_attempts: 2\n")
    assert settings.shadow and settings.max_attempts == 2


def test_the_problems_found_say_what_to_do() -> None:
    def only(text: str) -> str:
        error = check(text)
        assert isinstance(error, SettingsError)
        [problem] = error.problems
        return str(problem)

    assert "nesting depth" in only(FOUND[0])  # libyaml's own limit: 1,000 levels
    assert "more than 32 levels deep" in only("a:" + " [" * 40 + "]" * 40)
    assert "aliases are expanded" in only(_BOMB)
    assert "used inside &a itself" in only(FOUND[3])
    assert "a key must be a name" in only(FOUND[4])
    assert "put it in quotes" in only(FOUND[7])
    assert "is not UTF-8 text" in only(FOUND[5])
    assert only("{").endswith("line 1: is not valid YAML: did not find expected node content "
                              "(at the end of the file)")


@fuzz(10)
@given(st.lists(settings_texts.filter(_storable), min_size=1, max_size=4))
async def test_a_bad_file_is_reported_and_the_last_good_settings_stay(
        world: World, texts: list[str]) -> None:
    await world.redis.flushdb()  # no last good settings: every example starts afresh
    await world.clients.remember_installation(REPO, world.fake.repo(REPO).installation_id)
    good = "max_attempts: 5\nreviewers: [alice]\n"
    await world.fake.push(REPO, "main", {".github/questbot.yml": good})
    source = RepoSettings(world.clients, world.redis)
    in_force = await source.settings(REPO)
    reported = None  # the blob of the bad file last reported: each is reported once in a row
    for text in texts:
        commit = await world.fake.push(REPO, "main", {".github/questbot.yml": text})
        blob = world.fake.repo(REPO).git.files(commit.sha)[".github/questbot.yml"]
        source.forget(REPO)
        expected = check(text)
        settings = await source.settings(REPO)
        runs = [run.conclusion for run in world.fake.repo(REPO).check_runs.values()
                if run.name == SETTINGS_CHECK and run.head_sha == commit.sha]
        if isinstance(expected, Settings):
            in_force = expected
            assert runs == ([] if reported is None else ["success"])
            reported = None
        else:
            assert runs == ([] if blob == reported else ["failure"])
            reported = blob
        assert settings == in_force
