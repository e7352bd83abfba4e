"""Fixtures for the agent tests: real git repositories in a temporary directory."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest


def git(repo: Path, *args: str) -> str:
    """Run git in ``repo`` with a fixed identity; return its stdout."""
    completed = subprocess.run(
        ["git", "-c", "user.name=questbot tests", "-c", "user.email=tests@questbot.invalid",
         "-c", "commit.gpgsign=false", "-c", "init.defaultBranch=main", *args],
        cwd=repo, check=True, capture_output=True, text=True,
    )  # fmt: skip
    return completed.stdout.strip()


APP_PY = '''\
def add(a, b):
    """Add two numbers."""
    return a +  b


def divide(a, b):
    return a / b
'''


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    """A committed git checkout with a little code, a secret outside it and two symlinks."""
    outside = tmp_path / "outside.txt"
    outside.write_text("TOP SECRET outside the checkout\n")
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    (repo / "src").mkdir()
    (repo / "src" / "app.py").write_text(APP_PY)
    (repo / "README.md").write_text("# demo\n\nA demo repository.\n")
    (repo / "link_out").symlink_to(outside)
    (repo / "link_in").symlink_to(repo / "src" / "app.py")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "initial")
    return repo
