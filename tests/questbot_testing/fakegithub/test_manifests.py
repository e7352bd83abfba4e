"""The fake's App manifest flow follows GitHub's (BEHAVIOUR.md §13): the manifest is checked,
the person confirms, the browser goes back with a code and the state, and a code is exchanged
once, within an hour, for the App's credentials."""

from __future__ import annotations

import html
import json
import re
from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import parse_qs, urlsplit

import aiohttp
import pytest

from questbot_testing.fakegithub import FakeGitHub
from questbot_testing.fakegithub.manifests import CODE_LIFETIME_S, manifest_problems

MANIFEST = {"name": "Quest Bot", "url": "https://example.com/questbot",
            "hook_attributes": {"url": "https://hooks.example.com/webhook"},
            "redirect_url": "http://127.0.0.1:3999/callback",
            "default_permissions": {"issues": "write", "metadata": "read"},
            "default_events": ["issues"]}


@pytest.fixture
async def fake() -> AsyncIterator[FakeGitHub]:
    async with FakeGitHub() as server:
        yield server
        server.assert_clean()


async def code_for(fake: FakeGitHub, manifest: dict[str, Any], *, org: str | None = None,
                   name: str = "") -> tuple[str, str, str]:
    """Post the manifest as the browser would, confirm; the code, state and owner."""
    where = f"/organizations/{org}" if org else ""
    async with aiohttp.ClientSession() as session:
        async with session.post(f"{fake.url}{where}/settings/apps/new?state=s-1",
                                data={"manifest": json.dumps(manifest)}) as page:
            assert page.status == 200, await page.text()
            text = await page.text()
        token = html.unescape(re.search(r'name="pending" value="([^"]+)"', text)[1])
        owner = re.search(r"Create GitHub App for ([^<]+)</h1>", text)[1]
        async with session.post(f"{fake.url}/settings/apps/new/confirm",
                                data={"pending": token, "name": name},
                                allow_redirects=False) as confirmed:
            assert confirmed.status == 302
            location = confirmed.headers["Location"]
    assert location.startswith(manifest["redirect_url"] + "?")
    query = parse_qs(urlsplit(location).query)
    return query["code"][0], query["state"][0], owner


async def convert(fake: FakeGitHub, code: str) -> tuple[int, Any]:
    async with aiohttp.ClientSession() as session, session.post(
            f"{fake.url}/app-manifests/{code}/conversions",
            headers={"Accept": "application/vnd.github+json"}) as response:
        return response.status, await response.json()


async def test_a_code_is_exchanged_once_for_the_apps_credentials(fake: FakeGitHub) -> None:
    code, state, owner = await code_for(fake, MANIFEST)
    assert (state, owner) == ("s-1", "octocat")
    status, app = await convert(fake, code)
    assert status == 201
    assert (app["id"], app["slug"], app["name"]) == (fake.world.app_id, "quest-bot", "Quest Bot")
    assert app["pem"] == fake.keys.private_pem
    assert app["webhook_secret"] == fake.webhook_secret
    assert app["permissions"] == MANIFEST["default_permissions"]
    assert app["events"] == ["issues"]
    assert app["owner"]["login"] == "octocat"
    assert fake.webhook_url == "https://hooks.example.com/webhook"  # GitHub's hook now
    assert fake.manifests.registered == [MANIFEST]
    again, body = await convert(fake, code)
    assert (again, body["message"]) == (404, "Not Found")


async def test_a_code_over_an_hour_old_is_refused(fake: FakeGitHub) -> None:
    code, _state, _owner = await code_for(fake, MANIFEST)
    fake.manifests.age_codes(CODE_LIFETIME_S + 1)
    assert (await convert(fake, code))[0] == 404
    fresh, _state, _owner = await code_for(fake, MANIFEST)
    fake.manifests.age_codes(CODE_LIFETIME_S - 60)
    assert (await convert(fake, fresh))[0] == 201


async def test_an_unknown_code_is_not_found(fake: FakeGitHub) -> None:
    assert (await convert(fake, "0123456789abcdef"))[0] == 404


async def test_an_organization_owns_the_app_and_the_person_names_it(fake: FakeGitHub) -> None:
    code, _state, owner = await code_for(fake, MANIFEST, org="octo-org", name="Our Questbot")
    assert owner == "octo-org"
    _status, app = await convert(fake, code)
    assert (app["owner"]["login"], app["slug"]) == ("octo-org", "our-questbot")


@pytest.mark.parametrize(
    ("manifest", "problem"),
    [
        ({"name": "x"}, "url is required"),
        ({"url": "https://e.com", "hook_attributes": {"active": True}}, "hook_attributes.url"),
        ({"url": "https://e.com", "public": "yes"}, "public must be true or false"),
        ({"url": "https://e.com", "default_permissions": {"issues": "all"}}, "read, write"),
        ({"url": "https://e.com", "default_events": "issues"}, "default_events"),
        ([], "not a JSON object"),
    ],
)
def test_what_github_refuses_in_a_manifest(manifest: Any, problem: str) -> None:
    assert any(problem in p for p in manifest_problems(manifest))


async def test_an_invalid_manifest_gets_a_page_saying_why(fake: FakeGitHub) -> None:
    async with aiohttp.ClientSession() as session, session.post(
            f"{fake.url}/settings/apps/new?state=s",
            data={"manifest": json.dumps({"name": "no url"})}) as page:
        assert page.status == 422
        assert "url is required" in await page.text()
    assert fake.manifests.pending == {}
