"""The fake refuses what GitHub refuses for pull requests, reviews and merges, with GitHub's
status and message (BEHAVIOUR.md §1-§5; ``questbot_testing.fakegithub.rules``)."""

from __future__ import annotations

from typing import Any

from questbot_testing.fakegithub import FakeGitHub
from questbot_testing.fakegithub.rules import BODY_LIMIT
from tests.questbot_testing.fakegithub.conftest import OWNER, REPO, error_of

PULLS = f"/repos/{REPO}/pulls"


async def topic(fake: FakeGitHub, branch: str = "topic", *, user: str = "alice") -> str:
    return (await fake.push(REPO, branch, {"src/app.py": f"x = '{branch}'\n"}, user=user)).sha


async def open_pr(answer: Any, head: str = "topic", **extra: Any) -> dict[str, Any]:
    status, body = await answer("POST", PULLS, {"head": head, "base": "main", "title": "t",
                                                **extra})
    assert status == 201, body
    return dict(body)


# -- §1 create --------------------------------------------------------------------------------


async def test_a_branch_with_no_commits_beyond_the_base_is_refused(fake: FakeGitHub,
                                                                   answer: Any) -> None:
    repo = fake.repo(REPO)
    repo.refs["refs/heads/empty"] = repo.refs["refs/heads/main"]
    status, body = await answer("POST", PULLS, {"head": "empty", "base": "main", "title": "t"})
    assert status == 422
    assert error_of(body) == {"resource": "PullRequest", "code": "custom",
                              "message": "No commits between main and empty"}
    assert repo.pulls == {}
    fake.assert_clean()


async def test_a_second_open_pull_request_from_the_same_branch_is_refused(
        fake: FakeGitHub, answer: Any) -> None:
    await topic(fake)
    first = await open_pr(answer)
    status, body = await answer("POST", PULLS, {"head": f"{OWNER}:topic", "base": "main",
                                                "title": "again"})
    assert status == 422
    assert error_of(body)["message"] == f"A pull request already exists for {OWNER}:topic."
    await answer("PATCH", f"{PULLS}/{first['number']}", {"state": "closed"})
    await open_pr(answer)  # a closed one does not count
    fake.assert_clean()


async def test_a_missing_head_or_base_is_an_invalid_field(fake: FakeGitHub,
                                                          answer: Any) -> None:
    await topic(fake)
    for head, base, field in (("nope", "main", "head"), ("topic", "nope", "base")):
        status, body = await answer("POST", PULLS, {"head": head, "base": base, "title": "t"})
        assert status == 422
        assert error_of(body) == {"resource": "PullRequest", "code": "invalid", "field": field}


async def test_a_draft_where_the_plan_has_none_is_refused(fake: FakeGitHub,
                                                          answer: Any) -> None:
    await topic(fake)
    fake.repo(REPO).drafts_supported = False
    status, body = await answer("POST", PULLS, {"head": "topic", "base": "main", "title": "t",
                                                "draft": True})
    assert status == 422
    assert error_of(body)["message"] == ("Draft pull requests are not supported in this "
                                         "repository.")
    assert (await open_pr(answer))["draft"] is False


async def test_a_title_is_needed(fake: FakeGitHub, answer: Any) -> None:
    await topic(fake)
    status, body = await answer("POST", PULLS, {"head": "topic", "base": "main"})
    assert status == 422 and error_of(body)["field"] == "title"


async def test_a_body_past_65536_characters_is_refused(fake: FakeGitHub, answer: Any) -> None:
    await topic(fake)
    status, body = await answer("POST", PULLS, {"head": "topic", "base": "main", "title": "t",
                                                "body": "x" * (BODY_LIMIT + 1)})
    assert status == 422
    assert error_of(body) == {"resource": "PullRequest", "code": "custom", "field": "body",
                              "message": "body is too long (maximum is 65536 characters)"}
    pr = await open_pr(answer, body="x" * BODY_LIMIT)  # exactly the limit is fine
    status, _ = await answer("PATCH", f"{PULLS}/{pr['number']}", {"body": "y" * (BODY_LIMIT + 1)})
    assert status == 422


# -- §2 draft state and update-branch --------------------------------------------------------


async def test_rest_cannot_mark_a_draft_ready(fake: FakeGitHub, answer: Any) -> None:
    await topic(fake)
    pr = await open_pr(answer, draft=True)
    status, body = await answer("PATCH", f"{PULLS}/{pr['number']}", {"draft": False})
    assert status == 200 and body["draft"] is True  # pulls/update has no draft: ignored
    fake.assert_clean()


async def test_update_branch_with_nothing_to_bring_in_is_refused(fake: FakeGitHub,
                                                                 answer: Any) -> None:
    head = await topic(fake)
    pr = await open_pr(answer)
    status, body = await answer("PUT", f"{PULLS}/{pr['number']}/update-branch",
                                {"expected_head_sha": head})
    assert (status, body["message"]) == (422, "There are no new commits on the base branch.")


# -- §3, §4 reviewers and reviews -------------------------------------------------------------


async def test_review_requests_never_go_to_the_author_or_to_strangers(
        fake: FakeGitHub, answer: Any) -> None:
    await topic(fake)
    pr = await open_pr(answer)  # opened by the App: its bot is the author
    requests = f"{PULLS}/{pr['number']}/requested_reviewers"
    status, body = await answer("POST", requests, {"reviewers": ["questbot[bot]"]})
    assert (status, body["message"]) == (422, "Review cannot be requested from pull request "
                                              "author.")
    status, body = await answer("POST", requests, {"reviewers": ["alice", "stranger"]})
    assert status == 422
    assert body["message"] == ("Reviews may only be requested from collaborators. One or more "
                               "of the users or teams you specified is not a collaborator of "
                               f"the {REPO} repository.")
    assert fake.repo(REPO).pulls[pr["number"]].requested_reviewers == []  # none of them
    status, body = await answer("POST", requests, {"reviewers": ["alice"]})
    assert status == 201 and [u["login"] for u in body["requested_reviewers"]] == ["alice"]


async def test_the_author_cannot_approve_and_a_review_needs_its_body(fake: FakeGitHub,
                                                                    answer: Any) -> None:
    await topic(fake)
    pr = await open_pr(answer)
    reviews = f"{PULLS}/{pr['number']}/reviews"
    status, body = await answer("POST", reviews, {"event": "APPROVE"})
    assert (status, body["errors"]) == (422, ["Can not approve your own pull request"])
    status, body = await answer("POST", reviews, {"event": "COMMENT"})
    assert status == 422 and body["errors"] == ["Review body is required when event is COMMENT"]


async def test_one_pending_review_per_account(fake: FakeGitHub, answer: Any) -> None:
    await topic(fake, user="alice")
    pr = await fake.open_pull_request(REPO, "topic", user="alice")
    reviews = f"{PULLS}/{pr.number}/reviews"
    assert (await answer("POST", reviews, {"body": "draft thoughts"}))[0] == 200
    status, body = await answer("POST", reviews, {"body": "more"})
    assert (status, body["errors"]) == (422, ["User can only have one pending review per pull "
                                              "request"])


# -- §5 merging -------------------------------------------------------------------------------


async def merge(answer: Any, number: int, **body: Any) -> tuple[int, str]:
    status, answered = await answer("PUT", f"{PULLS}/{number}/merge", body)
    return status, str(answered.get("message"))


async def test_a_draft_is_not_merged(fake: FakeGitHub, answer: Any) -> None:
    head = await topic(fake)
    pr = await open_pr(answer, draft=True)
    assert await merge(answer, pr["number"], sha=head) == (405, "Pull Request is still a draft")


async def test_a_merge_pinned_to_another_head_is_refused(fake: FakeGitHub, answer: Any) -> None:
    first = await topic(fake)
    pr = await open_pr(answer)
    await fake.push(REPO, "topic", {"src/app.py": "x = 3\n"}, user="mallory")
    assert await merge(answer, pr["number"], sha=first) == (
        409, "Head branch was modified. Review and try the merge again.")


async def test_a_closed_or_merged_pull_request_is_not_mergeable(fake: FakeGitHub,
                                                                answer: Any) -> None:
    head = await topic(fake)
    pr = await open_pr(answer)
    assert (await merge(answer, pr["number"], sha=head))[0] == 200
    assert await merge(answer, pr["number"], sha=head) == (405, "Pull Request is not mergeable")


async def test_a_method_the_repository_disallows_is_refused(fake: FakeGitHub,
                                                            answer: Any) -> None:
    head = await topic(fake)
    pr = await open_pr(answer)
    fake.repo(REPO).allow_merge_commit = False
    assert await merge(answer, pr["number"], sha=head) == (
        405, "Merge commits are not allowed on this repository.")
    assert (await merge(answer, pr["number"], sha=head, merge_method="squash"))[0] == 200
    merged = fake.repo(REPO).git.commits[fake.repo(REPO).refs["refs/heads/main"]]
    assert len(merged.parents) == 1  # a squash is one commit on the base


async def test_a_required_check_must_pass_on_the_head(fake: FakeGitHub, answer: Any) -> None:
    head = await topic(fake)
    pr = await open_pr(answer)
    fake.repo(REPO).required_checks = ["tests"]
    assert (await answer("GET", f"{PULLS}/{pr['number']}"))[1]["mergeable_state"] == "blocked"
    await fake.fail_check(REPO, head, "tests")
    assert await merge(answer, pr["number"], sha=head) == (
        405, 'Required status check "tests" is expected.')
    await fake.pass_check(REPO, head, "tests")
    assert (await merge(answer, pr["number"], sha=head))[0] == 200


async def test_with_a_merge_queue_nothing_merges_directly(fake: FakeGitHub,
                                                          answer: Any) -> None:
    head = await topic(fake)
    pr = await open_pr(answer)
    fake.repo(REPO).merge_queue = True
    assert await merge(answer, pr["number"], sha=head) == (
        405, "Changes must be made through the merge queue")


async def test_assignees_need_push_access_or_authorship_and_others_are_silently_left_out(
        fake: FakeGitHub, answer: Any) -> None:
    """BEHAVIOUR §8: ``issues/add-assignees`` answers 201 whoever is named, assigning only
    those with push access (or the issue's author) after those already there; removing one
    not assigned changes nothing."""
    await topic(fake)
    pr = await open_pr(answer)
    fake.set_permission(REPO, "reader", "read")
    assignees = f"/repos/{REPO}/issues/{pr['number']}/assignees"
    status, body = await answer("POST", assignees, {"assignees": ["reader", "stranger"]})
    assert status == 201 and body["assignees"] == [] and body["assignee"] is None
    status, body = await answer("POST", assignees, {"assignees": ["alice"]})
    assert status == 201 and [u["login"] for u in body["assignees"]] == ["alice"]
    status, body = await answer("POST", assignees, {"assignees": [OWNER, "alice"]})
    assert [u["login"] for u in body["assignees"]] == ["alice", OWNER]  # not replaced
    status, body = await answer("DELETE", assignees, {"assignees": ["alice", "reader"]})
    assert status == 200 and [u["login"] for u in body["assignees"]] == [OWNER]
    pull = await answer("GET", f"{PULLS}/{pr['number']}")
    assert [u["login"] for u in pull[1]["assignees"]] == [OWNER]
    fake.assert_clean()


async def test_a_reviewer_who_reviews_is_no_longer_requested_and_a_request_can_be_withdrawn(
        fake: FakeGitHub, answer: Any) -> None:
    await topic(fake)
    pr = await open_pr(answer)
    fake.set_permission(REPO, "bob", "write")
    requests = f"{PULLS}/{pr['number']}/requested_reviewers"
    await answer("POST", requests, {"reviewers": ["alice", "bob"]})
    status, body = await answer("DELETE", requests, {"reviewers": ["bob", "carol"]})
    assert status == 200 and [u["login"] for u in body["requested_reviewers"]] == ["alice"]
    await fake.review(REPO, pr["number"], "COMMENT", user="alice", body="looks fine")
    assert fake.repo(REPO).pulls[pr["number"]].requested_reviewers == []
    fake.assert_clean()
