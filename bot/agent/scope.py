"""What an agent's change may touch: the reproduction its files, the patch the plan's files,
and neither anything under ``.github/``.

An agent's run ends with the files its checkout changed (``bot.agent.workspace.changes_in``),
and questbot pushes them as the quest's commit. Whatever wrote them — the agent's tools, a
command it ran, code the repository runs in its checks — only these changes reach GitHub:

* **a reproduction** is its own files (``ReproductionReply.files``) and nothing else: it shows
  the bug on the base as it is, so a run that also changed the code it is meant to show
  failing, another test, or anything else is refused, naming each file (``reproduction_problem``);
* **a patch** changes the files its plan names and no others (``patch_problem``). The plan's
  files are its *scope*: questbot writes them as the plan's last line (``scoped_plan``), so
  the plan a person approves at checkpoint B — sealed, shown in the status comment and to the
  design reviewer — says which files the patch may change, and the patch run reads them back
  from the approved plan (``plan_scope``). A plan that names none (an agent that does not
  give ``files``) leaves the patch held only by the rules below; the model agent must name
  them;
* **never** the reproduction's files in a patch (fix the code, not the test), and never
  anything under ``.github/`` (``persons_call``): CI workflows run with the repository's
  secrets, and questbot's settings and CODEOWNERS decide who reviews — a person's call.

Each rule says what it found in words people read: the reason ends the run, reaches the quest's
status comment, and (during a model's run) goes back to the model first.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from pathlib import PurePosixPath

PERSONS_CALL = ".github"
SCOPE_PREFIX = "Files it changes: "
"""How the plan's last line starts: the files the patch may change, comma-separated."""
NO_SCOPE_CHARACTERS = (",", "\n", "\r")


def persons_call(path: str) -> bool:
    """Whether ``path`` is under ``.github/``: no agent writes there."""
    return PurePosixPath(path).parts[:1] == (PERSONS_CALL,)


def listed(paths: Iterable[str]) -> str:
    """``a``, ``b`` and ``c``, each a code span (``no file`` for none)."""
    shown = [f"`{p}`" for p in sorted(paths)]
    if len(shown) <= 1:
        return shown[0] if shown else "no file"
    return ", ".join(shown[:-1]) + " and " + shown[-1]


def _which(paths: Collection[str]) -> str:
    return "which is" if len(paths) == 1 else "which are"


def _files(paths: Collection[str]) -> str:
    return "file" if len(paths) == 1 else "files"


def scope_path_problem(path: str) -> str | None:
    """Why ``path`` cannot be one of a plan's files."""
    if any(c in path for c in NO_SCOPE_CHARACTERS):
        return f"{path!r}: a file of the plan is one path, without commas or line breaks"
    if persons_call(path):
        return f"{path!r}: files under .github/ are a person's call, no plan's"
    return None


def scoped_plan(summary: str, files: Sequence[str]) -> str:
    """The plan as people approve it: the summary, then the files it changes (if named)."""
    if not files:
        return summary
    return f"{summary.rstrip()}\n\n{SCOPE_PREFIX}{', '.join(dict.fromkeys(files))}"


def plan_scope(plan: str | None) -> frozenset[str] | None:
    """The files the approved ``plan`` names on its last line; ``None`` when it names none."""
    if not plan:
        return None
    last = plan.rstrip().rsplit("\n", 1)[-1]
    if not last.startswith(SCOPE_PREFIX):
        return None
    return frozenset(p.strip() for p in last.removeprefix(SCOPE_PREFIX).split(",") if p.strip())


def reproduction_problem(changes: Collection[str], files: Collection[str]) -> str | None:
    """Why the checkout's ``changes`` are not the reproduction whose files are ``files``
    (empty: an agent that left its test in the checkout, whose changes are the reproduction)."""
    github = sorted(p for p in changes if persons_call(p))
    extra = sorted(p for p in changes if files and p not in files and not persons_call(p))
    parts = []
    if extra:
        parts.append(f"besides its own files the checkout changes {listed(extra)}, "
                     f"{_which(extra)} not the reproduction's: a reproduction adds its test "
                     "and changes nothing else")
    if github:
        parts.append(f"it changes {listed(github)}: CI workflows and questbot's settings "
                     "under .github/ are a person's call")
    return "; ".join(parts) or None


def patch_problem(changes: Collection[str], protected: Collection[str],
                  scope: Collection[str] | None) -> str | None:
    """Why the checkout's ``changes`` are not a patch questbot pushes: they change the
    reproduction's files (``protected``), anything under ``.github/``, or files the approved
    plan's ``scope`` does not name."""
    tests = sorted(p for p in changes if p in protected)
    github = sorted(p for p in changes if persons_call(p))
    outside = sorted(p for p in changes if scope is not None and p not in scope
                     and p not in protected and not persons_call(p))
    parts = []
    if tests:
        parts.append(f"the patch changes the reproduction's {_files(tests)} {listed(tests)}: "
                     "fix the code, not the test")
    if github:
        parts.append(f"the patch changes {listed(github)}: CI workflows and questbot's "
                     "settings under .github/ are a person's call")
    if outside:
        parts.append(f"the patch changes {listed(outside)}, which the plan approved at "
                     f"checkpoint B does not name (it names {listed(scope or ())}); a change "
                     "beyond the plan needs a new plan approved at checkpoint B")
    return "; ".join(parts) or None
