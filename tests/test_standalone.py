"""The repository stands on its own: a clone with nothing beside it has everything the demo and
the tests read, questbot never imports its test stack, and what a repository carries — a
licence, a version — is there."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from bot.__main__ import version
from questbot_testing import PROJECT

OUTSIDE = re.compile(r"\.\./sh" r"ared|QUESTBOT_SH" r"ARED|(?<!/home/runner)/work/")
"""A path outside the checkout, or the variable that once pointed at one. A GitHub-hosted
runner's workspace, ``/home/runner/work/<repo>/<repo>``, is no path of this machine: the bug
set's CI prints it as a runner does (``questbot_testing.bugs.ci``)."""


def tracked() -> list[Path]:
    names = subprocess.run(["git", "ls-files", "-z"], cwd=PROJECT, capture_output=True,
                           check=True).stdout.decode().split("\0")
    return [PROJECT / name for name in names if name and (PROJECT / name).is_file()]


def python_files(*roots: str) -> list[Path]:
    return sorted(p for root in roots for p in (PROJECT / root).rglob("*.py"))


def imports_of(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
    return found


def test_no_tracked_file_names_a_path_outside_the_repository() -> None:
    this = Path(__file__).resolve()
    offenders = []
    for path in tracked():
        if path.resolve() == this:
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        offenders += [f"{path.relative_to(PROJECT)}:{n}: {line.strip()[:120]}"
                      for n, line in enumerate(text.splitlines(), 1) if OUTSIDE.search(line)]
    assert offenders == []


def test_the_check_would_catch_a_path_outside() -> None:
    # the sibling folder's name and its variable are built here, so this file names neither
    sibling = "sh" + "ared"
    assert OUTSIDE.search(f"SIBLING = PROJECT.parent  # ../{sibling}/github") is not None
    assert OUTSIDE.search(f"os.environ['QUESTBOT_{sibling.upper()}']") is not None
    assert OUTSIDE.search('run(["/work/main/.venv/bin/python", "-V"])') is not None
    assert OUTSIDE.search("docs/BEHAVIOUR.md §15") is None
    assert OUTSIDE.search('File "/home/runner/work/pager/pager/tests/test_pager.py"') is None
    assert OUTSIDE.search("/home/maya/work/questbot") is not None


@pytest.mark.parametrize("root", ["scripts", "tests", "testing", "bot"])
def test_nothing_edits_sys_path(root: str) -> None:
    """Scripts import questbot and its test stack as installed packages (scripts/setup)."""
    edits = [str(p.relative_to(PROJECT)) for p in python_files(root)
             if re.search(r"sys\.path\.(insert|append)|sys\.path\s*[+]?=", p.read_text())]
    assert edits == []


def test_questbot_never_imports_its_test_stack() -> None:
    wrong = {str(p.relative_to(PROJECT)): sorted(m for m in imports_of(p)
                                                  if m.split(".")[0] in ("questbot_testing",
                                                                         "tests", "scripts"))
             for p in python_files("bot")}
    assert {path: mods for path, mods in wrong.items() if mods} == {}


def test_the_test_stack_never_imports_the_tests() -> None:
    wrong = {str(p.relative_to(PROJECT)): sorted(m for m in imports_of(p)
                                                  if m.split(".")[0] in ("tests", "scripts"))
             for p in python_files("testing")}
    assert {path: mods for path, mods in wrong.items() if mods} == {}


def test_no_test_helper_hides_in_bot() -> None:
    """What only the tests and the demo use lives in the test stack: the demo's sample and
    the lifecycle scenarios moved there, and nothing in bot/ names them."""
    assert not (PROJECT / "bot" / "agent" / "demo_spec.py").exists()
    assert not (PROJECT / "bot" / "tools" / "scenarios.py").exists()
    assert (PROJECT / "testing" / "questbot_testing" / "sample.py").is_file()


def test_tests_mirror_the_packages() -> None:
    """``tests/`` mirrors ``bot/`` and the test stack, plus the whole-stack folders and
    ``deploy/`` (the image and compose file, which mirror the repository's ``deploy/``)."""
    packages = {p.name for p in (PROJECT / "bot").iterdir()
                if p.is_dir() and (p / "__init__.py").exists()}
    folders = {p.name for p in (PROJECT / "tests").iterdir()
               if p.is_dir() and (p / "__init__.py").exists()}
    extra = folders - packages - {"questbot_testing", "e2e", "fuzz", "cluster", "sandbox",
                                  "security", "deploy"}
    assert extra == set()


def test_the_licence_is_the_one_pyproject_names() -> None:
    project = tomllib.loads((PROJECT / "pyproject.toml").read_text())["project"]
    assert project["license"] == "MIT"
    assert (PROJECT / "LICENSE").read_text().startswith("MIT License")
    assert project["license-files"] == ["LICENSE"]


def test_the_version_is_pyprojects() -> None:
    project = tomllib.loads((PROJECT / "pyproject.toml").read_text())["project"]
    assert version() == project["version"]
    done = subprocess.run([sys.executable, "-m", "bot", "--version"], capture_output=True,
                          text=True, check=True)
    assert done.stdout.strip() == f"questbot {project['version']}"
    console = Path(sys.executable).with_name("questbot")
    done = subprocess.run([str(console), "--version"], capture_output=True, text=True,
                          check=True)
    assert done.stdout.strip() == f"questbot {project['version']}"


def test_the_help_reads_as_text_not_markup() -> None:
    done = subprocess.run([str(Path(sys.executable).with_name("questbot")), "--help"],
                          capture_output=True, text=True, check=True)
    assert done.stdout.startswith("usage: questbot ")
    assert "``" not in done.stdout
