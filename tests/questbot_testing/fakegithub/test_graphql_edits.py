"""The fake's GraphQL edits are REST's edits: ``createCheckRun``, ``updateCheckRun``,
``updateIssueComment``, ``updateIssue`` and ``updatePullRequest`` change the same world as
``checks/create``, ``checks/update``, ``issues/update-comment``, ``issues/update`` and
``pulls/update``, send the same webhooks, and refuse in GraphQL's shapes.

Several mutations go in one document, run one after the other under their aliases (the GraphQL
spec, "Mutation": a mutation's top-level fields execute serially); one that fails answers
``null`` with an error whose ``path`` names its alias, and the others still run (BEHAVIOUR §16:
errors alongside partial ``data``). The document is one request: one exchange in the fake's
log, and one content-creating request against the secondary limit, as GitHub charges a request
with mutations 5 points — one REST write's (docs: graphql/overview/rate-limits-and-query-limits-
for-the-graphql-api, secondary rate limits; BEHAVIOUR §15).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest
from gidgethub import QueryError
from gidgethub.aiohttp import GitHubAPI

from questbot_testing.fakegithub import FakeGitHub
from questbot_testing.fakegithub.graphql import mutations_in

REPO = "octo/gql"
EDITS = """mutation($run: CreateCheckRunInput!, $comment: UpdateIssueCommentInput!,
                    $pull: UpdatePullRequestInput!, $issue: UpdateIssueInput!) {
  run: createCheckRun(input: $run) { checkRun { id databaseId url } }
  comment: updateIssueComment(input: $comment) { issueComment { id databaseId url } }
  pull: updatePullRequest(input: $pull) { pullRequest { id number isDraft } }
  issue: updateIssue(input: $issue) { issue { id number } } }"""
UPDATE_RUN = """mutation($run: UpdateCheckRunInput!) {
  updateCheckRun(input: $run) { checkRun { id databaseId url } } }"""


@pytest.fixture
async def fake() -> AsyncIterator[FakeGitHub]:
    async with FakeGitHub() as server:
        server.create_repository(REPO, {"app.py": "x = 1\n"})
        yield server


@pytest.fixture
async def gh(fake: FakeGitHub) -> AsyncIterator[GitHubAPI]:
    token = fake.installation_token(fake.repo(REPO).installation_id)
    async with aiohttp.ClientSession() as session:
        yield GitHubAPI(session, "questbot-tests", oauth_token=token, base_url=fake.url)


async def world(fake: FakeGitHub, gh: GitHubAPI) -> dict[str, Any]:
    """A pull request, the App's comment on it, the App's issue: their REST answers."""
    await fake.push(REPO, "topic", {"app.py": "x = 2\n"}, user="alice")
    pr = await fake.open_pull_request(REPO, "topic", user="alice")
    comment = await gh.post(f"/repos/{REPO}/issues/{pr.number}/comments", data={"body": "one"})
    issue = await gh.post(f"/repos/{REPO}/issues", data={"title": "inbox", "body": "old"})
    pull = await gh.getitem(f"/repos/{REPO}/pulls/{pr.number}")
    return {"pr": pull, "comment": comment, "issue": issue,
            "repo": pull["base"]["repo"]["node_id"], "head": pr.head_sha}


def edits(made: dict[str, Any], *, comment_id: str | None = None) -> dict[str, Any]:
    return {
        "run": {"repositoryId": made["repo"], "headSha": made["head"], "name": "questbot",
                "externalId": "q1", "status": "COMPLETED", "conclusion": "ACTION_REQUIRED",
                "output": {"title": "Waiting", "summary": "for a person"},
                "actions": [{"label": "Approve", "description": "go on",
                             "identifier": "approve"}]},
        "comment": {"id": comment_id or made["comment"]["node_id"], "body": "two"},
        "pull": {"pullRequestId": made["pr"]["node_id"], "title": "new title", "body": "new"},
        "issue": {"id": made["issue"]["node_id"], "body": "new body", "state": "OPEN"},
    }


async def test_one_document_makes_every_edit_rest_sees_with_rests_webhooks(
        fake: FakeGitHub, gh: GitHubAPI) -> None:
    made = await world(fake, gh)
    before = len(fake.calls())
    sent_before = len(fake.deliveries)
    data = await gh.graphql(EDITS, endpoint=f"{fake.url}/graphql", **edits(made))
    run = data["run"]["checkRun"]
    rest_run = await gh.getitem(f"/repos/{REPO}/check-runs/{run['databaseId']}")
    assert (run["id"], run["url"]) == (rest_run["node_id"], rest_run["html_url"])
    assert (rest_run["status"], rest_run["conclusion"], rest_run["external_id"]) == (
        "completed", "action_required", "q1")
    assert rest_run["output"]["summary"] == "for a person"
    assert data["comment"]["issueComment"]["url"] == made["comment"]["html_url"]
    listed = await gh.getitem(f"/repos/{REPO}/issues/{made['pr']['number']}/comments")
    assert [c["body"] for c in listed] == ["two"]
    rest_pull = await gh.getitem(f"/repos/{REPO}/pulls/{made['pr']['number']}")
    assert (rest_pull["title"], rest_pull["body"]) == ("new title", "new")
    issue = fake.repo(REPO).issues[made["issue"]["number"]]
    assert (issue.body, issue.state) == ("new body", "open")
    # one request in the log, named by its mutations
    calls = fake.calls()[before:]
    graphql = [c.operation_id for c in calls if c.operation_id.startswith("graphql")]
    assert graphql == ["graphql/createCheckRun,updateIssueComment,updatePullRequest,updateIssue"]
    # the webhooks REST's writes send: the run made completed, the comment edited
    sent = [(d.delivery.event, d.delivery.payload["action"])
            for d in fake.deliveries[sent_before:]]
    assert sent == [("check_run", "completed"), ("issue_comment", "edited")]
    fake.assert_clean()


async def test_one_that_fails_is_null_under_its_alias_and_the_others_still_run(
        fake: FakeGitHub, gh: GitHubAPI) -> None:
    made = await world(fake, gh)
    with pytest.raises(QueryError) as caught:
        await gh.graphql(EDITS, endpoint=f"{fake.url}/graphql",
                         **edits(made, comment_id="IC_999999"))
    response = caught.value.response
    assert response["data"]["comment"] is None
    assert response["data"]["run"]["checkRun"]["databaseId"] > 0
    assert response["data"]["pull"]["pullRequest"]["number"] == made["pr"]["number"]
    [error] = response["errors"]
    assert (error["type"], error["path"]) == ("NOT_FOUND", ["comment"])
    assert error["message"] == "Could not resolve to a node with the global id of 'IC_999999'"
    # the ones before and after it ran
    assert fake.repo(REPO).issues[made["issue"]["number"]].body == "new body"
    fake.assert_clean()


async def test_a_persons_comment_is_forbidden_as_rest_forbids_it(
        fake: FakeGitHub, gh: GitHubAPI) -> None:
    made = await world(fake, gh)
    theirs = await fake.comment(REPO, made["pr"]["number"], "mine", user="alice")
    with pytest.raises(QueryError) as caught:
        await gh.graphql(EDITS, endpoint=f"{fake.url}/graphql",
                         **edits(made, comment_id=f"IC_{theirs.id}"))
    [error] = caught.value.response["errors"]
    assert (error["type"], error["path"]) == ("FORBIDDEN", ["comment"])
    assert error["message"] == "Resource not accessible by integration"
    assert fake.repo(REPO).comments[theirs.id].body == "mine"


async def test_completing_a_run_by_graphql_sends_check_run_completed_once(
        fake: FakeGitHub, gh: GitHubAPI) -> None:
    made = await world(fake, gh)
    created = await gh.post(f"/repos/{REPO}/check-runs", data={
        "name": "questbot", "head_sha": made["head"], "status": "in_progress"})
    change = {"repositoryId": made["repo"], "checkRunId": created["node_id"],
              "conclusion": "NEUTRAL", "output": {"title": "Superseded", "summary": "moved on"}}
    sent_before = len(fake.deliveries)
    data = await gh.graphql(UPDATE_RUN, endpoint=f"{fake.url}/graphql", run=change)
    assert data["updateCheckRun"]["checkRun"]["databaseId"] == created["id"]
    await gh.graphql(UPDATE_RUN, endpoint=f"{fake.url}/graphql", run=change)
    rest_run = await gh.getitem(f"/repos/{REPO}/check-runs/{created['id']}")
    assert (rest_run["status"], rest_run["conclusion"]) == ("completed", "neutral")
    sent = [(d.delivery.event, d.delivery.payload["action"])
            for d in fake.deliveries[sent_before:]]
    assert sent == [("check_run", "completed")]


async def test_a_check_run_on_a_commit_it_lacks_is_unprocessable(
        fake: FakeGitHub, gh: GitHubAPI) -> None:
    made = await world(fake, gh)
    bad = {**edits(made)["run"], "headSha": "0" * 40}
    with pytest.raises(QueryError) as caught:
        await gh.graphql("""mutation($run: CreateCheckRunInput!) {
            createCheckRun(input: $run) { checkRun { id } } }""",
                         endpoint=f"{fake.url}/graphql", run=bad)
    [error] = caught.value.response["errors"]
    assert error["type"] == "UNPROCESSABLE"
    assert error["message"].startswith("No commit found for SHA")
    assert not fake.repo(REPO).check_runs


async def test_each_mutation_of_a_document_counts_as_content_creation(
        fake: FakeGitHub, gh: GitHubAPI) -> None:
    """One request, but whether GitHub counts it once against content creation is not
    documented: the fake counts each mutation, the stricter reading (BEHAVIOUR §16)."""
    made = await world(fake, gh)
    limits = fake.secondary
    installation = fake.repo(REPO).installation_id
    taken = len(limits._seen.get(installation, ()))
    await gh.graphql(EDITS, endpoint=f"{fake.url}/graphql", **edits(made))
    assert len(limits._seen[installation]) == taken + mutations_in(EDITS) > taken + 1
