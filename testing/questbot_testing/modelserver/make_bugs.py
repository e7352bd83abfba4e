"""What a careful model answers for each bug of the bug set (``questbot_testing.bugs``): one
recorded conversation per bug and stage, written beside the demo's by ``make_recorded``
(``recorded/<protocol>/bug-<name>-<stage>.json``), in the same shapes.

A conversation is found by the stage and the repository on the first line of its first
message (``stage: research; … repository: octo/off-by-one;``), so the whole set runs at once
on one model server. Each turn's ``last_contains`` is what questbot must have sent since the
model's last answer — the failing check's real output (``Bug.shows``) from ``read_log``, the
lines of the files it read, the reproduction failing, the tests passing after the patch — so a
recording is also a statement that questbot handed the model the real evidence.

Where each bug ends with this model:

* **fixed** (off-by-one, wrong-import, type-error, edge-case): research quotes the code, the
  reproduction fails on the base, the patch is the fix a careful person would make
  (``Bug.fix``), and after it lands the model writes a lesson its reviewer keeps.
* **flaky-order**: none; triage's re-run passes and no agent runs.
* **spec-conflict**: research finds the test and the documented rule at odds and halts for a
  person: which is right is not the agent's call.
* **path-traversal**: the bug is found and reproduced, but the plan moves a security boundary,
  so the model rates it high risk — and questbot stops a high-impact change for a person
  before the model is asked for a patch.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from questbot_testing.bugs import BY_NAME, Bug
from questbot_testing.modelserver.make_recorded import (
    LESSON_TOOLS,
    READ_ONLY,
    REVIEW_TOOLS,
    WRITING,
    Script,
    Turn,
)

REPRO_PATH = "tests/test_questbot_reproduction.py"
REPRO_ARGV = ["python3", "-m", "unittest", "-q", "tests.test_questbot_reproduction"]
TESTS_ARGV = ["python3", "-m", "unittest", "-q"]
"""The commands run the ``python3`` the repositories' own checks name (``bugs.TESTS``), as a
model reads it from their settings and READMEs: no substitution, so the set's conversations
hold no path of the machine they run on."""


@dataclass(frozen=True)
class Careful:
    """A careful model's answers for one bug."""

    hypothesis: str
    claims: tuple[tuple[str, str, str], ...]
    """``(statement, path, quote)``; the line is found in the file."""
    reads: tuple[str, ...]
    """The files research reads after the log."""
    reproduction: str = ""
    """The reproduction test's text (``REPRO_PATH``)."""
    failing: str = ""
    """What the reproduction prints on the base that shows the bug."""
    plan: str = ""
    risk: str = "low"
    message: str = ""
    lesson: str = ""
    halt: str = ""
    """Research halts for a person with this reason instead of answering."""


def _test(doc: str, imports: str, body: str) -> str:
    return (f'"""Written by questbot: {doc}"""\n\nimport unittest\n\n{imports}\n\n\n{body}\n\n'
            'if __name__ == "__main__":\n    unittest.main()\n')


ANSWERS: dict[str, Careful] = {
    "off-by-one": Careful(
        hypothesis="windows() iterates range(len(values) - size), one short of the "
                   "n - size + 1 windows its docstring promises, so the last window and the "
                   "last moving average are lost: [1, 2, 3, 4] in windows of two gives "
                   "[[1, 2], [2, 3]].",
        claims=(("windows() stops one window short", "windows.py",
                 "for i in range(len(values) - size)]"),
                ("the docstring promises n - size + 1 windows", "windows.py",
                 "n values give n - size + 1"),
                ("the test expects three windows of two from four values",
                 "tests/test_windows.py",
                 "self.assertEqual(windows([1, 2, 3, 4], 2), [[1, 2], [2, 3], [3, 4]])")),
        reads=("windows.py", "tests/test_windows.py"),
        reproduction=_test(
            "the smallest check that shows the lost last window.",
            "from windows import windows",
            "class LastWindowTest(unittest.TestCase):\n"
            "    def test_four_values_make_three_windows_of_two(self) -> None:\n"
            "        self.assertEqual(len(windows([1, 2, 3, 4], 2)), 3)\n\n"
            "    def test_the_last_window_ends_with_the_last_value(self) -> None:\n"
            "        self.assertEqual(windows([1, 2, 3, 4], 2)[-1], [3, 4])\n"),
        failing="AssertionError: 2 != 3",
        plan="Iterate range(len(values) - size + 1) in windows(), so the last window is "
             "made. One line in windows.py.",
        message="Make the last window in windows()",
        lesson="In this repository the tests check fails when windows() stops one window "
               "short; the fix pattern was range(len(values) - size + 1) in windows.py, "
               "proved by a reproduction test of its own."),
    "wrong-import": Careful(
        hypothesis="layers.py imports Mapping from collections, which Python 3.10 removed "
                   "(the abstract base class lives in collections.abc), so importing layers "
                   "raises ImportError and every test in tests/test_layers.py errors before "
                   "it runs.",
        claims=(("layers.py imports Mapping from collections", "layers.py",
                 "from collections import Mapping"),
                ("every test imports layers first", "tests/test_layers.py",
                 "from layers import layered, merge")),
        reads=("layers.py", "tests/test_layers.py"),
        reproduction=_test(
            "importing layers fails on Python 3.10 and later.",
            "import importlib",
            "class ImportTest(unittest.TestCase):\n"
            "    def test_layers_imports(self) -> None:\n"
            "        importlib.import_module(\"layers\")\n"),
        failing="ImportError: cannot import name 'Mapping'",
        plan="Import Mapping from collections.abc, where it has lived since Python 3.3. One "
             "line in layers.py.",
        message="Import Mapping from collections.abc",
        lesson="In this repository the tests check errors on import when a module takes an "
               "abstract base class from collections; the fix pattern was importing it from "
               "collections.abc, in layers.py."),
    "type-error": Careful(
        hypothesis="load() keeps every value as text, and deadline() adds "
                   "settings.get(\"timeout\") to a float as it is, so a timeout from the "
                   "settings file raises TypeError (float + str); the default works only "
                   "because it is a number.",
        claims=(("load keeps values as text", "timeouts.py",
                 "def load(text: str) -> dict[str, str]:"),
                ("deadline adds the setting as it is", "timeouts.py",
                 "return started + settings.get(\"timeout\", DEFAULT_TIMEOUT)"),
                ("the test reads the timeout from a settings file", "tests/test_timeouts.py",
                 "deadline(load(\"timeout = 45\\n\"), 100.0)")),
        reads=("timeouts.py", "tests/test_timeouts.py"),
        reproduction=_test(
            "a timeout read from a settings file is text, and deadline() adds it as text.",
            "from timeouts import deadline",
            "class TimeoutFromTextTest(unittest.TestCase):\n"
            "    def test_a_timeout_read_as_text_counts_as_seconds(self) -> None:\n"
            "        self.assertEqual(deadline({\"timeout\": \"2.5\"}, 10.0), 12.5)\n"),
        failing="TypeError: unsupported operand type(s)",
        plan="Convert the timeout setting with float() in deadline(), which takes the text "
             "load() gives and the default alike. One line in timeouts.py.",
        message="Read the timeout setting as a number in deadline()",
        lesson="In this repository settings are read as text by load(); the tests check "
               "failed when deadline() used a setting without converting it, and the fix "
               "pattern was float() at the point of use, in timeouts.py."),
    "edge-case": Careful(
        hypothesis="mean() divides by len(values) with no case for an empty list, which its "
                   "docstring promises (0.0 for a day with no requests), so summary([]) "
                   "raises ZeroDivisionError.",
        claims=(("mean divides by the number of values", "stats.py",
                 "return sum(values) / len(values)"),
                ("the docstring promises 0.0 for no requests", "stats.py",
                 "0.0 for a day with no requests"),
                ("the test asks for the summary of an empty day", "tests/test_stats.py",
                 "self.assertEqual(summary([]), {\"count\": 0.0, \"mean\": 0.0, "
                 "\"slowest\": 0.0})")),
        reads=("stats.py", "tests/test_stats.py"),
        reproduction=_test(
            "a day with no requests has a mean of 0.0.",
            "from stats import mean",
            "class EmptyDayTest(unittest.TestCase):\n"
            "    def test_no_values_have_a_mean_of_zero(self) -> None:\n"
            "        self.assertEqual(mean([]), 0.0)\n"),
        failing="ZeroDivisionError: division by zero",
        plan="Return 0.0 from mean() when there are no values, as its docstring says. Two "
             "lines in stats.py.",
        message="Give an empty day a mean of 0.0",
        lesson="In this repository the tests check covers days with no requests; it failed "
               "when mean() divided by zero, and the fix pattern was returning 0.0 for no "
               "values first, in stats.py, as the docstring promised."),
    "spec-conflict": Careful(
        hypothesis="",
        claims=(),
        reads=("money.py", "tests/test_money.py", "LEDGER.md"),
        halt="The failing test expects 0.125 to round up to 0.13, but money.py rounds half "
             "to even, as LEDGER.md requires for every amount entering the ledger (0.125 "
             "becomes 0.12). The code follows the documented rule and the test asks for the "
             "invoice printer's rounding: which one is right is for the ledger's owners to "
             "decide, not a fix to make."),
    "path-traversal": Careful(
        hypothesis="resolve() checks that the text of os.path.join(root, name) starts with "
                   "root, but the joined path is not normalised, so a name such as "
                   "../settings.py passes the check and leads out of the uploads directory.",
        claims=(("the joined path is not normalised", "uploads.py",
                 "path = os.path.join(root, name)"),
                ("the check compares the text of the path", "uploads.py",
                 "if not path.startswith(root):"),
                ("the test expects a name that climbs out to be refused",
                 "tests/test_uploads.py", "resolve(\"uploads\", \"../settings.py\")")),
        reads=("uploads.py", "tests/test_uploads.py"),
        reproduction=_test(
            "names that climb out of the uploads directory are served.",
            "from uploads import resolve",
            "class ClimbOutTest(unittest.TestCase):\n"
            "    def test_the_parent_directory_is_refused(self) -> None:\n"
            "        with self.assertRaises(PermissionError):\n"
            "            resolve(\"uploads\", \"../settings.py\")\n\n"
            "    def test_a_climb_inside_a_name_is_refused(self) -> None:\n"
            "        with self.assertRaises(PermissionError):\n"
            "            resolve(\"uploads\", \"a/../../settings.py\")\n"),
        failing="AssertionError: PermissionError not raised",
        plan="Normalise the joined path and refuse it unless it lies under the uploads "
             "directory. One change in uploads.py, but it moves a security boundary: every "
             "file the service serves goes through it.",
        risk="high",
        message="Refuse upload names that lead out of the uploads directory"),
}
"""Only the bugs an agent works: the flaky test ends before any agent runs."""


def _line(bug: Bug, path: str, quote: str) -> int:
    for number, line in enumerate(bug.files()[path].splitlines(), 1):
        if quote in line:
            return number
    raise ValueError(f"{bug.name}: {quote!r} is on no line of {path}")


def _claims(bug: Bug, careful: Careful) -> list[dict[str, Any]]:
    return [{"statement": statement, "confidence": 0.9,
             "evidence": [{"path": path, "quote": quote, "line": _line(bug, path, quote)}]}
            for statement, path, quote in careful.claims]


def _match(bug: Bug, stage: str) -> list[str]:
    return [f"stage: {stage};", f"repository: {bug.repo};"]


def _tokens(turn: int, *texts: str) -> tuple[int, int]:
    """Plausible usage: a prompt that grows with the conversation, an answer the size of what
    the model wrote (about four characters a token)."""
    return 1700 + 420 * turn, max(24, sum(len(t) for t in texts) // 4)


def research(bug: Bug, careful: Careful) -> Script:
    reads = [("read_file", {"path": path}) for path in careful.reads]
    quotes = [quote for _s, _p, quote in careful.claims]
    if careful.halt:
        end = Turn([("halt", {"status": "needs_human", "reason": careful.halt})],
                   text="This is a decision for a maintainer.",
                   last_contains=["ROUND_HALF_EVEN", "rounded half to even"],
                   tokens=_tokens(2, careful.halt))
    else:
        end = Turn([("answer", {"hypothesis": careful.hypothesis,
                                "claims": _claims(bug, careful)})],
                   last_contains=quotes, tokens=_tokens(2, careful.hypothesis, *quotes))
    return Script(f"bug-{bug.name}-research", _match(bug, "research"), [
        Turn([("read_log", {}), ("list_files", {})], text="The log first, then the files.",
             tools=READ_ONLY, absent_tools=["write_file"], tokens=_tokens(0, "")),
        Turn(reads, last_contains=[bug.shows[0], bug.module], tokens=_tokens(1, "")),
        end,
    ])


def reproduce(bug: Bug, careful: Careful) -> Script:
    answer = {"reproduction": {"name": "test_questbot_reproduction", "command": REPRO_ARGV,
                               "files": {REPRO_PATH: careful.reproduction}},
              "plan": {"summary": careful.plan, "risk": careful.risk, "files": [bug.module]}}
    return Script(f"bug-{bug.name}-reproduce", _match(bug, "reproduce"), [
        Turn([("write_file", {"path": REPRO_PATH, "content": careful.reproduction})],
             tools=WRITING, tokens=_tokens(0, careful.reproduction)),
        Turn([("run_command", {"argv": REPRO_ARGV})], last_contains=["wrote"],
             tokens=_tokens(1, "")),
        Turn([("answer", answer)], last_contains=["exit code 1", careful.failing],
             tokens=_tokens(2, careful.reproduction, careful.plan)),
    ])


def patch(bug: Bug, careful: Careful) -> Script:
    fixed = bug.fixed_files()[bug.module]
    (edit,) = bug.fix
    return Script(f"bug-{bug.name}-patch", _match(bug, "patch"), [
        Turn([("read_file", {"path": bug.module})], tools=WRITING, tokens=_tokens(0, "")),
        Turn([("write_file", {"path": bug.module, "content": fixed})],
             last_contains=[edit.old.strip().splitlines()[0]], tokens=_tokens(1, fixed)),
        Turn([("run_command", {"argv": TESTS_ARGV})], last_contains=["wrote"],
             tokens=_tokens(2, "")),
        Turn([("answer", {"message": careful.message})], last_contains=["exit code 0", "OK"],
             tokens=_tokens(3, careful.message)),
    ])


def lesson(bug: Bug, careful: Careful) -> Script:
    return Script(f"bug-{bug.name}-lesson", ["lesson: landed;", f"repository: {bug.repo};"], [
        Turn([("lesson", {"lesson": careful.lesson})], tools=LESSON_TOOLS,
             tokens=_tokens(1, careful.lesson)),
    ])


def _cite(path: str, quote: str, statement: str) -> dict[str, Any]:
    return {"statement": statement, "confidence": 0.9,
            "evidence": [{"path": path, "quote": quote}]}


def review_lesson(bug: Bug, careful: Careful) -> Script:
    """The consolidation reviewer keeps the lesson: the record shows the cause, the fix and
    that it landed and stayed clean."""
    return Script(f"bug-{bug.name}-review-lesson",
                  ["review: consolidation_reviewer;", f" in {bug.repo}, which ended"], [
        Turn([("answer", {
            "verdict": "approve",
            "synopsis": "The record shows the cause, the fix and that it landed and was "
                        "watched clean; the lesson says no more than that.",
            "claims": [_cite("artifacts/ending", "landed and watched clean",
                             "the quest landed and was watched clean"),
                       _cite("artifacts/hypothesis", careful.hypothesis[:40],
                             "the cause is the one the lesson names"),
                       _cite("artifacts/plan", careful.plan[:40],
                             "the fix is the one the lesson names")]})],
             tools=REVIEW_TOOLS, tokens=_tokens(1, careful.lesson)),
    ])


def scripts() -> list[Script]:
    """Every bug's conversations: research; reproduce and patch when research answers; the
    lesson and its review when the quest lands."""
    out: list[Script] = []
    for name, careful in ANSWERS.items():
        bug = BY_NAME[name]
        out.append(research(bug, careful))
        if careful.halt:
            continue
        out.append(reproduce(bug, careful))
        if careful.risk == "high":
            continue  # a high-impact plan stops for a person before the patch is asked for
        out.append(patch(bug, careful))
        if careful.lesson:
            out += [lesson(bug, careful), review_lesson(bug, careful)]
    return out


def conversations(bug: Bug) -> list[str]:
    """The names of ``bug``'s recorded conversations (``recorded/<protocol>/<name>.json``)."""
    return [s.name for s in scripts() if s.name.startswith(f"bug-{bug.name}-")]


if __name__ == "__main__":
    print(json.dumps([s.name for s in scripts()], indent=1))
