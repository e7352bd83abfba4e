"""The fake lands pull requests as GitHub does: required approving reviews (BEHAVIOUR §4, §5),
auto-merge and the merge queue acting on their own once they can (§6), and people reviewing,
closing and reopening a pull request, with the webhooks GitHub sends for each (§2, §4, §14)."""

from __future__ import annotations

import json
from typing import Any

from questbot_testing import published
from questbot_testing.fakegithub import FakeGitHub
from tests.questbot_testing.fakegithub.conftest import REPO
from tests.questbot_testing.fakegithub.test_rules_pulls import PULLS, merge, open_pr, topic

ONE_REVIEW = "At least 1 approving review is required by reviewers with write access."


def webhook_problems(event: str, action: str, payload: dict[str, Any], part: str) -> list[str]:
    """What of ``payload[part]`` breaks the schema GitHub's ``<event>.<action>`` has for it."""
    return published.webhook_problems(event, action, payload[part], part=part)


def sent(fake: FakeGitHub, event: str) -> list[dict[str, Any]]:
    return [d.delivery.payload for d in fake.deliveries if d.delivery.event == event]


# -- §4, §5 required approving reviews ----------------------------------------------------------


async def test_a_required_review_must_come_from_someone_with_write_access(
        fake: FakeGitHub, answer: Any) -> None:
    head = await topic(fake)
    pr = await open_pr(answer)
    number = pr["number"]
    repo = fake.repo(REPO)
    repo.required_reviews = 1
    fake.set_permission(REPO, "rita", "read")
    assert (await answer("GET", f"{PULLS}/{number}"))[1]["mergeable_state"] == "blocked"
    assert await merge(answer, number, sha=head) == (405, ONE_REVIEW)
    await fake.review(REPO, number, "APPROVE", user="rita")  # read access: does not count
    assert await merge(answer, number, sha=head) == (405, ONE_REVIEW)
    await fake.review(REPO, number, "APPROVE", user="alice")
    await fake.review(REPO, number, "REQUEST_CHANGES", user="alice", body="on second thought")
    assert await merge(answer, number, sha=head) == (405, ONE_REVIEW)  # her latest counts
    await fake.review(REPO, number, "APPROVE", user="alice")
    assert (await answer("GET", f"{PULLS}/{number}"))[1]["mergeable_state"] == "clean"
    assert (await merge(answer, number, sha=head))[0] == 200
    fake.assert_clean()


async def test_with_stale_reviews_dismissed_only_an_approval_of_the_head_counts(
        fake: FakeGitHub, answer: Any) -> None:
    first = await topic(fake)
    pr = await open_pr(answer)
    repo = fake.repo(REPO)
    repo.required_reviews, repo.dismiss_stale_reviews = 1, True
    await fake.review(REPO, pr["number"], "APPROVE", user="alice")
    head = (await fake.push(REPO, "topic", {"src/app.py": "x = 4\n"}, user="bob")).sha
    assert head != first
    assert await merge(answer, pr["number"], sha=head) == (405, ONE_REVIEW)
    await fake.review(REPO, pr["number"], "APPROVE", user="alice")
    assert (await merge(answer, pr["number"], sha=head))[0] == 200


async def test_linear_history_refuses_a_merge_commit(fake: FakeGitHub, answer: Any) -> None:
    head = await topic(fake)
    pr = await open_pr(answer)
    fake.repo(REPO).linear_history = True
    assert await merge(answer, pr["number"], sha=head) == (
        405, "This branch must not contain merge commits.")
    assert (await merge(answer, pr["number"], sha=head, merge_method="rebase"))[0] == 200


# -- §6 auto-merge and the queue act on their own --------------------------------------------


async def test_auto_merge_fires_on_its_own_when_the_review_or_the_check_arrives(
        fake: FakeGitHub, answer: Any) -> None:
    repo = fake.repo(REPO)
    repo.allow_auto_merge, repo.required_reviews = True, 1
    head = await topic(fake)
    pr = await open_pr(answer)
    resolve = AUTO_MERGE.replace("$id", json.dumps(pr["node_id"])).replace(
        "$head", json.dumps(head))
    status, body = await answer("POST", "/graphql", {"query": resolve})
    assert status == 200 and "errors" not in body, body
    await fake.review(REPO, pr["number"], "APPROVE", user="alice")
    merged = repo.pulls[pr["number"]]
    assert merged.merged and merged.merged_by == "questbot[bot]"  # who enabled it
    (closed,) = [p for p in sent(fake, "pull_request") if p["action"] == "closed"]
    assert closed["pull_request"]["merged"] is True

    await topic(fake, "second")
    second = await open_pr(answer, head="second")
    repo.required_reviews, repo.required_checks = 0, ["tests"]
    second_head = repo.pulls[second["number"]].head_sha
    resolve = AUTO_MERGE.replace("$id", json.dumps(second["node_id"])).replace(
        "$head", json.dumps(second_head))
    assert "errors" not in (await answer("POST", "/graphql", {"query": resolve}))[1]
    await fake.pass_check(REPO, second_head, "tests")
    assert repo.pulls[second["number"]].merged
    fake.assert_clean()


AUTO_MERGE = """mutation { enablePullRequestAutoMerge(input: {pullRequestId: $id,
  expectedHeadOid: $head, mergeMethod: SQUASH}) { pullRequest { number } } }"""


# -- §4, §14 a review's webhook ---------------------------------------------------------------


async def test_a_submitted_review_is_delivered_in_githubs_shape(fake: FakeGitHub,
                                                                answer: Any) -> None:
    head = await topic(fake)
    pr = await open_pr(answer)
    review = await fake.review(REPO, pr["number"], "REQUEST_CHANGES", user="alice",
                               body="please split this", commit_id=head)
    (payload,) = sent(fake, "pull_request_review")
    assert payload["action"] == "submitted"
    assert payload["review"]["state"] == "changes_requested"  # lowercase, unlike REST
    assert payload["review"]["id"] == review.id and payload["review"]["commit_id"] == head
    assert payload["review"]["body"] == "please split this"
    assert payload["sender"]["login"] == payload["review"]["user"]["login"] == "alice"
    assert payload["pull_request"]["head"]["ref"] == "topic"
    assert webhook_problems("pull_request_review", "submitted", payload, "review") == []
    status, listed = await answer("GET", f"{PULLS}/{pr['number']}/reviews")
    assert status == 200 and listed[0]["state"] == "CHANGES_REQUESTED"
    fake.assert_clean()


# -- §2 closing and reopening -----------------------------------------------------------------


async def test_closing_and_reopening_send_their_webhooks(fake: FakeGitHub, answer: Any) -> None:
    await topic(fake)
    pr = await open_pr(answer)
    await fake.close_pull(REPO, pr["number"], user="alice")
    await fake.reopen_pull(REPO, pr["number"], user="alice")
    await answer("PATCH", f"{PULLS}/{pr['number']}", {"state": "closed"})  # through REST too
    actions = [(p["action"], p["sender"]["login"], p["pull_request"]["merged"])
               for p in sent(fake, "pull_request")]
    assert actions == [("closed", "alice", False), ("reopened", "alice", False),
                       ("closed", "questbot[bot]", False)]
    for payload in sent(fake, "pull_request"):
        assert payload["pull_request"]["state"] == (
            "open" if payload["action"] == "reopened" else "closed")


async def test_a_pull_request_whose_branch_is_gone_cannot_be_reopened(
        fake: FakeGitHub, answer: Any) -> None:
    await topic(fake)
    pr = await open_pr(answer)
    await answer("PATCH", f"{PULLS}/{pr['number']}", {"state": "closed"})
    del fake.repo(REPO).refs["refs/heads/topic"]
    status, body = await answer("PATCH", f"{PULLS}/{pr['number']}", {"state": "open"})
    assert status == 422
    assert body["errors"][0]["message"] == ("state cannot be changed. The topic branch has been "
                                            "deleted.")
    assert fake.repo(REPO).issues[pr["number"]].state == "closed"
