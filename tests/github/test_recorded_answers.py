"""questbot's client makes the right thing of real GitHub answers (``@octokit/fixtures``):
each success decodes to the recorded body with its rate limit and next page, each refusal
becomes the exception — and, through ``refusals``, the ``PermanentError`` — questbot acts on;
and served back by a local stand-in for api.github.com, the Forge follows ``Link`` pages and
redirects the way it must on GitHub.

octokit/fixtures normalized ``x-ratelimit-reset`` to ``1507651200000``, a millisecond count no
date parser takes; GitHub sends epoch seconds (BEHAVIOUR §15), so the header is fed back in
seconds. Nothing else of a recording is changed.
"""

from __future__ import annotations

import json
from collections import defaultdict, deque
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import gidgethub
import pytest
from aiohttp import web
from gidgethub import sansio

from bot.github.forge import Forge, is_permanent, refusals
from bot.github.ratelimit import PacedGitHubAPI, RateLimits
from bot.journal import PermanentError
from tests.questbot_testing.fakegithub.test_replay import SCENES, exchanges

ORG = "octokit-fixture-org"


def headers_of(recorded: dict[str, Any], base: str = "https://api.github.com") -> dict[str, str]:
    out = {k.lower(): str(v) for k, v in recorded["headers"].items()}
    if "x-ratelimit-reset" in out:
        out["x-ratelimit-reset"] = out["x-ratelimit-reset"][:-3]  # milliseconds → seconds
    for name in ("link", "location"):
        if name in out:
            out[name] = out[name].replace("https://api.github.com", base)
    out.pop("content-length", None)
    return out


def body_of(recorded: dict[str, Any]) -> bytes:
    response = recorded["response"]
    if isinstance(response, str):
        return response.encode()
    return json.dumps(response).encode()


@pytest.mark.parametrize("name", sorted(SCENES))
def test_every_recorded_answer_becomes_data_or_the_right_exception(name: str) -> None:
    for recorded in exchanges(name):
        status, headers = recorded["status"], headers_of(recorded)
        where = f"{name}: {recorded['method']} {recorded['path']} → {status}"
        if status in (200, 201, 202, 204):
            data, limit, next_url = sansio.decipher_response(status, headers, body_of(recorded))
            assert data == (None if recorded["response"] == "" else recorded["response"]), where
            assert (next_url is not None) == ('rel="next"' in headers.get("link", "")), where
            if "x-ratelimit-remaining" in headers:
                assert limit is not None and limit.remaining == int(
                    headers["x-ratelimit-remaining"]), where
        elif 300 <= status < 400:
            # aiohttp follows a redirect before gidgethub sees it (test below); unfollowed,
            # it is no data
            with pytest.raises(gidgethub.RedirectionException):
                sansio.decipher_response(status, headers, body_of(recorded))
        elif status == 205:
            # gidgethub has no data for 205 Reset Content (an App has no notifications)
            with pytest.raises(gidgethub.HTTPException):
                sansio.decipher_response(status, headers, body_of(recorded))
        else:
            with pytest.raises(gidgethub.BadRequest) as caught:
                sansio.decipher_response(status, headers, body_of(recorded))
            assert int(caught.value.status_code) == status, where
            assert is_permanent(caught.value), where  # 404 and 422 do not change on retry
            if status == 422:
                assert isinstance(caught.value, gidgethub.InvalidField), where
                fields = [e["field"] for e in recorded["response"]["errors"]]
                assert str(caught.value) == f"Validation Failed for {fields[0]!r}", where


# -- served back: the Forge on real answers ---------------------------------------------------


def page_key(method: str, path: str, page: str | None) -> tuple[str, str, str]:
    return method.upper(), path, page or "1"


class RecordedGitHub:
    """Answers each request with the next recorded answer for its method, path and page
    (the rest of the query ignored), 404 for anything the recording does not have; logs what
    was asked."""

    def __init__(self, name: str) -> None:
        self.answers: dict[tuple[str, str, str], deque[dict[str, Any]]] = defaultdict(deque)
        for recorded in exchanges(name):
            path, _, query = recorded["path"].partition("?")
            page = dict(p.split("=", 1) for p in query.split("&") if "=" in p).get("page")
            self.answers[page_key(recorded["method"], path, page)].append(recorded)
        self.asked: list[str] = []
        self.url = ""

    async def handle(self, request: web.Request) -> web.Response:
        self.asked.append(f"{request.method} {request.path_qs}")
        queue = self.answers.get(page_key(request.method, request.path,
                                          request.query.get("page")))
        if not queue:
            return web.json_response({"message": "Not Found"}, status=404)
        recorded = queue.popleft() if len(queue) > 1 else queue[0]
        headers = headers_of(recorded, self.url)
        content_type = headers.pop("content-type", "application/json; charset=utf-8")
        return web.Response(status=recorded["status"], body=body_of(recorded), headers={
            **headers, "Content-Type": content_type})


@pytest.fixture
async def serve(aiohttp_server: Any) -> AsyncIterator[Any]:
    async with aiohttp.ClientSession() as session:

        async def start(name: str) -> tuple[RecordedGitHub, PacedGitHubAPI]:
            recorded = RecordedGitHub(name)
            app = web.Application()
            app.router.add_route("*", "/{tail:.*}", recorded.handle)
            server = await aiohttp_server(app)
            recorded.url = str(server.make_url("")).rstrip("/")
            gh = PacedGitHubAPI(session, "questbot-tests", limits=RateLimits(), installation_id=1,
                                oauth_token="t", base_url=recorded.url)
            return recorded, gh

        yield start


async def test_a_listing_follows_every_link_page(serve: Any) -> None:
    recorded, gh = await serve("paginate-issues")
    forge = Forge(gh, f"{ORG}/paginate-issues")
    assert await forge.find_issue("octokit-fixture-user-a", "<!-- questbot:inbox -->") is None
    assert [a.split("?")[0] for a in recorded.asked] == [
        f"GET /repos/{ORG}/paginate-issues/issues"] + ["GET /repositories/1000/issues"] * 4
    assert [a.rsplit("page=", 1)[-1] for a in recorded.asked[1:]] == ["2", "3", "4", "5"]
    numbers = [i["number"] async for i in gh.getiter(f"/repos/{ORG}/paginate-issues/issues")]
    assert numbers == list(range(13, 0, -1))


async def test_a_validation_failure_is_a_permanent_refusal_saying_what_github_said(
        serve: Any) -> None:
    _recorded, gh = await serve("errors")
    with pytest.raises(PermanentError) as caught, refusals("create the label foo",
                                                           "pick a colour of six hex digits"):
        await gh.post(f"/repos/{ORG}/errors/labels", data={"name": "foo", "color": "invalid"})
    assert "HTTP 422: Validation Failed for 'color'" in str(caught.value)
    assert str(caught.value).endswith("pick a colour of six hex digits")


async def test_a_branch_is_created_after_githubs_404_for_it(serve: Any) -> None:
    recorded, gh = await serve("git-refs")
    forge = Forge(gh, f"{ORG}/git-refs")
    assert await forge.git.ensure_branch("test", "0" * 39 + "2") == "0" * 39 + "2"
    assert recorded.asked == [f"GET /repos/{ORG}/git-refs/git/ref/heads/test",
                              f"POST /repos/{ORG}/git-refs/git/refs"]


async def test_a_404_with_githubs_message_is_kept(serve: Any) -> None:
    _recorded, gh = await serve("branch-protection")
    with pytest.raises(gidgethub.BadRequest) as caught:
        await gh.getitem(f"/repos/{ORG}/branch-protection/branches/main/protection")
    assert (int(caught.value.status_code), str(caught.value)) == (404, "Branch not protected")
    assert is_permanent(caught.value)


async def test_redirects_are_followed_with_method_and_body(serve: Any) -> None:
    recorded, gh = await serve("rename-repository")
    await gh.patch(f"/repos/{ORG}/rename-repository", data={"name": "rename-repository-newname"})
    moved = await gh.getitem(f"/repos/{ORG}/rename-repository")  # 301 → /repositories/1000
    assert moved["name"] == "rename-repository-newname"
    again = await gh.patch(f"/repos/{ORG}/rename-repository",  # 307: PATCH again, same body
                           data={"name": "rename-repository-newname",
                                 "description": "test description"})
    assert again["description"] == "test description"
    assert recorded.asked[-2:] == [f"PATCH /repos/{ORG}/rename-repository",
                                   "PATCH /repositories/1000"]


async def test_a_raw_file_is_text(serve: Any) -> None:
    _recorded, gh = await serve("get-content")
    text = await gh.getitem(f"/repos/{ORG}/hello-world/contents/README.md",
                            accept="application/vnd.github.v3.raw")
    assert text == "# hello-world"
