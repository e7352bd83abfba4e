"""The fake is the App's GitHub as GitHub is: who the App is, what its tokens may do, when
they stop working, and what it is told about its own writes (BEHAVIOUR.md §13, §16, §17)."""

from __future__ import annotations

import json
from typing import Any

import aiohttp
import pytest

from questbot_testing import published
from questbot_testing.fakegithub import FakeGitHub, app_jwt, nodes
from questbot_testing.fakegithub.manifest import ManifestRefused, register
from questbot_testing.fakegithub.permissions import NOT_ACCESSIBLE
from tests.questbot_testing.fakegithub.conftest import REPO

BASE = f"/repos/{REPO}"


async def _send(fake: FakeGitHub, method: str, path: str, body: Any = None, *,
                auth: str) -> tuple[int, Any]:
    async with aiohttp.ClientSession() as session, session.request(
            method, fake.url + path, json=body,
            headers={"Authorization": auth, "Accept": "application/vnd.github+json"}) as reply:
        text = await reply.read()
        return reply.status, json.loads(text) if text else None


def _jwt(fake: FakeGitHub) -> str:
    return "Bearer " + app_jwt(fake.world.app_id, fake.keys.private_pem)


# -- who the App is (§13) -----------------------------------------------------------------------


async def test_get_app_names_the_app_as_registered_and_takes_only_its_jwt() -> None:
    async with FakeGitHub(app_slug="fixbot", app_id=777) as fake:
        fake.create_repository(REPO, {"a.txt": "a\n"})
        status, app = await _send(fake, "GET", "/app", auth=_jwt(fake))
        assert status == 200 and (app["id"], app["slug"]) == (777, "fixbot")
        token = fake.installation_token(fake.repo(REPO).installation_id)
        status, body = await _send(fake, "GET", "/app", auth=f"token {token}")
        assert (status, body["message"]) == (401, "A JSON web token could not be decoded")
        fake.assert_clean()


async def test_the_app_is_told_of_its_own_comments_and_completed_check_runs() -> None:
    """GitHub sends the App's own writes back to it, as its bot account (``type: Bot``) and
    its App: a bot must tell them from people's comments and other Apps' checks."""
    async with FakeGitHub(app_slug="fixbot") as fake:
        repo = fake.create_repository(REPO, {"a.txt": "a\n"})
        token = "token " + fake.installation_token(repo.installation_id)
        issue = await fake.open_issue(REPO, "bug")
        status, made = await _send(fake, "POST", f"{BASE}/issues/{issue.number}/comments",
                                   {"body": "/approve A is what you would type"}, auth=token)
        assert status == 201
        await _send(fake, "PATCH", f"{BASE}/issues/comments/{made['id']}", {"body": "edited"},
                    auth=token)
        sha = str(repo.branch_sha("main"))
        await _send(fake, "POST", f"{BASE}/check-runs", {"name": "fixbot", "head_sha": sha,
                                                         "status": "in_progress"}, auth=token)
        status, run = await _send(fake, "POST", f"{BASE}/check-runs", {
            "name": "fixbot", "head_sha": sha, "conclusion": "failure",
            "output": {"title": "failed", "summary": "s"}}, auth=token)
        sent = [(d.delivery.event, d.delivery.payload.get("action"), d.delivery.payload)
                for d in fake.deliveries]
        created, edited, completed = sent[1:]  # after the issue a person opened
        assert created[:2] == ("issue_comment", "created")
        for who in (created[2]["comment"]["user"], created[2]["sender"]):
            assert (who["login"], who["type"]) == ("fixbot[bot]", "Bot")
        assert edited[:2] == ("issue_comment", "edited")
        assert edited[2]["changes"] == {"body": {"from": "/approve A is what you would type"}}
        assert completed[:2] == ("check_run", "completed")  # the in-progress one sent nothing
        assert completed[2]["check_run"]["id"] == run["id"]
        assert completed[2]["check_run"]["app"]["id"] == fake.world.app_id
        assert completed[2]["check_run"]["app"]["slug"] == "fixbot"
        for event, action, payload in (created, edited, completed):
            assert _schema_problems(event, str(action), payload) == [], (event, action)
        fake.assert_clean()


def _schema_problems(event: str, action: str, payload: dict[str, Any]) -> list[str]:
    """What of ``payload`` breaks octokit/webhooks' schema of ``<event>.<action>``."""
    return published.webhook_problems(event, action, payload)


# -- tokens (§13) -------------------------------------------------------------------------------


@pytest.mark.parametrize("how", ["revoked", "expired"])
async def test_a_revoked_or_expired_token_is_answered_401_and_a_new_one_works(
        fake: FakeGitHub, how: str) -> None:
    installation = fake.repo(REPO).installation_id
    path = f"/app/installations/{installation}/access_tokens"
    status, first = await _send(fake, "POST", path, auth=_jwt(fake))
    assert status == 201
    auth = f"token {first['token']}"
    assert (await _send(fake, "GET", f"{BASE}/git/ref/heads/main", auth=auth))[0] == 200
    if how == "revoked":
        assert fake.revoke_tokens(installation) == 1
    else:
        fake.expire_tokens(installation)
    status, body = await _send(fake, "GET", f"{BASE}/git/ref/heads/main", auth=auth)
    assert (status, body["message"]) == (401, "Bad credentials")
    status, second = await _send(fake, "POST", path, auth=_jwt(fake))
    assert status == 201 and second["token"] != first["token"]
    status, _ = await _send(fake, "GET", f"{BASE}/git/ref/heads/main",
                            auth=f"token {second['token']}")
    assert status == 200
    fake.assert_clean()


async def test_a_token_may_do_what_the_app_may_or_the_subset_it_asked_for(
        fake: FakeGitHub) -> None:
    register(fake.world, {"default_permissions": {"issues": "write", "contents": "read"},
                          "default_events": ["issues"]})
    installation = fake.repo(REPO).installation_id
    path = f"/app/installations/{installation}/access_tokens"
    status, token = await _send(fake, "POST", path, auth=_jwt(fake))
    assert status == 201
    assert token["permissions"] == {"issues": "write", "contents": "read", "metadata": "read"}
    status, body = await _send(fake, "POST", path, {"permissions": {"contents": "write"}},
                               auth=_jwt(fake))
    assert (status, body["message"]) == (
        422, "The permissions requested are not granted to this installation.")
    status, narrow = await _send(fake, "POST", path, {"permissions": {"contents": "read"}},
                                 auth=_jwt(fake))
    assert status == 201 and narrow["permissions"] == {"contents": "read"}
    status, _ = await _send(fake, "POST", f"{BASE}/issues", {"title": "t"},
                            auth=f"token {narrow['token']}")
    assert status == 403
    fake.denied.clear()
    fake.assert_clean()


# -- permissions (§13, §16, §17) ----------------------------------------------------------------


async def test_a_request_beyond_the_apps_permissions_is_403_not_accessible(
        fake: FakeGitHub) -> None:
    register(fake.world, {"default_permissions": {"issues": "write", "contents": "read",
                                                  "pull_requests": "read"}})
    repo = fake.repo(REPO)
    auth = "token " + fake.installation_token(repo.installation_id)
    sha = str(repo.branch_sha("main"))
    status, body = await _send(fake, "POST", f"{BASE}/check-runs",
                               {"name": "x", "head_sha": sha}, auth=auth)
    assert (status, body["message"]) == (403, NOT_ACCESSIBLE)
    status, _ = await _send(fake, "POST", f"{BASE}/git/refs",
                            {"ref": "refs/heads/x", "sha": sha}, auth=auth)
    assert status == 403  # contents: read is not write
    assert (await _send(fake, "GET", f"{BASE}/git/ref/heads/main", auth=auth))[0] == 200
    assert (await _send(fake, "GET", f"{BASE}/collaborators/alice/permission",
                        auth=auth))[0] == 200  # metadata: every App has it
    assert fake.denied == [
        f"POST {BASE}/check-runs (checks/create) needs checks: write",
        f"POST {BASE}/git/refs (git/create-ref) needs contents: write"]
    assert not repo.check_runs and "refs/heads/x" not in repo.refs  # refused: nothing changed
    fake.denied.clear()
    fake.assert_clean()


async def test_a_pull_requests_thread_takes_issues_or_pull_requests_an_issue_issues_only(
        fake: FakeGitHub) -> None:
    register(fake.world, {"default_permissions": {"pull_requests": "write",
                                                  "contents": "write"}})
    await fake.push(REPO, "topic", {"b.txt": "b\n"})
    pr = await fake.open_pull_request(REPO, "topic")
    issue = await fake.open_issue(REPO, "bug")
    auth = "token " + fake.installation_token(fake.repo(REPO).installation_id)
    status, _ = await _send(fake, "POST", f"{BASE}/issues/{pr.number}/comments",
                            {"body": "on the pull request"}, auth=auth)
    assert status == 201
    status, body = await _send(fake, "POST", f"{BASE}/issues/{issue.number}/comments",
                               {"body": "on the issue"}, auth=auth)
    assert (status, body["message"]) == (403, NOT_ACCESSIBLE)
    fake.denied.clear()
    fake.assert_clean()


async def test_a_graphql_mutation_beyond_the_apps_permissions_is_forbidden(
        fake: FakeGitHub) -> None:
    register(fake.world, {"default_permissions": {"contents": "write", "pull_requests": "read"}})
    await fake.push(REPO, "topic", {"b.txt": "b\n"})
    pr = await fake.open_pull_request(REPO, "topic", draft=True)
    auth = "token " + fake.installation_token(fake.repo(REPO).installation_id)
    node = nodes.node_id(nodes.PULL_REQUEST, fake.repo(REPO).id, pr.number)
    query = ("mutation($id: ID!) { markPullRequestReadyForReview(input: {pullRequestId: $id}) "
             "{ pullRequest { isDraft } } }")
    status, body = await _send(fake, "POST", "/graphql", {"query": query,
                                                          "variables": {"id": node}}, auth=auth)
    assert status == 200 and body["data"] == {"markPullRequestReadyForReview": None}
    (error,) = body["errors"]
    assert (error["type"], error["message"]) == ("FORBIDDEN", NOT_ACCESSIBLE)
    assert pr.draft  # nothing was done
    fake.denied.clear()
    fake.assert_clean()


# -- the manifest and the events it subscribes to -----------------------------------------------


async def test_the_app_is_sent_only_the_events_it_subscribed_to(fake: FakeGitHub) -> None:
    register(fake.world, {"default_permissions": {"issues": "write"},
                          "default_events": ["issues"]})
    await fake.open_issue(REPO, "bug")
    await fake.push(REPO, "main", {"b.txt": "b\n"})  # push: not subscribed
    assert [d.delivery.event for d in fake.deliveries] == ["issues"]


def test_an_event_without_the_permission_behind_it_cannot_be_subscribed_to(
        fake: FakeGitHub) -> None:
    with pytest.raises(ManifestRefused, match=r"push \(needs contents\)"):
        register(fake.world, {"default_permissions": {"issues": "write"},
                              "default_events": ["issues", "push"]})
