"""A job's log as GitHub serves it: a 302 to a short-lived link on another host that refuses
the API's credentials, 404 for a job it has no record of, 410 for a log it no longer keeps."""

from __future__ import annotations

from typing import Any

import aiohttp

from questbot_testing.fakegithub import FakeGitHub, ci
from tests.questbot_testing.fakegithub.conftest import REPO


async def test_the_log_is_a_redirect_to_another_host_that_wants_no_token(
        fake: FakeGitHub) -> None:
    main = str(fake.repo(REPO).branch_sha("main"))
    run = ci.actions_run(fake, REPO, main, {"tests": "failure", "lint": "success"})
    tests = next(job for job in run.jobs if job.name == "tests")
    tests.log = "##[group]Run pytest\nFAILED\n##[error]Process completed with exit code 1.\n"
    token = fake.installation_token(fake.repo(REPO).installation_id)
    auth = {"Authorization": f"token {token}"}
    async with aiohttp.ClientSession() as session:
        path = f"/repos/{REPO}/actions/jobs/{tests.id}/logs"
        async with session.get(fake.url + path, headers=auth,
                               allow_redirects=False) as response:
            assert response.status == 302
            link = response.headers["Location"]
        assert not link.startswith(fake.url) and "urlExpires=" in link
        async with session.get(link, headers=auth) as response:  # the token goes nowhere else
            assert response.status == 403
        async with session.get(fake.url + path, headers=auth) as response:  # followed
            assert response.status == 200 and response.content_type == "text/plain"
            assert await response.text() == tests.log
        lint = next(job for job in run.jobs if job.name == "lint")
        async with session.get(f"{fake.url}/repos/{REPO}/actions/jobs/{lint.id}/logs",
                               headers=auth) as response:
            text = await response.text()
        assert "##[group]Run lint" in text and "##[error]" not in text
        assert text.splitlines()[0].startswith("2026-03-01T00:00:00.0000000Z ")


async def test_an_unknown_job_is_404_and_an_expired_log_410(fake: FakeGitHub,
                                                             answer: Any) -> None:
    main = str(fake.repo(REPO).branch_sha("main"))
    run = ci.actions_run(fake, REPO, main, {"tests": "failure"})
    status, _ = await answer("GET", f"/repos/{REPO}/actions/jobs/99999999/logs")
    assert status == 404
    run.jobs[0].log_gone = True
    status, _ = await answer("GET", f"/repos/{REPO}/actions/jobs/{run.jobs[0].id}/logs")
    assert status == 410


async def test_an_attempt_lists_its_own_jobs(fake: FakeGitHub, answer: Any) -> None:
    main = str(fake.repo(REPO).branch_sha("main"))
    run = ci.actions_run(fake, REPO, main, {"tests": "failure", "lint": "success"})
    ci.rerun_jobs(fake, fake.repo(REPO), run, ["tests"])
    status, body = await answer("GET", f"/repos/{REPO}/actions/runs/{run.id}/attempts/2/jobs")
    assert status == 200 and [j["name"] for j in body["jobs"]] == ["tests"]
    assert body["jobs"][0]["run_attempt"] == 2
    status, body = await answer("GET", f"/repos/{REPO}/actions/runs/{run.id}/attempts/1/jobs")
    assert sorted(j["name"] for j in body["jobs"]) == ["lint", "tests"]


async def test_a_run_s_logs_are_its_archive(fake: FakeGitHub, answer: Any) -> None:
    main = str(fake.repo(REPO).branch_sha("main"))
    run = fake.add_workflow_run(REPO, main, "main", logs=b"PK\x05\x06" + bytes(18))
    status, body = await answer("GET", f"/repos/{REPO}/actions/runs/{run.id}/logs")
    assert (status, body) == (200, b"PK\x05\x06" + bytes(18))
