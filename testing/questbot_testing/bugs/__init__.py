"""A small bug set to measure an agent (issue 25, item 9): sample repositories, each with a
real bug of a different kind and the check that catches it.

Each bug is a directory beside this module holding a whole repository (its code, its own tests
and a README saying what is wrong), and a ``Bug`` below saying what a maintainer knows of it:
its kind, what its failing check shows, the fix a careful person would make, how CI runs the
check, and where a quest about it should end — ``fixed`` (proven, approved at A, B and C,
merged at the approved head, watched, closed), ``flaky`` (triage's re-run passed: no agent
ran) or ``parked`` (with the words a person reads on GitHub).

The repositories are other projects' code, kept as they are: ``ruff`` does not check them
(``pyproject.toml``), since fixing what it finds would fix the bugs. Every bug is real: the
suite runs each check in the sandbox and sees it fail as ``shows`` says, and pass with ``fix``
(``tests/questbot_testing/test_bugs.py``).

``questbot_testing.bugs.ci`` runs the checks as CI does and reports them to the fake GitHub;
``questbot_testing.bugs.bench`` walks each bug's quest as a maintainer would;
``questbot_testing.modelserver.make_bugs`` writes what a careful model answers for each.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

HERE = Path(__file__).parent
OWNER = "octo"
TESTS = "python3 -m unittest discover -q"
"""The check each repository's CI runs and its ``proof.commands``: its own tests, with
nothing installed."""


class Ending(StrEnum):
    """Where a bug's quest ends, as the bench tells it from GitHub's side."""

    FIXED = "fixed"
    """Proven, approved at A, B and C, merged at the approved head, watched clean, closed."""
    FLAKY = "flaky"
    """Triage's re-run of the failed check passed: ended as flaky, no agent run, no PR."""
    PARKED = "parked"
    """Stopped with a reason a person reads, waiting for one."""
    FAILED = "failed"
    """Anything else: the quest stopped somewhere no maintainer expects (stuck in a stage,
    an ending the bench does not know), or the run did not finish in time."""


@dataclass(frozen=True)
class Edit:
    """Replace ``old`` (which occurs once) by ``new`` in ``path``."""

    path: str
    old: str
    new: str


@dataclass(frozen=True)
class Bug:
    name: str
    """The directory beside this module, and the repository's name (``octo/<name>``)."""
    kind: str
    """What kind of bug, in a maintainer's words."""
    module: str
    """The file that holds the bug."""
    shows: tuple[str, ...]
    """What the failing check prints that tells the bug (each a substring of its output)."""
    fix: tuple[Edit, ...]
    """The change a careful person would make; the check passes with it."""
    ending: Ending
    """Where a quest about it ends with a careful model (the recorded one)."""
    why: str = ""
    """For ``parked``: words of the reason GitHub shows (on the ``questbot`` check run)."""
    ci: tuple[str, ...] = (TESTS,)
    """The command CI runs for the check, per attempt: the first fails; triage's re-run runs
    the next (or the last again). A flaky test's attempts differ in what CI's environment
    left to chance."""

    @property
    def repo(self) -> str:
        return f"{OWNER}/{self.name}"

    def files(self) -> dict[str, str]:
        """The repository as path → text, to create it in the fake GitHub."""
        root = HERE / self.name
        skip = {"__pycache__", ".git"}
        return {path.relative_to(root).as_posix(): path.read_text()
                for path in sorted(root.rglob("*"))
                if path.is_file() and not skip.intersection(path.relative_to(root).parts)}

    def fixed_files(self) -> dict[str, str]:
        """The repository with ``fix`` applied."""
        files = self.files()
        for edit in self.fix:
            text = files[edit.path]
            assert text.count(edit.old) == 1, f"{self.name}: {edit.old!r} is not in {edit.path} once"
            files[edit.path] = text.replace(edit.old, edit.new)
        return files

    def attempt(self, number: int) -> str:
        """The command CI runs at attempt ``number`` (1 is the run that failed)."""
        return self.ci[min(number, len(self.ci)) - 1]


SEEDS = ("PYTHONHASHSEED=0", "PYTHONHASHSEED=3")
"""Python seeds its string hashes afresh in every process; CI leaves it to chance. The two
runs of the flaky bug are the ones a runner would have made with these seeds (the first
orders the set one way, the second the other), so the flake replays the same every time."""

BUGS: tuple[Bug, ...] = (
    Bug(name="off-by-one", kind="off-by-one", module="windows.py",
        shows=("AssertionError: Lists differ", "[[1, 2], [2, 3]] != [[1, 2], [2, 3], [3, 4]]"),
        fix=(Edit("windows.py", "range(len(values) - size)", "range(len(values) - size + 1)"),),
        ending=Ending.FIXED),
    Bug(name="wrong-import", kind="wrong import", module="layers.py",
        shows=("ImportError: cannot import name 'Mapping' from 'collections'",),
        fix=(Edit("layers.py", "from collections import Mapping",
                  "from collections.abc import Mapping"),),
        ending=Ending.FIXED),
    Bug(name="type-error", kind="type error", module="timeouts.py",
        shows=("TypeError: unsupported operand type(s) for +: 'float' and 'str'",),
        fix=(Edit("timeouts.py", 'return started + settings.get("timeout", DEFAULT_TIMEOUT)',
                  'return started + float(settings.get("timeout", DEFAULT_TIMEOUT))'),),
        ending=Ending.FIXED),
    Bug(name="edge-case", kind="missing edge case", module="stats.py",
        shows=("ZeroDivisionError: division by zero",),
        fix=(Edit("stats.py", "    return sum(values) / len(values)",
                  "    if not values:\n        return 0.0\n    return sum(values) / len(values)"),),
        ending=Ending.FIXED),
    Bug(name="flaky-order", kind="flaky test", module="tests/test_tags.py",
        shows=("AssertionError: Lists differ: ['docs', 'bug'] != ['bug', 'docs']",),
        fix=(Edit("tests/test_tags.py", 'list(distinct(["Bug", "bug ", "docs"])), ["bug", "docs"]',
                  'distinct(["Bug", "bug ", "docs"]), {"bug", "docs"}'),),
        ending=Ending.FLAKY,
        ci=tuple(f"env {seed} {TESTS}" for seed in SEEDS)),
    Bug(name="spec-conflict", kind="the test and the documented rule disagree",
        module="money.py",
        shows=("AssertionError: Decimal('0.12') != Decimal('0.13')",),
        fix=(Edit("tests/test_money.py", 'to_cents("0.125"), Decimal("0.13")',
                  'to_cents("0.125"), Decimal("0.12")'),),
        ending=Ending.PARKED, why="a person must decide"),
    Bug(name="path-traversal", kind="security boundary", module="uploads.py",
        shows=("AssertionError: PermissionError not raised",),
        fix=(Edit("uploads.py", "    path = os.path.join(root, name)\n"
                                "    if not path.startswith(root):",
                  "    path = os.path.normpath(os.path.join(root, name))\n"
                  "    if not path.startswith(os.path.join(os.path.normpath(root), \"\")):"),),
        ending=Ending.PARKED, why="high-impact change"),
)
"""The set, in the order the bench reports it."""

BY_NAME: Mapping[str, Bug] = {bug.name: bug for bug in BUGS}


def settings(bug: Bug) -> str:
    """The repository's ``.github/questbot.yml``: every checkpoint waits for a person (the
    bench's scripted maintainer), the proof runs the repository's own tests, and triage
    re-runs a failed check first (the default, said aloud)."""
    return ("# questbot settings: every checkpoint waits for a person\n"
            "checkpoints: {A: blocking, B: blocking, C: blocking}\n"
            "reviewers: [maya]\n"
            "watch_window_minutes: 60\n"
            "triage: {rerun_failed: true}\n"
            "proof:\n"
            f"  commands: [\"{TESTS}\"]\n")
