"""Conditional requests as GitHub answers them: a GET carries an ``ETag``; sent again with it in
``If-None-Match`` it is answered ``304 Not Modified`` with no body, and does not count against
the rate limit (BEHAVIOUR.md §15); a changed resource gets a new ``ETag`` and a 200."""

from __future__ import annotations

from collections.abc import AsyncIterator

import aiohttp
import pytest
from multidict import CIMultiDict

from questbot_testing.fakegithub import FakeGitHub
from tests.questbot_testing.fakegithub.conftest import REPO

BASE = f"/repos/{REPO}"


@pytest.fixture
async def get(fake: FakeGitHub) -> AsyncIterator[object]:
    token = fake.installation_token(fake.repo(REPO).installation_id)
    async with aiohttp.ClientSession() as session:

        async def send(path: str, *, etag: str | None = None, method: str = "GET",
                       json: object = None) -> tuple[int, CIMultiDict[str], bytes]:
            headers = {"Authorization": f"token {token}"}
            if etag is not None:
                headers["If-None-Match"] = etag
            async with session.request(method, fake.url + path, headers=headers,
                                       json=json) as reply:
                return reply.status, CIMultiDict(reply.headers), await reply.read()

        yield send


async def test_a_matching_etag_is_304_without_a_body_or_a_rate_limit_point(
        fake: FakeGitHub, get: object) -> None:
    send = get  # type: ignore[assignment]
    status, headers, body = await send(f"{BASE}/pulls?state=all")
    etag, used = headers["ETag"], int(headers["x-ratelimit-used"])
    assert status == 200 and body and etag.startswith('W/"')
    status, headers, body = await send(f"{BASE}/pulls?state=all", etag=etag)
    assert (status, body) == (304, b"")
    assert int(headers["x-ratelimit-used"]) == used  # not counted
    assert headers["ETag"] == etag
    for form in (etag.removeprefix("W/"), f'"other", {etag}', "*"):  # weak comparison, lists
        assert (await send(f"{BASE}/pulls?state=all", etag=form))[0] == 304, form
    fake.assert_clean()


async def test_a_changed_resource_or_another_one_is_a_200_with_a_new_etag(
        fake: FakeGitHub, get: object) -> None:
    send = get  # type: ignore[assignment]
    issue = await fake.open_issue(REPO, "bug")
    path = f"{BASE}/issues/{issue.number}/comments"
    status, headers, _ = await send(path)
    first, used = headers["ETag"], int(headers["x-ratelimit-used"])
    await fake.comment(REPO, issue.number, "a new comment", user="alice")
    status, headers, body = await send(path, etag=first)
    assert status == 200 and b"a new comment" in body and headers["ETag"] != first
    assert int(headers["x-ratelimit-used"]) == used + 1
    assert (await send(f"{BASE}/git/ref/heads/main", etag=first))[0] == 200
    fake.assert_clean()


async def test_only_a_successful_get_is_conditional(fake: FakeGitHub, get: object) -> None:
    send = get  # type: ignore[assignment]
    _, headers, _ = await send(f"{BASE}/issues")
    status, _, _ = await send(f"{BASE}/issues", etag=headers["ETag"], method="POST",
                              json={"title": "made"})
    assert status == 201 and [i.title for i in fake.repo(REPO).issues.values()] == ["made"]
    status, headers, _ = await send(f"{BASE}/contents/missing.txt")
    assert status == 404 and "ETag" not in headers
    fake.assert_clean()
