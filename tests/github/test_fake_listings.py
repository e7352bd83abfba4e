"""The fake's listings questbot finds its own objects by — pull requests by head branch, issues
by creator, check runs by name and filter — answer as GitHub does: filtered, ordered and paged
with GitHub's ``Link`` header, and checked against the full REST description."""

from __future__ import annotations

from collections.abc import AsyncIterator

import aiohttp
import pytest
from gidgethub.aiohttp import GitHubAPI

from questbot_testing.fakegithub import FakeGitHub
from questbot_testing.fakegithub.state import CheckRun, iso

REPO = "octo/lists"


@pytest.fixture
async def fake() -> AsyncIterator[FakeGitHub]:
    async with FakeGitHub() as server:
        server.create_repository(REPO, {"README.md": "hello\n"})
        yield server


@pytest.fixture
async def gh(fake: FakeGitHub) -> AsyncIterator[GitHubAPI]:
    async with aiohttp.ClientSession() as session:
        token = fake.installation_token(fake.repo(REPO).installation_id)
        yield GitHubAPI(session, "questbot-tests", oauth_token=token, base_url=fake.url)


async def test_pulls_are_listed_by_owner_and_branch_and_a_bare_branch_filters_nothing(
        fake: FakeGitHub, gh: GitHubAPI) -> None:
    for branch in ("quest/a", "quest/b"):
        await fake.push(REPO, branch, {"f": branch}, user="questbot[bot]")
    first = await fake.open_pull_request(REPO, "quest/a", user="questbot[bot]")
    second = await fake.open_pull_request(REPO, "quest/b", user="questbot[bot]")
    fake.repo(REPO).issues[first.number].state = "closed"

    async def numbers(query: str) -> list[int]:
        return [p["number"] for p in await gh.getitem(f"/repos/{REPO}/pulls?{query}")]

    assert await numbers("head=octo:quest/a") == []  # open only, by default
    assert await numbers("head=octo:quest/a&state=all") == [first.number]
    assert await numbers("head=someone:quest/a&state=all") == []
    assert await numbers("head=quest/a&state=all") == [second.number, first.number]
    assert await numbers("state=closed") == [first.number]
    assert await numbers("state=all&direction=asc") == [first.number, second.number]
    (listed,) = await gh.getitem(f"/repos/{REPO}/pulls?head=octo:quest/b")
    assert listed["head"]["ref"] == "quest/b" and listed["user"]["login"] == "questbot[bot]"
    fake.assert_clean()


async def test_issues_are_listed_by_creator_state_and_order_across_pages(
        fake: FakeGitHub, gh: GitHubAPI) -> None:
    repo = fake.repo(REPO)
    mine = [await fake.open_issue(REPO, f"bot {n}", user="questbot[bot]") for n in range(5)]
    await fake.open_issue(REPO, "a person's", user="alice")
    mine[1].state = "closed"
    listing = f"/repos/{REPO}/issues{{?creator,state,direction,per_page}}"
    query = {"creator": "questbot[bot]", "state": "all", "direction": "asc", "per_page": 2}
    assert [i["number"] async for i in gh.getiter(listing, query)] == [i.number for i in mine]
    newest_open = await gh.getitem(f"/repos/{REPO}/issues?creator=questbot[bot]")
    assert [i["number"] for i in newest_open] == [mine[n].number for n in (4, 3, 2, 0)]
    async with aiohttp.ClientSession() as session, session.get(
            f"{fake.url}/repos/{REPO}/issues?per_page=2&state=all",
            headers={"Authorization": f"token {gh.oauth_token}"}) as response:
        by_id = f"{fake.url}/repositories/{repo.id}/issues?per_page=2&state=all"
        assert response.headers["Link"] == (
            f'<{by_id}&page=2>; rel="next", <{by_id}&page=3>; rel="last"')
    fake.assert_clean()


async def test_a_pull_request_is_listed_among_issues_as_github_lists_it(
        fake: FakeGitHub, gh: GitHubAPI) -> None:
    await fake.push(REPO, "topic", {"f": "x"}, user="alice")
    pr = await fake.open_pull_request(REPO, "topic", user="alice")
    (listed,) = await gh.getitem(f"/repos/{REPO}/issues")
    assert listed["number"] == pr.number and "pull_request" in listed
    fake.assert_clean()


async def test_check_runs_are_filtered_by_name_and_latest_and_paged(
        fake: FakeGitHub, gh: GitHubAPI) -> None:
    repo = fake.repo(REPO)
    sha = repo.refs["refs/heads/main"]
    for n in range(5):
        for name in ("questbot", "tests"):
            run = CheckRun(fake.world.new_id(), sha, name, "completed", "success", f"e{n}",
                           iso())
            repo.check_runs[run.id] = run
    listing = f"/repos/{REPO}/commits/{sha}/check-runs"
    latest = await gh.getitem(listing)
    assert latest["total_count"] == 2
    assert [(r["name"], r["external_id"]) for r in latest["check_runs"]] == [
        ("tests", "e4"), ("questbot", "e4")]
    every = [r["external_id"] async for r in gh.getiter(
        listing + "{?check_name,filter,per_page}",
        {"check_name": "questbot", "filter": "all", "per_page": 2}, iterable_key="check_runs")]
    assert every == ["e4", "e3", "e2", "e1", "e0"]
    page = await gh.getitem(listing + "?filter=all&per_page=3&page=2")
    assert page["total_count"] == 10 and len(page["check_runs"]) == 3
    assert len(fake.calls("checks/list-for-ref")) == 5  # 1 + 3 pages + 1
    fake.assert_clean()


async def test_a_filter_the_fake_does_not_model_is_a_violation(
        fake: FakeGitHub, gh: GitHubAPI) -> None:
    await gh.getitem(f"/repos/{REPO}/issues?assignee=alice")
    assert fake.violations == [
        "issues/list-for-repo: the fake does not implement 'assignee'"]
