"""The fake's webhook delivery log follows GitHub's (BEHAVIOUR.md §14): every attempt is an
entry, listed newest first with cursor pagination, filterable by outcome, and a redelivery is
a new entry with the same GUID, sent again later."""

from __future__ import annotations

import re
import time
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest
from aiohttp import web

from questbot_testing.fakegithub import FakeGitHub, app_jwt
from questbot_testing.fakegithub.hooklog import REDELIVERY_WINDOW_S
from questbot_testing.stack import free_port

REPO = "octo-org/hooks"


@pytest.fixture
async def receiver() -> AsyncIterator[tuple[str, list[str]]]:
    """A webhook receiver that answers 202, and the GUIDs it got."""
    got: list[str] = []

    async def hook(request: web.Request) -> web.Response:
        await request.read()
        got.append(request.headers["X-GitHub-Delivery"])
        return web.Response(status=202, text="accepted")

    app = web.Application()
    app.router.add_post("/webhook", hook)
    runner = web.AppRunner(app)
    await runner.setup()
    port = free_port()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    yield f"http://127.0.0.1:{port}/webhook", got
    await runner.cleanup()


@pytest.fixture
async def fake(receiver: tuple[str, list[str]]) -> AsyncIterator[FakeGitHub]:
    async with FakeGitHub(webhook_url=receiver[0]) as server:
        server.create_repository(REPO, {"README.md": "hi\n"})
        yield server
        server.assert_clean()


async def app_call(fake: FakeGitHub, method: str, path: str, *,
                   token: str | None = None) -> tuple[int, Any, dict[str, str]]:
    auth = token or f"Bearer {app_jwt(fake.world.app_id, fake.keys.private_pem)}"
    url = path if path.startswith("http") else fake.url + path
    async with aiohttp.ClientSession() as session, session.request(
            method, url, headers={"Authorization": auth,
                                  "Accept": "application/vnd.github+json"}) as response:
        body = await response.json() if response.content_length != 0 else None
        return response.status, body, dict(response.headers)


async def test_every_attempt_is_listed_newest_first(fake: FakeGitHub) -> None:
    for n in range(3):
        await fake.open_issue(REPO, f"issue {n}")
    fake.hooks.drop(1)
    await fake.open_issue(REPO, "lost")
    status, items, _headers = await app_call(fake, "GET", "/app/hook/deliveries")
    assert status == 200
    assert [i["status"] for i in items] == ["failed to connect", "OK", "OK", "OK"]
    assert [i["status_code"] for i in items] == [502, 202, 202, 202]
    assert items[0]["id"] > items[1]["id"] > items[2]["id"]
    assert {i["event"] for i in items} == {"issues"}
    assert items[0]["repository_id"] == fake.repo(REPO).id
    assert items[0]["installation_id"] == fake.repo(REPO).installation_id
    assert items[0]["redelivery"] is False
    _s, failed, _h = await app_call(fake, "GET", "/app/hook/deliveries?status=failure")
    assert [i["id"] for i in failed] == [items[0]["id"]]
    _s, good, _h = await app_call(fake, "GET", "/app/hook/deliveries?status=success")
    assert len(good) == 3


async def test_pages_follow_the_cursor_in_the_link_header(fake: FakeGitHub) -> None:
    for n in range(5):
        await fake.open_issue(REPO, f"issue {n}")
    seen: list[int] = []
    url = "/app/hook/deliveries?per_page=2"
    while url:
        status, items, headers = await app_call(fake, "GET", url)
        assert status == 200
        seen += [i["id"] for i in items]
        found = re.search(r'<([^>]+)>; rel="next"', headers.get("Link", ""))
        url = found[1] if found else ""
        assert not url or "cursor=v1_" in url
    assert seen == sorted(seen, reverse=True) and len(seen) == 5
    assert (await app_call(fake, "GET", "/app/hook/deliveries?cursor=nonsense"))[0] == 400


async def test_a_redelivery_is_a_new_entry_with_the_same_guid(
    fake: FakeGitHub, receiver: tuple[str, list[str]]
) -> None:
    fake.hooks.drop(1)
    await fake.open_issue(REPO, "lost")
    (lost,) = fake.hooks.entries
    assert receiver[1] == []
    status, body, _h = await app_call(fake, "POST", f"/app/hook/deliveries/{lost.id}/attempts")
    assert (status, body) == (202, {})
    await fake.hooks.settle()
    assert receiver[1] == [lost.guid]
    _s, items, _h = await app_call(fake, "GET", "/app/hook/deliveries")
    assert [(i["guid"], i["redelivery"], i["status"]) for i in items] == [
        (lost.guid, True, "OK"), (lost.guid, False, "failed to connect")]
    _s, detail, _h = await app_call(fake, "GET", f"/app/hook/deliveries/{items[0]['id']}")
    assert detail["request"]["headers"]["X-GitHub-Delivery"] == lost.guid
    assert detail["request"]["payload"]["issue"]["title"] == "lost"
    assert detail["response"]["payload"] == "accepted"


async def test_what_cannot_be_redelivered(fake: FakeGitHub) -> None:
    await fake.open_issue(REPO, "old")
    (old,) = fake.hooks.entries
    assert (await app_call(fake, "POST", "/app/hook/deliveries/1/attempts"))[0] == 404
    old.started = time.time() - REDELIVERY_WINDOW_S - 60
    status, body, _h = await app_call(fake, "POST", f"/app/hook/deliveries/{old.id}/attempts")
    assert (status, body["message"]) == (422, "Validation Failed")


async def test_only_the_app_reads_its_log(fake: FakeGitHub) -> None:
    token = fake.installation_token(fake.repo(REPO).installation_id)
    status, body, _h = await app_call(fake, "GET", "/app/hook/deliveries",
                                      token=f"token {token}")
    assert (status, body["message"]) == (401, "A JSON web token could not be decoded")


async def test_a_receiver_that_is_down_fails_to_connect(fake: FakeGitHub) -> None:
    fake.webhook_url = f"http://127.0.0.1:{free_port()}/webhook"
    result = await fake.open_issue(REPO, "nobody listens")
    assert result.number == 1
    (entry,) = fake.hooks.entries
    assert (entry.status, entry.status_code) == ("failed to connect", 502)
