"""The proof runner against a real temporary git repository."""

from __future__ import annotations

import hashlib
import tempfile
from pathlib import Path

import pytest
from pydantic import ValidationError

from bot.agent import sandbox
from bot.agent.errors import ProofRunError
from bot.agent.proof_runner import (
    EXIT_NOT_STARTED,
    EXIT_TIMED_OUT,
    CheckCommand,
    run_command,
    run_proof,
)
from bot.core.canonical import canonical_digest
from bot.core.proof import Risk
from tests.agent.conftest import git

PY = sandbox.python()  # the interpreter, as the sandbox shows it
CHECK = "from app import add\nassert add(2, 3) == 5, 'add is wrong'\nprint('ok')\n"


@pytest.fixture
def scratch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Point ``tempfile`` at a directory we can inspect for leftovers."""
    path = tmp_path / "scratch"
    path.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(path))
    return path


@pytest.fixture
def repo(tmp_path: Path) -> tuple[Path, str, str]:
    """A repository whose base has a bug and whose head fixes it: (path, base, head)."""
    path = tmp_path / "proj"
    path.mkdir()
    git(path, "init", "-q")
    (path / "app.py").write_text("def add(a, b):\n    return a - b\n")
    (path / "check.py").write_text(CHECK)
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "base")
    base = git(path, "rev-parse", "HEAD")
    (path / "app.py").write_text("def add(a, b):\n    return a + b\n")
    git(path, "commit", "-q", "-am", "fix add")
    head = git(path, "rev-parse", "HEAD")
    git(path, "checkout", "-q", base)  # the main checkout stays on the base
    return path, base, head


def worktrees(path: Path) -> list[str]:
    return [line for line in git(path, "worktree", "list").splitlines() if line]


def test_checks_run_at_the_head_and_reproduction_on_both(
    repo: tuple[Path, str, str], scratch: Path
) -> None:
    path, base, head = repo
    result = run_proof(
        path,
        quest_id="q-1",
        revision=2,
        risk=Risk.MEDIUM,
        base=base[:10],
        head=head,
        checks=[
            CheckCommand(name="unit", argv=(PY, "check.py")),
            CheckCommand(name="lint", argv=(PY, "-c", "import sys; print('E1'); sys.exit(3)")),
        ],
        reproduction=CheckCommand(name="repro", argv=(PY, "check.py")),
    )
    bundle = result.bundle
    assert (bundle.quest_id, bundle.revision, bundle.risk) == ("q-1", 2, Risk.MEDIUM)
    assert (bundle.base, bundle.head) == (base, head)  # short revs resolved to full SHAs
    assert [(c.name, c.exit_code) for c in bundle.checks] == [("unit", 0), ("lint", 3)]
    assert bundle.checks[0].output_sha256 == hashlib.sha256(b"ok\n").hexdigest()
    assert bundle.checks[1].output_sha256 == hashlib.sha256(b"E1\n").hexdigest()
    assert bundle.reproduction is not None
    assert bundle.reproduction.base_exit_code == 1
    assert bundle.reproduction.head_exit_code == 0
    assert bundle.reproduction.confirmed
    assert not bundle.all_passed  # lint failed
    assert result.digest == canonical_digest(bundle.as_json()) == bundle.digest()
    assert [(log.name, log.at) for log in result.logs] == [
        ("unit", "head"),
        ("lint", "head"),
        ("repro", "base"),
        ("repro", "head"),
    ]
    assert "add is wrong" in result.logs[2].result.output_tail
    assert len(worktrees(path)) == 1
    assert list(scratch.iterdir()) == []
    assert git(path, "rev-parse", "HEAD") == base  # the caller's checkout is untouched


def test_all_passing(repo: tuple[Path, str, str], scratch: Path) -> None:
    path, base, head = repo
    result = run_proof(
        path, quest_id="q", revision=1, risk=Risk.LOW, base=base, head=head,
        checks=[CheckCommand(name="unit", argv=(PY, "check.py"))],
    )  # fmt: skip
    assert result.bundle.all_passed
    assert result.bundle.reproduction is None
    assert len(worktrees(path)) == 1


def test_unknown_revision_is_an_error_and_leaves_nothing(
    repo: tuple[Path, str, str], scratch: Path
) -> None:
    path, base, _ = repo
    with pytest.raises(ProofRunError, match="rev-parse"):
        run_proof(
            path, quest_id="q", revision=1, risk=Risk.LOW, base=base, head="f" * 40, checks=[]
        )
    with pytest.raises(ProofRunError, match="looks like an option"):
        run_proof(path, quest_id="q", revision=1, risk=Risk.LOW, base="--all", head=base, checks=[])
    assert len(worktrees(path)) == 1
    assert list(scratch.iterdir()) == []


def test_worktree_is_removed_when_a_command_blows_up(
    repo: tuple[Path, str, str], scratch: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path, base, head = repo

    def boom(*args: object, **kwargs: object) -> None:
        raise RuntimeError("runner crashed")

    monkeypatch.setattr("bot.agent.proof_runner.run_command", boom)
    with pytest.raises(RuntimeError, match="runner crashed"):
        run_proof(
            path, quest_id="q", revision=1, risk=Risk.LOW, base=base, head=head,
            checks=[CheckCommand(name="unit", argv=(PY, "check.py"))],
        )  # fmt: skip
    assert len(worktrees(path)) == 1
    assert list(scratch.iterdir()) == []


def test_timeout_kills_and_records_124(tmp_path: Path) -> None:
    result = run_command(
        [PY, "-c", "import time; print('start', flush=True); time.sleep(30)"],
        tmp_path,
        env={},
        timeout_seconds=0.5,
    )
    assert result.exit_code == EXIT_TIMED_OUT
    assert result.timed_out
    assert result.output_tail == "start\n"


def test_missing_command_records_127(tmp_path: Path) -> None:
    result = run_command(["/nonexistent/questbot-check"], tmp_path, env={})
    assert result.exit_code == EXIT_NOT_STARTED
    assert "could not start" in result.output_tail


def test_output_is_capped_but_fully_hashed(tmp_path: Path) -> None:
    script = "import sys; sys.stdout.write('x' * 100000 + 'END')"
    result = run_command([PY, "-c", script], tmp_path, env={}, output_cap=1000)
    assert result.exit_code == 0
    assert result.truncated
    assert len(result.output_tail) == 1000
    assert result.output_tail.endswith("END")
    assert result.output_sha256 == hashlib.sha256(b"x" * 100000 + b"END").hexdigest()


def test_commands_do_not_inherit_the_workers_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("QUESTBOT_PRIVATE_KEY", "do-not-leak")
    script = "import os; print(os.environ.get('QUESTBOT_PRIVATE_KEY'), os.environ.get('EXTRA'))"
    result = run_command([PY, "-c", script], tmp_path, env={"EXTRA": "given"})
    assert result.output_tail == "None given\n"


def test_commands_are_argv_never_a_shell_string() -> None:
    with pytest.raises(ValidationError):
        CheckCommand(name="x", argv="echo hi && rm -rf /")
    with pytest.raises(ValidationError):
        CheckCommand(name="x", argv=())


SABOTEUR = """\
import pathlib, site, sys
# repository code in a check: make the reproduction pass whatever the commit holds
pathlib.Path('check.py').write_text('print("ok")\\n')
user_site = pathlib.Path(site.getusersitepackages())
user_site.mkdir(parents=True, exist_ok=True)
(user_site / 'usercustomize.py').write_text('import os\\nos._exit(0)\\n')
print('sabotaged', user_site)
"""


def test_a_check_cannot_change_what_the_reproduction_records(tmp_path: Path) -> None:
    """A check that rewrites the reproduction's test and plants a ``usercustomize.py`` in
    ``HOME`` changes nothing the reproduction records: at the head it runs in a worktree and
    ``HOME`` of its own. The head here does *not* fix the bug, so an honest proof shows the
    reproduction failing at both ends."""
    path = tmp_path / "proj"
    path.mkdir()
    git(path, "init", "-q")
    (path / "app.py").write_text("def add(a, b):\n    return a - b\n")
    (path / "check.py").write_text(CHECK)
    (path / "saboteur.py").write_text(SABOTEUR)
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "base")
    base = git(path, "rev-parse", "HEAD")
    (path / "README").write_text("nothing fixed\n")
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "head that fixes nothing")
    head = git(path, "rev-parse", "HEAD")
    result = run_proof(
        path, quest_id="q", revision=1, risk=Risk.LOW, base=base, head=head,
        checks=[CheckCommand(name="saboteur", argv=(PY, "saboteur.py")),
                CheckCommand(name="after", argv=(PY, "check.py"))],
        reproduction=CheckCommand(name="repro", argv=(PY, "check.py")))
    assert "sabotaged" in result.logs[0].result.output_tail
    # the checks share a worktree and HOME, as a CI job's steps do: the sabotage took
    assert [c.exit_code for c in result.bundle.checks] == [0, 0]
    repro = result.bundle.reproduction
    assert repro is not None
    assert (repro.base_exit_code, repro.head_exit_code) == (1, 1)
    assert not repro.confirmed
    assert "add is wrong" in result.logs[3].result.output_tail
