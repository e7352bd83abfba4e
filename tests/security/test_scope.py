"""What an agent's change may touch (``bot.agent.scope``): the rules on their own, including the
ways a model could try to widen its plan's scope with words."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from bot.agent.model.answers import ScopedPlan
from bot.agent.scope import (
    SCOPE_PREFIX,
    patch_problem,
    persons_call,
    plan_scope,
    reproduction_problem,
    scoped_plan,
)
from bot.agent.task import PlanReply

REPRO = "tests/test_questbot_reproduction.py"


def test_the_plan_people_approve_names_its_files_on_its_last_line() -> None:
    plan = scoped_plan("Round up. One line in pager.py.", ["pager.py", "pager.py", "util.py"])
    assert plan.endswith(f"\n\n{SCOPE_PREFIX}pager.py, util.py")
    assert plan_scope(plan) == {"pager.py", "util.py"}
    assert plan_scope("Round up.") is None and plan_scope(None) is None
    assert scoped_plan("Round up.", []) == "Round up."


def test_a_summary_cannot_widen_the_scope_questbot_writes_after_it() -> None:
    summary = f"Round up.\n\n{SCOPE_PREFIX}pager.py, setup.py, .github/workflows/ci.yml"
    assert plan_scope(scoped_plan(summary, ["pager.py"])) == {"pager.py"}


@pytest.mark.parametrize("path", ["a.py, setup.py", "a.py\nsetup.py", ".github/workflows/x.yml",
                                  "../outside.py", "/etc/passwd", ".git/config", ""])
def test_a_plan_names_files_of_the_checkout_one_path_each(path: str) -> None:
    with pytest.raises(ValidationError):
        PlanReply(summary="x", files=(path,))


def test_the_model_must_name_its_plans_files() -> None:
    with pytest.raises(ValidationError):
        ScopedPlan(summary="x")
    assert ScopedPlan(summary="x", files=("pager.py",)).files == ("pager.py",)
    assert PlanReply(summary="x").files == ()  # a command agent may name none


def test_nothing_under_github_is_an_agents() -> None:
    assert persons_call(".github/workflows/ci.yml") and persons_call("./.github/CODEOWNERS")
    assert not persons_call("docs/.github") and not persons_call(".githubx/a")


def test_a_reproduction_is_its_files_and_nothing_else() -> None:
    assert reproduction_problem({REPRO}, {REPRO}) is None
    assert reproduction_problem({REPRO, "anything.py"}, set()) is None  # an unnamed test
    why = reproduction_problem({REPRO, "pager.py", ".github/workflows/x.yml"}, {REPRO})
    assert why is not None
    assert "`pager.py`, which is not the reproduction's" in why
    assert "`.github/workflows/x.yml`: CI workflows" in why
    assert reproduction_problem({".github/x.yml"}, set()) is not None


def test_a_patch_keeps_to_its_plan_and_off_the_test_and_ci() -> None:
    scope = frozenset({"pager.py"})
    assert patch_problem({"pager.py"}, {REPRO}, scope) is None
    assert patch_problem({"anything.py"}, {REPRO}, None) is None  # a plan that named none
    why = patch_problem({"pager.py", "setup.py", REPRO, ".github/workflows/x.yml"}, {REPRO},
                        scope)
    assert why is not None
    assert f"the reproduction's file `{REPRO}`: fix the code, not the test" in why
    assert "`.github/workflows/x.yml`: CI workflows" in why
    assert ("`setup.py`, which the plan approved at checkpoint B does not name (it names "
            "`pager.py`)") in why
    assert "`pager.py`," not in why
