"""The fake follows GitHub on people: what the permission endpoint answers for each role, and
the webhooks for edited and deleted comments and for accounts of a given type."""

from __future__ import annotations

from collections.abc import AsyncIterator

import aiohttp
import pytest
from gidgethub.aiohttp import GitHubAPI

from questbot_testing.fakegithub import FakeGitHub
from questbot_testing.fakegithub.comments import comment_by, delete_comment, edit_comment

REPO = "octo-org/hello"


@pytest.fixture
async def fake() -> AsyncIterator[FakeGitHub]:
    async with FakeGitHub() as server:
        server.create_repository(REPO, {"README.md": "hello\n"})
        server.create_repository("octo-org/secret", {"README.md": "hush\n"}, private=True)
        yield server
        server.assert_clean()  # every answer matched GitHub's schema for it


async def permission_of(fake: FakeGitHub, repo: str, login: str) -> dict[str, object]:
    token = fake.installation_token(fake.repo(repo).installation_id)
    async with aiohttp.ClientSession() as session:
        gh = GitHubAPI(session, "questbot-tests", oauth_token=token, base_url=fake.url)
        answer: dict[str, object] = await gh.getitem(
            f"/repos/{repo}/collaborators/{login}/permission")
    return answer


@pytest.mark.parametrize(("role", "legacy", "flags"), [
    ("admin", "admin", {"pull", "triage", "push", "maintain", "admin"}),
    ("maintain", "write", {"pull", "triage", "push", "maintain"}),
    ("write", "write", {"pull", "triage", "push"}),
    ("triage", "read", {"pull", "triage"}),
    ("read", "read", {"pull"}),
])
async def test_the_permission_endpoint_maps_roles_to_legacy_levels(
        fake: FakeGitHub, role: str, legacy: str, flags: set[str]) -> None:
    fake.set_permission(REPO, "pat", role)
    answer = await permission_of(fake, REPO, "pat")
    assert (answer["permission"], answer["role_name"]) == (legacy, role)
    user = answer["user"]
    assert isinstance(user, dict) and user["role_name"] == role
    assert {flag for flag, on in user["permissions"].items() if on} == flags


async def test_anyone_may_read_a_public_repository_and_no_one_else_a_private_one(
        fake: FakeGitHub) -> None:
    public = await permission_of(fake, REPO, "stranger")
    assert (public["permission"], public["role_name"]) == ("read", "read")
    private = await permission_of(fake, "octo-org/secret", "stranger")
    assert (private["permission"], private["role_name"]) == ("none", "none")
    owner = await permission_of(fake, REPO, "octo-org")
    assert (owner["permission"], owner["role_name"]) == ("admin", "admin")


async def test_edited_and_deleted_comments_send_githubs_shapes(fake: FakeGitHub) -> None:
    issue = await fake.open_issue(REPO, "a bug")
    comment = await fake.comment(REPO, issue.number, "first", user="rex")
    await edit_comment(fake, REPO, comment.id, "second", user="maya")
    edited = fake.deliveries[-1].delivery
    assert edited.headers["X-GitHub-Event"] == "issue_comment"
    assert edited.payload["action"] == "edited"
    assert edited.payload["changes"] == {"body": {"from": "first"}}
    assert edited.payload["comment"]["body"] == "second"
    assert edited.payload["comment"]["user"]["login"] == "rex"  # the author stays
    assert edited.payload["sender"]["login"] == "maya"  # the editor
    await delete_comment(fake, REPO, comment.id)
    deleted = fake.deliveries[-1].delivery.payload
    assert deleted["action"] == "deleted" and deleted["comment"]["id"] == comment.id
    assert comment.id not in fake.repo(REPO).comments


async def test_an_account_can_have_a_type_its_login_does_not_suggest(fake: FakeGitHub) -> None:
    issue = await fake.open_issue(REPO, "a bug")
    await comment_by(fake, REPO, issue.number, "/approve", user="questbot[bot]",
                     user_type="User")
    payload = fake.deliveries[-1].delivery.payload
    user = payload["comment"]["user"]
    assert (user["login"], user["type"]) == ("questbot[bot]", "User")
    assert payload["sender"]["type"] == "User"
