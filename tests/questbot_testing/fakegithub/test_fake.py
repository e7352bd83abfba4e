"""The fake GitHub keeps itself honest: it validates, authenticates, pins merges, caches, throttles
and sends webhooks signed the way GitHub signs them."""

from __future__ import annotations

import base64
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest
from aiohttp import web
from gidgethub import BadRequest, RateLimitExceeded, apps, sansio
from gidgethub.aiohttp import GitHubAPI

from questbot_testing.fakegithub import (
    FakeGitHub,
    app_jwt,
    build_delivery,
    build_payload,
    example_files,
    generate_key_pair,
    load_example,
)
from questbot_testing.fakegithub.openapi import translate_nullable

REPO = "octo-org/hello"
SECRET = "s3cret"


@pytest.fixture
async def fake() -> AsyncIterator[FakeGitHub]:
    async with FakeGitHub(webhook_secret=SECRET) as server:
        server.create_repository(REPO, {"README.md": "hello\n", "src/app.py": "x = 1\n"})
        yield server
        server.assert_clean()


@pytest.fixture
async def session() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession() as client:
        yield client


@pytest.fixture
def gh(fake: FakeGitHub, session: aiohttp.ClientSession) -> GitHubAPI:
    token = fake.installation_token(fake.repo(REPO).installation_id)
    return GitHubAPI(session, "questbot-tests", oauth_token=token, base_url=fake.url)


async def raw(
    session: aiohttp.ClientSession,
    fake: FakeGitHub,
    method: str,
    path: str,
    gh: GitHubAPI,
    **kwargs: Any,
) -> tuple[int, Any]:
    headers = {"Authorization": f"token {gh.oauth_token}"}
    async with session.request(method, fake.url + path, headers=headers, **kwargs) as response:
        return response.status, await response.json(content_type=None)


# -- validation against the REST description ------------------------------------------------


async def test_unknown_route_is_a_violation(fake: FakeGitHub, session, gh: GitHubAPI) -> None:
    status, body = await raw(session, fake, "GET", f"/repos/{REPO}/issues/1/chronology", gh)
    assert status == 404
    assert body["message"] == "Not Found"
    assert fake.violations == [
        f"GET /repos/{REPO}/issues/1/chronology: no such operation in the REST description"
    ]
    fake.violations.clear()


async def test_a_github_route_the_fake_does_not_model_is_a_404_and_a_violation(
        fake: FakeGitHub, session, gh: GitHubAPI) -> None:
    status, body = await raw(session, fake, "GET", f"/repos/{REPO}/issues/1/timeline", gh)
    assert status == 404
    assert body["message"] == "Not Found"
    assert fake.violations == [f"GET /repos/{REPO}/issues/1/timeline: the fake does not "
                               "implement issues/list-events-for-timeline"]
    fake.violations.clear()


async def test_bad_body_is_a_violation_and_422(fake: FakeGitHub, gh: GitHubAPI) -> None:
    with pytest.raises(BadRequest) as caught:
        await gh.post(f"/repos/{REPO}/check-runs", data={"name": "questbot", "status": "nope"})
    assert caught.value.status_code == 422
    assert any("'head_sha' is a required property" in v for v in fake.violations)
    assert any("'nope' is not one of" in v for v in fake.violations)
    assert all(
        v.startswith(f"POST /repos/{REPO}/check-runs (checks/create)") for v in fake.violations
    )
    fake.violations.clear()


async def test_good_requests_are_clean_and_logged(fake: FakeGitHub, gh: GitHubAPI) -> None:
    sha = fake.repo(REPO).branch_sha("main")
    run = await gh.post(
        f"/repos/{REPO}/check-runs",
        data={"name": "questbot", "head_sha": sha, "external_id": "quest-7"},
    )
    await gh.patch(f"/repos/{REPO}/check-runs/{run['id']}", data={"conclusion": "success"})
    listed = await gh.getitem(f"/repos/{REPO}/commits/{sha}/check-runs")
    assert [(r["external_id"], r["conclusion"]) for r in listed["check_runs"]] == [
        ("quest-7", "success")
    ]
    assert [e.operation_id for e in fake.requests] == [
        "checks/create",
        "checks/update",
        "checks/list-for-ref",
    ]
    assert fake.violations == []


def test_nullable_becomes_a_null_alternative() -> None:
    assert translate_nullable({"type": "string", "nullable": True}) == {"type": ["string", "null"]}
    assert translate_nullable({"$ref": "#/x", "nullable": True}) == {
        "anyOf": [{"$ref": "#/x"}, {"type": "null"}]
    }
    assert translate_nullable({"type": "string", "enum": ["a"], "nullable": True})["enum"] == [
        "a",
        None,
    ]


# -- comments -------------------------------------------------------------------------------


async def test_comments_are_listed_in_pages_linked_the_way_github_links_them(
        fake: FakeGitHub, session: aiohttp.ClientSession, gh: GitHubAPI) -> None:
    issue = await fake.open_issue(REPO, "pages", user="alice")
    for n in range(5):
        await fake.comment(REPO, issue.number, f"comment {n}", user="alice")
    path = f"/repos/{REPO}/issues/{issue.number}/comments"
    headers = {"Authorization": f"token {gh.oauth_token}"}
    links = []
    for page in (1, 2, 3):
        async with session.get(f"{fake.url}{path}?per_page=2&page={page}",
                               headers=headers) as response:
            assert response.status == 200
            links.append(response.headers.get("Link", ""))
    by_id = f"{fake.url}/repositories/{fake.repo(REPO).id}/issues/{issue.number}/comments"
    assert links[0] == (f'<{by_id}?per_page=2&page=2>; rel="next", '
                        f'<{by_id}?per_page=2&page=3>; rel="last"')
    assert [part.split("; ")[1] for part in links[1].split(", ")] == [
        'rel="prev"', 'rel="next"', 'rel="last"', 'rel="first"']
    assert links[2] == (f'<{by_id}?per_page=2&page=2>; rel="prev", '
                        f'<{by_id}?per_page=2&page=1>; rel="first"')
    bodies = [c["body"] async for c in gh.getiter(path + "{?per_page}", {"per_page": 2})]
    assert bodies == [f"comment {n}" for n in range(5)]  # ascending by id, every page
    async with session.get(fake.url + path, headers=headers) as response:  # 30 a page
        assert len(await response.json()) == 5 and "Link" not in response.headers
    assert fake.calls("issues/list-comments")[-1].status == 200
    assert fake.violations == []


async def test_a_repository_id_path_is_the_repository(fake: FakeGitHub, gh: GitHubAPI) -> None:
    issue = await fake.open_issue(REPO, "by id", user="alice")
    await fake.comment(REPO, issue.number, "hello", user="alice")
    listed = await gh.getitem(
        f"/repositories/{fake.repo(REPO).id}/issues/{issue.number}/comments")
    assert [c["body"] for c in listed] == ["hello"]
    with pytest.raises(BadRequest) as caught:
        await gh.getitem(f"/repos/{REPO}/issues/999/comments")
    assert caught.value.status_code == 404


# -- authentication -------------------------------------------------------------------------


async def test_token_flow_through_gidgethub(fake: FakeGitHub, session) -> None:
    anonymous = GitHubAPI(session, "questbot-tests", base_url=fake.url)
    installation_id = fake.repo(REPO).installation_id
    token = await apps.get_installation_access_token(
        anonymous,
        installation_id=str(installation_id),
        app_id=str(fake.world.app_id),
        private_key=fake.keys.private_pem,
    )
    assert token["expires_at"].endswith("Z")
    gh = GitHubAPI(session, "questbot-tests", oauth_token=token["token"], base_url=fake.url)
    content = await gh.getitem(f"/repos/{REPO}/contents/README.md")
    assert base64.b64decode(content["content"]) == b"hello\n"
    jwt = app_jwt(fake.world.app_id, fake.keys.private_pem)
    assert (await anonymous.getitem("/app", jwt=jwt))["id"] == fake.world.app_id
    assert (await anonymous.getitem(f"/repos/{REPO}/installation", jwt=jwt))["id"] == (
        installation_id
    )


@pytest.mark.parametrize("problem", ["other key", "wrong app", "too long", "none"])
async def test_bad_jwt_is_401(fake: FakeGitHub, session, problem: str) -> None:
    key = generate_key_pair().private_pem if problem == "other key" else fake.keys.private_pem
    app_id = 1 if problem == "wrong app" else fake.world.app_id
    lifetime = 3600 if problem == "too long" else 540
    headers = (
        {}
        if problem == "none"
        else {"Authorization": f"Bearer {app_jwt(app_id, key, lifetime=lifetime)}"}
    )
    async with session.get(fake.url + "/app", headers=headers) as response:
        assert response.status == 401
        body = await response.json()
    assert body["documentation_url"].startswith("https://docs.github.com")
    assert body["status"] == "401"


async def test_repository_endpoints_need_an_issued_token(fake: FakeGitHub, session) -> None:
    other = fake.create_repository("someone-else/repo")
    foreign = fake.installation_token(other.installation_id)
    expired = fake.installation_token(fake.repo(REPO).installation_id, lifetime=-1)
    for header, status in [
        (None, 401),
        ("token ghs_made_up", 401),
        (f"token {expired}", 401),
        (f"token {foreign}", 404),
    ]:
        headers = {"Authorization": header} if header else {}
        async with session.get(f"{fake.url}/repos/{REPO}/pulls/1", headers=headers) as response:
            assert response.status == status, header


# -- merges, caching, rate limits -----------------------------------------------------------


async def test_merge_is_pinned_to_the_approved_sha(fake: FakeGitHub, gh: GitHubAPI) -> None:
    first = await fake.push(REPO, "quest/1", {"src/app.py": "x = 2\n"})
    pr = await fake.open_pull_request(REPO, "quest/1")
    await fake.push(REPO, "quest/1", {"src/app.py": "x = 3\n"}, user="mallory")
    with pytest.raises(BadRequest) as caught:
        await gh.put(f"/repos/{REPO}/pulls/{pr.number}/merge", data={"sha": first.sha})
    assert caught.value.status_code == 409
    assert "Head branch was modified" in str(caught.value)
    head = (await gh.getitem(f"/repos/{REPO}/pulls/{pr.number}"))["head"]["sha"]
    merged = await gh.put(f"/repos/{REPO}/pulls/{pr.number}/merge", data={"sha": head})
    assert fake.repo(REPO).branch_sha("main") == merged["sha"]
    assert fake.repo(REPO).git.read(merged["sha"], "src/app.py") == b"x = 3\n"
    with pytest.raises(BadRequest) as again:
        await gh.put(f"/repos/{REPO}/pulls/{pr.number}/merge", data={"sha": head})
    assert again.value.status_code == 405
    assert [e.json["sha"] for e in fake.calls("pulls/merge")] == [first.sha, head, head]


async def test_update_branch_honours_expected_head_sha(fake: FakeGitHub, gh: GitHubAPI) -> None:
    await fake.push(REPO, "quest/2", {"new.txt": "a\n"})
    pr = await fake.open_pull_request(REPO, "quest/2")
    await fake.push(REPO, "main", {"README.md": "moved\n"})
    with pytest.raises(BadRequest) as caught:
        await gh.put(
            f"/repos/{REPO}/pulls/{pr.number}/update-branch", data={"expected_head_sha": "0" * 40}
        )
    assert caught.value.status_code == 422
    await gh.put(
        f"/repos/{REPO}/pulls/{pr.number}/update-branch", data={"expected_head_sha": pr.head_sha}
    )
    repo = fake.repo(REPO)
    assert repo.git.read(repo.branch_sha("quest/2") or "", "README.md") == b"moved\n"


async def test_etag_answers_304_without_spending_rate_limit(fake: FakeGitHub, session) -> None:
    token = fake.installation_token(fake.repo(REPO).installation_id)
    gh = GitHubAPI(session, "questbot-tests", oauth_token=token, base_url=fake.url, cache={})
    first = await gh.getitem(f"/repos/{REPO}/contents/README.md")
    remaining = gh.rate_limit.remaining
    second = await gh.getitem(f"/repos/{REPO}/contents/README.md")
    assert second == first
    assert [e.status for e in fake.requests] == [200, 304]
    assert "if-none-match" in fake.requests[1].headers
    async with session.get(
        f"{fake.url}/repos/{REPO}/contents/README.md", headers={"Authorization": f"token {token}"}
    ) as response:
        assert response.headers["x-ratelimit-remaining"] == str(remaining - 1)
        assert response.headers["x-ratelimit-resource"] == "core"


async def test_throttle_knob(fake: FakeGitHub, gh: GitHubAPI) -> None:
    fake.throttle(1)
    with pytest.raises(RateLimitExceeded):
        await gh.getitem(f"/repos/{REPO}/contents/README.md")
    fake.throttle(2, status=429, retry_after=7)
    for _ in range(2):
        with pytest.raises(BadRequest) as caught:
            await gh.getitem(f"/repos/{REPO}/contents/README.md")
        assert caught.value.status_code == 429
        assert caught.value.headers["retry-after"] == "7"
    await gh.getitem(f"/repos/{REPO}/contents/README.md")
    assert [e.status for e in fake.requests] == [403, 429, 429, 200]


# -- contents and pushes --------------------------------------------------------------------


async def test_contents_base64_round_trip(fake: FakeGitHub, gh: GitHubAPI) -> None:
    data = bytes(range(256)) * 3
    commit = await fake.push(REPO, "bin", {"assets/blob.bin": data})
    got = await gh.getitem(f"/repos/{REPO}/contents/assets/blob.bin{{?ref}}", {"ref": "bin"})
    assert base64.b64decode(got["content"]) == data
    assert got["sha"] == fake.repo(REPO).git.files(commit.sha)["assets/blob.bin"]
    inherited = await gh.getitem(f"/repos/{REPO}/contents/README.md{{?ref}}", {"ref": "bin"})
    assert base64.b64decode(inherited["content"]) == b"hello\n"


async def test_push_moves_ref_and_sends_signed_webhooks(fake: FakeGitHub, aiohttp_server) -> None:
    received: list[sansio.Event] = []

    async def hook(request: web.Request) -> web.Response:
        body = await request.read()
        event = sansio.Event.from_http(request.headers, body, secret=SECRET)  # verifies sha256
        received.append(event)
        return web.Response(status=202)

    app = web.Application()
    app.router.add_post("/webhook", hook)
    receiver = await aiohttp_server(app)
    fake.webhook_url = str(receiver.make_url("/webhook"))
    await fake.push(REPO, "quest/3", {"a.txt": "1\n"})
    pr = await fake.open_pull_request(REPO, "quest/3", draft=True)
    before = pr.head_sha
    commit = await fake.push(REPO, "quest/3", {"a.txt": "2\n"}, user="alice")
    assert fake.repo(REPO).branch_sha("quest/3") == commit.sha == pr.head_sha
    assert [(e.event, e.data.get("action")) for e in received] == [
        ("push", None),
        ("pull_request", "opened"),
        ("push", None),
        ("pull_request", "synchronize"),
    ]
    push, sync = received[2], received[3]
    assert push.data["ref"] == "refs/heads/quest/3"
    assert (push.data["before"], push.data["after"]) == (before, commit.sha)
    assert push.data["repository"]["full_name"] == REPO
    assert push.data["installation"]["id"] == fake.repo(REPO).installation_id
    assert sync.data["pull_request"]["head"]["sha"] == commit.sha
    assert sync.data["sender"]["login"] == "alice"
    assert all(d.status == 202 for d in fake.deliveries)


async def test_a_push_lists_each_commits_added_removed_and_modified_paths(
        fake: FakeGitHub) -> None:
    """GitHub's ``push`` payload names, per commit, the paths it added, removed and modified
    (the example payloads carry all three): a receiver tells a push that changed a file it
    cares about — questbot's own settings file — from the rest."""
    await fake.push(REPO, "main", {"a.txt": "1\n", "b.txt": "1\n"})
    await fake.push(REPO, "main", {"a.txt": "2\n", "b.txt": None, "c.txt": "new\n"})
    (*_, last) = [d.delivery.payload for d in fake.deliveries if d.delivery.event == "push"]
    (commit,) = last["commits"]
    assert (commit["added"], commit["removed"], commit["modified"]) == (
        ["c.txt"], ["b.txt"], ["a.txt"])
    assert last["head_commit"]["modified"] == ["a.txt"]
    example = load_example("push", "with-new-branch")["commits"][0]
    assert {"added", "removed", "modified"} <= set(example)  # as GitHub's own example has them


async def test_comment_and_check_helpers_deliver_events(fake: FakeGitHub) -> None:
    sha = fake.repo(REPO).branch_sha("main") or ""
    issue = await fake.open_issue(REPO, "It breaks")
    await fake.comment(REPO, issue.number, "/quest fix", user="alice")
    await fake.fail_check(REPO, sha, "tests")
    events = [(d.delivery.event, d.delivery.payload.get("action")) for d in fake.deliveries]
    assert events == [
        ("issues", "opened"),
        ("issue_comment", "created"),
        ("check_run", "completed"),
    ]
    comment = fake.deliveries[1].delivery.payload
    assert comment["comment"]["body"] == "/quest fix"
    assert "pull_request" not in comment["issue"]
    check = fake.deliveries[2].delivery.payload["check_run"]
    assert (check["head_sha"], check["conclusion"]) == (sha, "failure")


# -- webhook examples -----------------------------------------------------------------------


def test_every_example_payload_loads_and_signs() -> None:
    examples = example_files()
    # upstream's 133 files of the 16 events questbot reads, and each event's example from
    # GitHub's docs
    assert len(examples) == 133 + 16
    for example in examples:
        payload = example.load()
        delivery = build_delivery(example.event, payload, SECRET, delivery_id="d-1")
        headers = {k.lower(): v for k, v in delivery.headers.items()}
        event = sansio.Event.from_http(headers, delivery.body, secret=SECRET)
        assert event.data == payload, (example.event, example.name)
        assert event.delivery_id == "d-1"
        assert delivery.headers["X-Hub-Signature"].startswith("sha1=")
        assert delivery.headers["User-Agent"].startswith("GitHub-Hookshot/")


def test_build_payload_overrides() -> None:
    payload = build_payload(
        "issue_comment",
        "created",
        {"issue": {"number": 9}},
        repository="acme/widgets",
        installation_id=77,
        comment_body="/approve",
        user="bob",
        user_type="User",
    )
    assert payload["repository"]["full_name"] == "acme/widgets"
    assert payload["repository"]["owner"]["login"] == "acme"
    assert payload["installation"]["id"] == 77
    assert payload["comment"]["body"] == "/approve"
    assert payload["comment"]["user"]["login"] == payload["sender"]["login"] == "bob"
    assert payload["issue"]["number"] == 9
    assert payload["issue"]["title"]  # the rest of the example survives the merge
    check = build_payload("check_run", "completed", head_sha="a" * 40)
    assert check["check_run"]["head_sha"] == "a" * 40
