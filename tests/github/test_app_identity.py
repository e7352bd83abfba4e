"""Who the App is, from ``GET /app``, read once; and an installation token GitHub stops taking
is fetched again once and the request sent again — against the fake GitHub (BEHAVIOUR.md §13)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import aiohttp
import gidgethub
import pytest
import redis.asyncio

from bot.adapters import AppIdentity
from bot.github.auth import InstallationTokenError
from bot.github.client import GitHubClients
from bot.github.identity import IdentityRefused, IdentityUnavailable, wait_for_identity
from questbot_testing.fakegithub import FakeGitHub, generate_key_pair
from questbot_testing.fakegithub.faults import Faults

REPO = "octo/demo"


@pytest.fixture
async def fake() -> AsyncIterator[FakeGitHub]:
    async with FakeGitHub(app_slug="fixbot", app_id=777) as server:
        server.create_repository(REPO, {"README.md": "hello\n"})
        yield server
        server.assert_clean()


@pytest.fixture
async def clients(fake: FakeGitHub,
                  redis_async: redis.asyncio.Redis) -> AsyncIterator[GitHubClients]:
    async with aiohttp.ClientSession() as session:
        made = GitHubClients(session, redis_async, app_id=fake.world.app_id,
                             private_key=fake.keys.private_pem, base_url=fake.url)
        await made.remember_installation(REPO, fake.repo(REPO).installation_id)
        yield made


def statuses(fake: FakeGitHub, operation: str) -> list[int]:
    return [e.status for e in fake.calls(operation)]


# -- identity ------------------------------------------------------------------------------------


async def test_the_app_is_whatever_get_app_says_read_once(fake: FakeGitHub,
                                                          clients: GitHubClients) -> None:
    first, again = await asyncio.gather(clients.identity(), clients.identity())
    assert first == again == AppIdentity(id=777, slug="fixbot")
    assert first.bot_login == "fixbot[bot]"
    assert await clients.identity() is first
    (asked,) = fake.calls("apps/get-authenticated")
    assert asked.status == 200 and asked.headers["authorization"].startswith("bearer ")


async def test_a_key_github_refuses_stops_the_worker_at_once(
        fake: FakeGitHub, redis_async: redis.asyncio.Redis) -> None:
    async with aiohttp.ClientSession() as session:
        wrong = GitHubClients(session, redis_async, app_id=fake.world.app_id,
                              private_key=generate_key_pair().private_pem, base_url=fake.url)
        slept: list[float] = []

        async def sleep(seconds: float) -> None:
            slept.append(seconds)

        with pytest.raises(IdentityRefused, match="GITHUB_APP_ID and the private key"):
            await wait_for_identity(wrong.identity, sleeper=sleep)
    assert slept == []  # no retry fixes a wrong key


async def test_github_down_at_start_is_waited_out(fake: FakeGitHub,
                                                  clients: GitHubClients) -> None:
    fake.faults = Faults(rate=1.0, kinds=("5xx",), seed=1)
    slept: list[float] = []

    async def sleep(seconds: float) -> None:
        slept.append(seconds)
        if len(slept) == 3:
            fake.faults = Faults()  # GitHub is back

    app = await wait_for_identity(clients.identity, sleeper=sleep)
    assert app.slug == "fixbot"
    assert slept == [0.5, 1.0, 2.0]
    assert statuses(fake, "apps/get-authenticated")[-1] == 200


async def test_with_patience_the_wait_ends_and_says_why(fake: FakeGitHub,
                                                        clients: GitHubClients) -> None:
    """A command's wait (``patience``) is bounded, back-off included; the worker's is not."""
    fake.faults = Faults(rate=1.0, kinds=("5xx",), seed=1)
    now = [0.0]
    slept: list[float] = []

    async def sleep(seconds: float) -> None:
        slept.append(seconds)
        now[0] += seconds

    with pytest.raises(IdentityUnavailable, match=r"within 5 s; the last try: GET /app failed"):
        await wait_for_identity(clients.identity, sleeper=sleep, patience=5.0,
                                clock=lambda: now[0])
    assert slept == [0.5, 1.0, 2.0]  # at 3.5 s, the next 4 s pause would end past the 5 s
    assert len([e for e in fake.requests if e.path == "/app"]) == 4


async def test_with_patience_a_github_that_never_answers_is_not_waited_on(
        clients: GitHubClients) -> None:
    """A GET /app that hangs (a proxy holding the connection) ends at the patience too."""
    async def hangs() -> AppIdentity:
        await asyncio.sleep(3600)
        raise AssertionError("unreachable")

    started = asyncio.get_running_loop().time()
    with pytest.raises(IdentityUnavailable, match=r"within 0.2 s \(GET /app"):
        await wait_for_identity(hangs, patience=0.2)
    assert asyncio.get_running_loop().time() - started < 5


# -- a token GitHub stops taking -----------------------------------------------------------------


@pytest.mark.parametrize("how", ["revoked", "expired"])
async def test_a_token_answered_401_is_fetched_again_and_the_request_sent_again(
        fake: FakeGitHub, clients: GitHubClients, how: str) -> None:
    gh = await clients.for_repo(REPO)
    assert (await gh.getitem(f"/repos/{REPO}/git/ref/heads/main"))["object"]["sha"]
    if how == "revoked":
        fake.revoke_tokens()
    else:
        fake.expire_tokens()  # GitHub's clock: ours still thinks it has 55 minutes
    made = await gh.post(f"/repos/{REPO}/issues", data={"title": "once"})
    assert [i.title for i in fake.repo(REPO).issues.values()] == ["once"]
    assert made["number"] == 1
    assert statuses(fake, "issues/create") == [401, 201]
    assert statuses(fake, "apps/create-installation-access-token") == [201, 201]
    later = await clients.for_repo(REPO)  # the cache holds the new token
    await later.getitem(f"/repos/{REPO}/git/ref/heads/main")
    assert len(fake.calls("apps/create-installation-access-token")) == 2


async def test_many_requests_refused_at_once_fetch_one_token(fake: FakeGitHub,
                                                             clients: GitHubClients) -> None:
    clients_of = [await clients.for_repo(REPO) for _ in range(5)]
    fake.revoke_tokens()
    await asyncio.gather(*(gh.getitem(f"/repos/{REPO}/git/ref/heads/main")
                           for gh in clients_of))
    assert statuses(fake, "apps/create-installation-access-token") == [201, 201]
    assert statuses(fake, "git/get-ref").count(401) == 5


async def test_a_token_refused_again_is_not_retried_for_ever(fake: FakeGitHub,
                                                             clients: GitHubClients) -> None:
    gh = await clients.for_repo(REPO)
    fake.revoke_tokens()
    fake.world.installations.clear()  # the App was uninstalled: no new token either
    with pytest.raises(InstallationTokenError) as refused:
        await gh.getitem(f"/repos/{REPO}/git/ref/heads/main")
    assert refused.value.status == 404
    assert statuses(fake, "git/get-ref") == [401]


async def test_a_401_that_is_not_about_the_token_is_returned_as_it_is(
        fake: FakeGitHub, clients: GitHubClients) -> None:
    """A JWT request answered 401 is the App's key or clock: no installation token to renew."""
    with pytest.raises(gidgethub.BadRequest) as refused:
        await clients._app.getitem("/app", jwt="not-a-jwt")
    assert refused.value.status_code == 401
    assert fake.calls("apps/create-installation-access-token") == []
