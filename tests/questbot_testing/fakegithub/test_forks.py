"""Pull requests from forks, as GitHub shows them: the pull request lives in the base
repository, its ``head.repo`` (and ``head.label``, ``head.user``) name the fork, a push to the
fork's branch moves the pull request's head and sends ``synchronize`` to the base, and a check
run's ``pull_requests`` never lists a fork's pull request (GitHub's checks API: "Pushes to a
branch in a forked repository are not detected and return an empty pull_requests array")."""

from __future__ import annotations

from typing import Any

from questbot_testing.fakegithub import FakeGitHub
from tests.questbot_testing.fakegithub.conftest import REPO


async def test_a_fork_pull_request_names_the_fork_as_its_head(fake: FakeGitHub,
                                                              answer: Any) -> None:
    fork = fake.fork(REPO, "mallory")
    assert fork.full_name == "mallory/rules"
    assert fork.branch_sha("main") == fake.repo(REPO).branch_sha("main")
    pushed = await fake.push(fork.full_name, "topic", {"src/app.py": "x = 2\n"}, user="mallory")
    pr = await fake.open_pull_request(REPO, "topic", user="mallory", head_repo=fork.full_name)
    assert pr.number in fake.repo(REPO).pulls and pr.head_sha == pushed.sha
    assert pushed.sha in fake.repo(REPO).git.commits  # GitHub keeps a fork PR's commits
    (opened,) = [d.delivery.payload for d in fake.deliveries
                 if d.delivery.event == "pull_request"]
    head, base = opened["pull_request"]["head"], opened["pull_request"]["base"]
    assert opened["repository"]["full_name"] == REPO
    assert head["repo"]["full_name"] == "mallory/rules" and head["ref"] == "topic"
    assert head["label"] == "mallory:topic" and head["user"]["login"] == "mallory"
    assert base["repo"]["full_name"] == REPO
    status, body = await answer("GET", f"/repos/{REPO}/pulls/{pr.number}")
    assert status == 200 and body["head"]["repo"]["full_name"] == "mallory/rules"
    assert body["head"]["label"] == "mallory:topic" and body["base"]["repo"]["full_name"] == REPO
    fake.assert_clean()


async def test_a_push_to_the_forks_branch_moves_the_pull_request_in_the_base(
        fake: FakeGitHub) -> None:
    fork = fake.fork(REPO, "mallory")
    await fake.push(fork.full_name, "topic", {"src/app.py": "x = 2\n"}, user="mallory")
    pr = await fake.open_pull_request(REPO, "topic", user="mallory", head_repo=fork.full_name)
    await fake.push(REPO, "topic", {"src/app.py": "x = 'the base's own topic'\n"}, user="alice")
    assert fake.repo(REPO).pulls[pr.number].head_sha != fake.repo(REPO).branch_sha("topic")
    moved = await fake.push(fork.full_name, "topic", {"src/app.py": "x = 3\n"}, user="mallory")
    assert fake.repo(REPO).pulls[pr.number].head_sha == moved.sha
    events = [(d.delivery.event, d.delivery.payload.get("action"),
               d.delivery.payload["repository"]["full_name"]) for d in fake.deliveries[-2:]]
    assert events == [("push", None, "mallory/rules"), ("pull_request", "synchronize", REPO)]


async def test_the_list_filter_by_head_owner_tells_a_fork_from_the_base(
        fake: FakeGitHub, answer: Any) -> None:
    fork = fake.fork(REPO, "mallory")
    await fake.push(fork.full_name, "topic", {"src/app.py": "x = 2\n"}, user="mallory")
    pr = await fake.open_pull_request(REPO, "topic", user="mallory", head_repo=fork.full_name)
    pulls = f"/repos/{REPO}/pulls?state=all&head="
    status, ours = await answer("GET", pulls + "octo-org:topic")
    assert status == 200 and ours == []
    status, theirs = await answer("GET", pulls + "mallory:topic")
    assert [p["number"] for p in theirs] == [pr.number]


async def test_a_check_runs_pull_requests_leave_out_a_fork(fake: FakeGitHub) -> None:
    fork = fake.fork(REPO, "mallory")
    pushed = await fake.push(fork.full_name, "topic", {"src/app.py": "x = 2\n"}, user="mallory")
    await fake.open_pull_request(REPO, "topic", user="mallory", head_repo=fork.full_name)
    await fake.fail_check(REPO, pushed.sha, name="tests")
    (run,) = [d.delivery.payload for d in fake.deliveries if d.delivery.event == "check_run"]
    assert run["check_run"]["pull_requests"] == []
