"""Reading one red CI run from GitHub's real payloads: each report of it — a failing job's
``check_run``, the ``check_suite``, the ``workflow_run`` — names the same suite and commit (its
``group``) and the run that reported it; a green one is evidence; ``workflow_job`` is not read."""

from __future__ import annotations

from typing import Any

from bot.adapters import AppIdentity
from bot.failures.signals import Failure, Passed
from bot.intake.routes import read_intents
from bot.quests.branches import quest_of_branch
from questbot_testing.fakegithub.webhooks import build_payload

REPO = "octo/sample"
SHA = "a" * 40
SUITE = 4242


QUESTBOT = AppIdentity(id=4242, slug="questbot")


async def intents(event: str, example: str, overrides: dict[str, Any], *,
                  app: AppIdentity = QUESTBOT) -> list[object]:
    payload = build_payload(event, example, overrides, repository=REPO)
    payload["repository"]["default_branch"] = "main"
    return [i for i in await read_intents(event, payload, delivery_id="d-1", app=app)
            if type(i).__name__ != "Installed"]


def check_run(conclusion: str, *, name: str = "tests (3.12)", branch: str = "main",
              slug: str = "github-actions") -> dict[str, Any]:
    return {"check_run": {"id": 77, "name": name, "head_sha": SHA, "conclusion": conclusion,
                          "app": {"slug": slug},
                          "check_suite": {"id": SUITE, "head_branch": branch}}}


async def test_the_reports_of_one_red_run_share_their_suite_and_commit() -> None:
    (job,) = await intents("check_run", "completed", check_run("failure"))
    (suite,) = await intents("check_suite", "completed", {"check_suite": {
        "id": SUITE, "head_sha": SHA, "head_branch": "main", "conclusion": "failure",
        "app": {"slug": "github-actions"}}})
    (run,) = await intents("workflow_run", "completed", {"workflow_run": {
        "id": 9, "run_attempt": 2, "name": "CI", "head_sha": SHA, "head_branch": "main",
        "check_suite_id": SUITE, "conclusion": "failure"}})
    failures = [job, suite, run]
    assert all(isinstance(f, Failure) for f in failures)
    assert {(f.sha, f.group) for f in failures} == {(SHA, f"suite:{SUITE}")}  # type: ignore[attr-defined]
    assert [(f.fingerprint, f.run) for f in failures] == [  # type: ignore[attr-defined]
        ("check:tests (3.12)", "check_run:77"), ("suite:github-actions", f"check_suite:{SUITE}"),
        ("workflow:CI", "workflow_run:9:2")]


async def test_a_green_result_on_the_default_branch_is_evidence() -> None:
    (passed,) = await intents("check_run", "completed", check_run("success"))
    assert passed == Passed(REPO, "check:tests (3.12)", SHA, f"suite:{SUITE}", "check_run:77",
                            passed.source)  # type: ignore[attr-defined]
    (run,) = await intents("workflow_run", "completed", {"workflow_run": {
        "id": 9, "name": "CI", "head_sha": SHA, "head_branch": "main", "conclusion": "success",
        "check_suite_id": SUITE}})
    assert isinstance(run, Passed) and run.run == "workflow_run:9:1"


async def test_other_branches_other_conclusions_and_questbots_own_checks_say_nothing() -> None:
    assert await intents("check_run", "completed", check_run("failure", branch="feature")) == []
    assert await intents("check_run", "completed", check_run("success", branch="feature")) == []
    assert await intents("check_run", "completed", check_run("cancelled")) == []
    assert await intents("check_run", "completed", check_run("failure", slug="questbot")) == []


async def test_an_app_named_otherwise_knows_its_own_checks_by_its_slug_and_id() -> None:
    """The App is whatever ``GET /app`` says: a check called questbot's is then another
    App's failure, and the App's own runs and suites are known by slug or by id."""
    fixbot = AppIdentity(id=31337, slug="fixbot")
    failed = check_run("failure", slug="questbot")
    (failure,) = await intents("check_run", "completed", failed, app=fixbot)
    assert isinstance(failure, Failure)
    assert await intents("check_run", "completed", check_run("failure", slug="fixbot"),
                         app=fixbot) == []
    renamed = check_run("failure", slug="old-name")
    renamed["check_run"]["app"]["id"] = 31337  # the App was renamed: its id stays
    assert await intents("check_run", "completed", renamed, app=fixbot) == []
    suite = {"check_suite": {"conclusion": "failure", "head_branch": "main",
                             "app": {"id": 31337, "slug": "fixbot"}}}
    assert await intents("check_suite", "completed", suite, app=fixbot) == []


async def test_workflow_job_is_the_check_run_of_the_same_job_and_is_not_read() -> None:
    assert await intents("workflow_job", "completed.failure.with-organization.payload.json", {
        "workflow_job": {"head_sha": SHA, "head_branch": "main"}}) == []


def test_quest_branches_name_their_quest_and_revert_branches_none() -> None:
    assert quest_of_branch("quest/q0123456789") == "q0123456789"
    assert quest_of_branch("quest/q0123456789-r3") == "q0123456789"
    assert quest_of_branch("quest/q-watch") == "q-watch"
    assert quest_of_branch("quest/q0123456789-revert-2") is None
    assert quest_of_branch("quest/a/b") is None
    assert quest_of_branch("main") is None


async def test_a_failing_check_says_where_github_and_its_ci_show_it() -> None:
    """The status comment links the run and its job's log: ``html_url`` is GitHub's page of
    the run, ``details_url`` where the CI that made it says to look."""
    payload = check_run("failure")
    payload["check_run"] |= {"html_url": f"https://github.com/{REPO}/actions/runs/5/job/77",
                             "details_url": f"https://ci.example.com/{REPO}/jobs/77"}
    (job,) = await intents("check_run", "completed", payload)
    assert isinstance(job, Failure)
    assert job.source == f"https://github.com/{REPO}/actions/runs/5/job/77"
    assert job.details_url == f"https://ci.example.com/{REPO}/jobs/77"
    payload["check_run"]["details_url"] = None  # GitHub's example: a run with no details
    (bare,) = await intents("check_run", "completed", payload)
    assert isinstance(bare, Failure) and bare.details_url == ""
