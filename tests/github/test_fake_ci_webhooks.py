"""The fake's CI webhooks are GitHub's shape: each report of a red Actions run — ``check_run``,
``workflow_job``, ``check_suite``, ``workflow_run`` — validates against the webhook schemas in
``@octokit/webhooks-schemas``, and a re-run's reports too."""

from __future__ import annotations

from typing import Any

import pytest

from questbot_testing import published
from questbot_testing.fakegithub import FakeGitHub, ci

REPO = "octo/sample"


def problems(event: str, payload: dict[str, Any]) -> list[str]:
    """What of the payload's ``event`` object breaks the schema of ``<event>.completed``."""
    assert payload["action"] == "completed"
    return published.webhook_problems(event, "completed", payload[event], part=event)


@pytest.fixture
def fake() -> FakeGitHub:
    fake = FakeGitHub()
    fake.create_repository(REPO, {"README.md": "hi\n"})
    return fake


def test_a_red_matrix_run_reports_in_githubs_shape(fake: FakeGitHub) -> None:
    sha = str(fake.repo(REPO).branch_sha("main"))
    run = ci.actions_run(fake, REPO, sha, {"tests (3.11)": "failure", "lint": "success"})
    deliveries = ci.completed(fake, REPO, run, workflow_job=True)
    assert [d.event for d in deliveries] == ["check_run", "check_run", "workflow_job",
                                             "workflow_job", "check_suite", "workflow_run"]
    for delivery in deliveries:
        assert problems(delivery.event, delivery.payload) == [], delivery.event
    job = run.latest()["tests (3.11)"]
    check, work = deliveries[0].payload["check_run"], deliveries[2].payload["workflow_job"]
    assert check["id"] == work["id"] == job.id  # a job's id is its check run's
    assert work["check_run_url"].endswith(f"/check-runs/{job.id}")
    assert check["check_suite"]["id"] == deliveries[-2].payload["check_suite"]["id"] == \
        deliveries[-1].payload["workflow_run"]["check_suite_id"]
    assert {d.payload["repository"]["full_name"] for d in deliveries} == {REPO}


def test_a_rerun_reports_new_check_runs_of_the_next_attempt(fake: FakeGitHub) -> None:
    sha = str(fake.repo(REPO).branch_sha("main"))
    run = ci.actions_run(fake, REPO, sha, {"tests (3.11)": "failure"},
                         new_suite_per_attempt=True)
    first = ci.completed(fake, REPO, run)
    ci.rerun_jobs(fake, fake.repo(REPO), run, ["tests (3.11)"])
    ci.finish(fake, REPO, run, {"tests (3.11)": "failure"})
    second = ci.completed(fake, REPO, run)
    for delivery in second:
        assert problems(delivery.event, delivery.payload) == [], delivery.event
    assert first[0].payload["check_run"]["id"] != second[0].payload["check_run"]["id"]
    assert first[0].payload["check_run"]["name"] == second[0].payload["check_run"]["name"]
    assert second[-1].payload["workflow_run"]["run_attempt"] == 2
    assert second[-1].payload["workflow_run"]["id"] == first[-1].payload["workflow_run"]["id"]
    assert second[-2].payload["check_suite"]["id"] != first[-2].payload["check_suite"]["id"]
