"""What the watch asks of GitHub, against the fake as strict as GitHub: where a commit stands
against the merge (the compare API), and re-runs of failed Actions jobs — once per attempt,
never of another App's checks, and a run already running again is no error."""

from __future__ import annotations

import pytest

from bot.github.forge import Forge
from bot.github.forge.watch import Rerun, WorkflowAttempt, at_or_after, order
from bot.journal import PermanentError
from questbot_testing.fakegithub import ci
from tests.github.conftest import REPO, World

RED = {"tests (3.11)": "failure", "tests (3.12)": "failure", "lint": "success"}


async def forge(world: World) -> Forge:
    return await world.effects.forges.for_repo(REPO)


async def test_order_says_whether_a_commit_holds_the_merge(world: World) -> None:
    f = await forge(world)
    first = world.main_sha
    beside = (await world.fake.push(REPO, "feature", {"b.py": "b\n"})).sha  # from first
    later = (await world.fake.push(REPO, "main", {"app.py": "x = 2\n"})).sha
    assert await order(f, later, later) == "identical"
    assert await order(f, first, later) == "ahead" and await at_or_after(f, first, later)
    assert await order(f, later, first) == "behind" and not await at_or_after(f, later, first)
    assert await order(f, later, beside) == "diverged"
    asked = len(world.fake.calls("repos/compare-commits"))
    assert await order(f, first, later) == "ahead"
    assert len(world.fake.calls("repos/compare-commits")) == asked  # two commits keep order
    with pytest.raises(PermanentError, match="compare"):
        await order(f, first, "f" * 40)


async def test_an_actions_job_is_rerun_through_its_workflow_attempt(world: World) -> None:
    f = await forge(world)
    run = ci.actions_run(world.fake, REPO, world.main_sha, RED)
    job = run.latest()["tests (3.12)"]
    rerun = Rerun(f)
    assert await rerun.attempt_of(f"check_run:{job.id}") == WorkflowAttempt(run.id, 1)
    assert await rerun.attempt_of(f"workflow_run:{run.id}:1") == WorkflowAttempt(run.id, 1)
    assert "re-run through its runs" in str(await rerun.attempt_of("check_suite:5"))
    assert await rerun.failed_jobs(WorkflowAttempt(run.id, 1)) == "asked"
    assert run.run_attempt == 2 and run.status == "in_progress"
    again = run.attempt_jobs()
    assert sorted(j.name for j in again) == ["tests (3.11)", "tests (3.12)"]  # failed ones
    assert all(j.status == "queued" and j.id != job.id for j in again)
    # GitHub refuses a run that is running: someone (or a sibling job) asked first
    assert await rerun.failed_jobs(WorkflowAttempt(run.id, 2)) == "running"


async def test_another_apps_check_is_not_rerun(world: World) -> None:
    f = await forge(world)
    check = await world.fake.fail_check(REPO, world.main_sha, name="tests")
    why = await Rerun(f).attempt_of(f"check_run:{check.id}")
    assert isinstance(why, str) and "only that App can re-run it" in why
    assert world.fake.calls("actions/re-run-workflow-failed-jobs") == []


async def test_a_check_whose_app_the_webhook_named_is_not_read_again(world: World) -> None:
    f = await forge(world)
    check = await world.fake.fail_check(REPO, world.main_sha, name="tests")
    why = await Rerun(f).attempt_of(f"check_run:{check.id}", app="circleci-checks")
    assert isinstance(why, str) and "circleci-checks" in why
    assert world.fake.calls("checks/get") == []


async def test_a_scripted_rerun_finishes_and_sends_githubs_webhooks(world: World) -> None:
    run = ci.actions_run(world.fake, REPO, world.main_sha, RED)
    ci.script_rerun(run, {"tests (3.11)": "success", "tests (3.12)": "failure"})
    assert await Rerun(await forge(world)).failed_jobs(WorkflowAttempt(run.id, 1)) == "asked"
    assert (run.status, run.conclusion, run.run_attempt) == ("completed", "failure", 2)
    sent = [d.delivery for d in world.fake.deliveries]
    assert [d.event for d in sent] == ["check_run", "check_run", "check_suite", "workflow_run"]
    assert {d.payload["check_run"]["conclusion"] for d in sent[:2]} == {"success", "failure"}
    assert sent[-1].payload["workflow_run"]["run_attempt"] == 2
    assert {d.payload["check_run"]["check_suite"]["id"] for d in sent[:2]} == {
        sent[2].payload["check_suite"]["id"], sent[3].payload["workflow_run"]["check_suite_id"]}
