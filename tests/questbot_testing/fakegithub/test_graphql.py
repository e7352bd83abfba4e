"""The fake's ``POST /graphql`` is GitHub's: validated against GitHub's schema, answering in
GitHub's shapes, and changing the same world REST reads — a pull request marked ready here is
``draft: false`` in ``pulls/get``."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest
from gidgethub import GraphQLAuthorizationFailure, QueryError
from gidgethub.aiohttp import GitHubAPI

from questbot_testing.fakegithub import FakeGitHub
from questbot_testing.fakegithub.state import PullRequest

REPO = "octo/gql"
READY = """mutation($id: ID!) { markPullRequestReadyForReview(input: {pullRequestId: $id}) {
  pullRequest { id number isDraft state headRefOid } } }"""
TO_DRAFT = """mutation($id: ID!) { convertPullRequestToDraft(input: {pullRequestId: $id}) {
  pullRequest { isDraft } } }"""
AUTO_MERGE = """mutation($id: ID!, $head: GitObjectID) {
  enablePullRequestAutoMerge(input: {pullRequestId: $id, expectedHeadOid: $head,
                                     mergeMethod: SQUASH}) {
    pullRequest { autoMergeRequest { mergeMethod } mergeStateStatus } } }"""
ENQUEUE = """mutation($id: ID!, $head: GitObjectID) {
  enqueuePullRequest(input: {pullRequestId: $id, expectedHeadOid: $head}) {
    mergeQueueEntry { state position pullRequest { number } } } }"""
REVERT = """mutation($id: ID!) { revertPullRequest(input: {pullRequestId: $id}) {
  pullRequest { state } revertPullRequest { number headRefName isDraft } } }"""


@pytest.fixture
async def fake() -> AsyncIterator[FakeGitHub]:
    async with FakeGitHub() as server:
        server.create_repository(REPO, {"app.py": "x = 1\n"})
        yield server


@pytest.fixture
async def session() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession() as client:
        yield client


@pytest.fixture
def gh(fake: FakeGitHub, session: aiohttp.ClientSession) -> GitHubAPI:
    token = fake.installation_token(fake.repo(REPO).installation_id)
    return GitHubAPI(session, "questbot-tests", oauth_token=token, base_url=fake.url)


async def pull(fake: FakeGitHub, *, draft: bool = True) -> PullRequest:
    await fake.push(REPO, "topic", {"app.py": "x = 2\n"}, user="alice")
    return await fake.open_pull_request(REPO, "topic", user="alice", draft=draft)


async def node_id(gh: GitHubAPI, number: int) -> str:
    return str((await gh.getitem(f"/repos/{REPO}/pulls/{number}"))["node_id"])


async def post(session: aiohttp.ClientSession, fake: FakeGitHub, gh: GitHubAPI | None,
               query: str, **variables: Any) -> tuple[int, Any]:
    headers = {"Authorization": f"bearer {gh.oauth_token}"} if gh else {}
    async with session.post(f"{fake.url}/graphql", json={"query": query, "variables": variables},
                            headers=headers) as response:
        return response.status, await response.json()


async def test_ready_for_review_takes_the_rest_node_id_and_rest_sees_it(
        fake: FakeGitHub, gh: GitHubAPI) -> None:
    pr = await pull(fake)
    pid = await node_id(gh, pr.number)
    data = await gh.graphql(READY, endpoint=f"{fake.url}/graphql", id=pid)
    assert data["markPullRequestReadyForReview"]["pullRequest"] == {
        "id": pid, "number": pr.number, "isDraft": False, "state": "OPEN",
        "headRefOid": pr.head_sha}
    assert (await gh.getitem(f"/repos/{REPO}/pulls/{pr.number}"))["draft"] is False
    sent = fake.deliveries[-1].delivery
    assert (sent.event, sent.payload["action"]) == ("pull_request", "ready_for_review")
    again = await gh.graphql(TO_DRAFT, endpoint=f"{fake.url}/graphql", id=pid)
    assert again == {"convertPullRequestToDraft": {"pullRequest": {"isDraft": True}}}
    assert fake.deliveries[-1].delivery.payload["action"] == "converted_to_draft"
    assert [e.operation_id for e in fake.calls() if e.operation_id.startswith("graphql")] == [
        "graphql/markPullRequestReadyForReview", "graphql/convertPullRequestToDraft"]
    fake.assert_clean()


async def test_an_id_it_cannot_resolve_is_not_found_with_the_field_null(
        fake: FakeGitHub, gh: GitHubAPI, session: aiohttp.ClientSession) -> None:
    status, body = await post(session, fake, gh, READY, id="PR_kwnope")
    assert status == 200
    assert body["data"] == {"markPullRequestReadyForReview": None}
    (error,) = body["errors"]
    assert error["type"] == "NOT_FOUND"
    assert error["message"] == "Could not resolve to a node with the global id of 'PR_kwnope'"
    assert error["path"] == ["markPullRequestReadyForReview"]
    assert error["locations"][0]["line"] == 1
    with pytest.raises(QueryError):
        await gh.graphql(READY, endpoint=f"{fake.url}/graphql", id="PR_kwnope")
    other = fake.create_repository("someone/else", {"f": "1"})  # another installation's PR
    await fake.push("someone/else", "b", {"f": "2"})
    theirs = await fake.open_pull_request("someone/else", "b")
    status, body = await post(session, fake, gh, "query($id: ID!) { node(id: $id) { id } }",
                              id=fake.render.pull_request(other, theirs)["node_id"])
    assert body["errors"][0]["type"] == "NOT_FOUND"
    missing = await post(session, fake, gh, '{ repository(owner: "octo", name: "gql") { '
                                            'pullRequest(number: 99) { id } } }')
    assert missing[1]["errors"][0]["message"] == (
        "Could not resolve to a PullRequest with the number of 99.")
    assert missing[1]["data"] == {"repository": {"pullRequest": None}}


async def test_invalid_queries_are_answered_200_in_githubs_shapes(
        fake: FakeGitHub, gh: GitHubAPI, session: aiohttp.ClientSession) -> None:
    status, body = await post(session, fake, gh, "{ viewer { nonsense } }")
    assert status == 200 and "data" not in body
    assert body["errors"] == [{
        "message": "Field 'nonsense' doesn't exist on type 'User'",
        "locations": [{"line": 1, "column": 12}],
        "extensions": {"code": "undefinedField", "typeName": "User", "fieldName": "nonsense"}}]
    _, body = await post(session, fake, gh, "{ viewer { login ")
    assert body["errors"][0]["message"].startswith("Parse error on")
    assert body["errors"][0]["locations"] == [{"line": 1, "column": 18}]
    _, body = await post(session, fake, gh, '{ repository(owner: "octo") { id } }')
    assert body["errors"][0]["extensions"]["code"] == "missingRequiredArguments"
    _, body = await post(session, fake, gh, "mutation { markPullRequestReadyForReview("
                                            "input: {}) { clientMutationId } }")
    assert "pullRequestId" in body["errors"][0]["message"]


async def test_every_connection_needs_first_or_last_up_to_100(
        fake: FakeGitHub, gh: GitHubAPI, session: aiohttp.ClientSession) -> None:
    query = '{ repository(owner: "octo", name: "gql") { pullRequests%s { totalCount } } }'
    _, body = await post(session, fake, gh, query % "")
    assert body["errors"][0]["message"] == ("You must provide a `first` or `last` value to "
                                            "properly paginate the `pullRequests` connection.")
    assert body["errors"][0]["type"] == "MISSING_PAGINATION_BOUNDARIES"
    _, body = await post(session, fake, gh, query % "(first: 101)")
    assert body["errors"][0]["message"] == ("Requesting 101 records on the `pullRequests` "
                                            "connection exceeds the `first` limit of 100 "
                                            "records.")


async def test_graphql_needs_an_installation_token(
        fake: FakeGitHub, gh: GitHubAPI, session: aiohttp.ClientSession) -> None:
    status, body = await post(session, fake, None, "{ viewer { login } }")
    assert status == 401 and body["message"] == "Requires authentication"
    anonymous = GitHubAPI(session, "questbot-tests", oauth_token="ghs_made_up", base_url=fake.url)
    with pytest.raises(GraphQLAuthorizationFailure):
        await anonymous.graphql("{ viewer { login } }", endpoint=f"{fake.url}/graphql")


async def test_a_field_the_fake_does_not_model_is_a_violation(
        fake: FakeGitHub, gh: GitHubAPI) -> None:
    pr = await pull(fake)
    with pytest.raises(QueryError):  # null for a non-null field, as the violation says why
        await gh.graphql("query($id: ID!) { node(id: $id) { ... on PullRequest { additions } } }",
                         endpoint=f"{fake.url}/graphql", id=await node_id(gh, pr.number))
    assert fake.violations == ["GraphQL: the fake does not model PullRequest.additions"]


async def test_auto_merge_only_where_allowed_and_only_while_not_mergeable(
        fake: FakeGitHub, gh: GitHubAPI, session: aiohttp.ClientSession) -> None:
    pr = await pull(fake, draft=False)
    pid = await node_id(gh, pr.number)
    _, body = await post(session, fake, gh, AUTO_MERGE, id=pid, head=pr.head_sha)
    assert body["errors"][0]["message"] == "Auto merge is not allowed for this repository"
    repo = fake.repo(REPO)
    repo.allow_auto_merge = True
    _, body = await post(session, fake, gh, AUTO_MERGE, id=pid, head=pr.head_sha)
    assert body["errors"][0]["message"] == "Pull request Pull request is in clean status"
    repo.required_checks = ["tests"]
    _, body = await post(session, fake, gh, AUTO_MERGE, id=pid, head=pr.head_sha)
    assert body["data"]["enablePullRequestAutoMerge"]["pullRequest"] == {
        "autoMergeRequest": {"mergeMethod": "SQUASH"}, "mergeStateStatus": "BLOCKED"}
    assert (await gh.getitem(f"/repos/{REPO}/pulls/{pr.number}"))["auto_merge"][
        "merge_method"] == "squash"
    assert await fake.settle_merges(REPO) == []  # the required check has not passed
    await fake.pass_check(REPO, pr.head_sha, "tests")  # GitHub merges on its own, at once
    assert await fake.settle_merges(REPO) == [] and pr.merged
    assert pr.merged and repo.git.commits[pr.merge_commit_sha or ""].parents == (pr.base_sha,)
    fake.assert_clean()


async def test_the_merge_queue_is_the_only_way_in_and_is_pinned_to_the_queued_head(
        fake: FakeGitHub, gh: GitHubAPI, session: aiohttp.ClientSession) -> None:
    pr = await pull(fake, draft=False)
    pid = await node_id(gh, pr.number)
    _, body = await post(session, fake, gh, ENQUEUE, id=pid, head=pr.head_sha)
    assert body["errors"][0]["type"] == "UNPROCESSABLE"
    fake.repo(REPO).merge_queue = True
    _, body = await post(session, fake, gh, ENQUEUE, id=pid, head="0" * 40)
    assert body["data"] == {"enqueuePullRequest": None}
    entry = await gh.graphql(ENQUEUE, endpoint=f"{fake.url}/graphql", id=pid, head=pr.head_sha)
    assert entry["enqueuePullRequest"]["mergeQueueEntry"] == {
        "state": "QUEUED", "position": 1, "pullRequest": {"number": pr.number}}
    async with session.put(f"{fake.url}/repos/{REPO}/pulls/{pr.number}/merge",
                           json={"sha": pr.head_sha},
                           headers={"Authorization": f"token {gh.oauth_token}"}) as response:
        assert response.status == 405
        assert (await response.json())["message"] == "Changes must be made through the merge queue"
    assert await fake.settle_merges(REPO) == [pr.number]


async def test_revert_opens_a_pull_request_undoing_the_merge(
        fake: FakeGitHub, gh: GitHubAPI, session: aiohttp.ClientSession) -> None:
    pr = await pull(fake, draft=False)
    pid = await node_id(gh, pr.number)
    _, body = await post(session, fake, gh, REVERT, id=pid)
    assert body["data"] == {"revertPullRequest": None}  # not merged yet
    await gh.put(f"/repos/{REPO}/pulls/{pr.number}/merge", data={"sha": pr.head_sha})
    await fake.push(REPO, "main", {"other.txt": "meanwhile\n"}, user="bob")
    data = await gh.graphql(REVERT, endpoint=f"{fake.url}/graphql", id=pid)
    revert = data["revertPullRequest"]["revertPullRequest"]
    assert revert["headRefName"] == f"revert-{pr.number}-topic" and revert["isDraft"] is False
    assert data["revertPullRequest"]["pullRequest"]["state"] == "MERGED"
    repo = fake.repo(REPO)
    head = repo.branch_sha(revert["headRefName"]) or ""
    assert repo.git.read(head, "app.py") == b"x = 1\n"
    assert repo.git.read(head, "other.txt") == b"meanwhile\n"
    fake.assert_clean()
