"""Repository settings through the contents API, and rate limits honoured in the client."""

from __future__ import annotations

import asyncio

import aiohttp
import gidgethub
import pytest

from bot.github.ratelimit import PacedGitHubAPI, RateLimits, carrying
from bot.github.repo_settings import SETTINGS_CHECK, RepoSettings
from bot.journal.pacing import Pace
from questbot_testing.fakegithub import FakeGitHub
from questbot_testing.fakegithub.secondary import ContentLimits
from tests.github.conftest import REPO, World


async def test_no_file_means_defaults_and_reads_are_cached(world: World) -> None:
    source = RepoSettings(world.clients, world.redis)
    settings = await source.settings(REPO)
    assert settings.reviewers == () and settings.max_attempts == 3
    await source.settings(REPO)
    assert len(world.fake.calls("repos/get-content")) == 1


async def test_good_file_applies(world: World) -> None:
    await world.fake.push(REPO, "main", {".github/questbot.yml": "reviewers: [alice]\n"})
    settings = await RepoSettings(world.clients, world.redis).settings(REPO)
    assert settings.reviewers == ("alice",)


async def test_malformed_file_is_reported_once_and_last_good_stays(world: World) -> None:
    await world.fake.push(REPO, "main", {".github/questbot.yml": "max_attempts: 5\n"})
    assert (await RepoSettings(world.clients, world.redis).settings(REPO)).max_attempts == 5
    await world.fake.push(REPO, "main", {".github/questbot.yml": "max_attempt: 4\n"})
    source = RepoSettings(world.clients, world.redis)  # a restart: only Redis remains
    assert (await source.settings(REPO)).max_attempts == 5
    source.forget(REPO)
    await source.settings(REPO)
    runs = [r for r in world.fake.repo(REPO).check_runs.values() if r.name == SETTINGS_CHECK]
    assert len(runs) == 1 and runs[0].conclusion == "failure"
    assert "max_attempts" in str(runs[0].output["summary"])  # "did you mean"
    await world.fake.push(REPO, "main", {".github/questbot.yml": "max_attempts: 2\n"})
    source.forget()
    assert (await source.settings(REPO)).max_attempts == 2
    runs = [r for r in world.fake.repo(REPO).check_runs.values() if r.name == SETTINGS_CHECK]
    assert [r.conclusion for r in runs] == ["failure", "success"]


class Sleeps:
    def __init__(self) -> None:
        self.calls: list[float] = []
        self.now = 0.0

    async def __call__(self, seconds: float) -> None:
        self.calls.append(seconds)
        self.now += seconds


async def paced(fake: FakeGitHub, session: aiohttp.ClientSession,
                limits: RateLimits) -> PacedGitHubAPI:
    installation = fake.repo(REPO).installation_id
    return PacedGitHubAPI(session, "questbot-tests", limits=limits,
                          installation_id=installation,
                          oauth_token=fake.installation_token(installation), base_url=fake.url)


@pytest.mark.parametrize("status", [403, 429])
async def test_rate_limited_requests_wait_and_retry(fake: FakeGitHub, status: int) -> None:
    sleeps = Sleeps()
    limits = RateLimits(sleeper=sleeps)
    async with aiohttp.ClientSession() as session:
        gh = await paced(fake, session, limits)
        fake.throttle(2, status=status, retry_after=7)
        data = await gh.getitem(f"/repos/{REPO}/git/ref/heads/main")
    assert data["ref"] == "refs/heads/main"
    assert sleeps.calls == [7.0, 7.0]
    assert limits.remaining is not None and limits.remaining > 0


async def test_rate_limit_gives_up_when_it_lasts(fake: FakeGitHub) -> None:
    sleeps = Sleeps()
    limits = RateLimits(sleeper=sleeps, max_retries=2)
    async with aiohttp.ClientSession() as session:
        gh = await paced(fake, session, limits)
        fake.throttle(5, status=403)
        with pytest.raises(gidgethub.RateLimitExceeded):
            await gh.getitem(f"/repos/{REPO}/git/ref/heads/main")
        fake.throttle(0)
    assert len(sleeps.calls) == 2 and limits.remaining == 0


async def test_writes_are_paced_per_installation(fake: FakeGitHub) -> None:
    sleeps = Sleeps()
    limits = RateLimits(pace=Pace(spacing=1.0, burst=2), sleeper=sleeps, wall=lambda: sleeps.now)
    async with aiohttp.ClientSession() as session:
        gh = await paced(fake, session, limits)
        for n in range(4):
            await gh.post(f"/repos/{REPO}/issues", data={"title": f"t{n}"})
        await gh.getitem(f"/repos/{REPO}/git/ref/heads/main")  # reads are not paced
    assert sleeps.calls == [1.0, 1.0]


async def test_a_request_carrying_several_writes_takes_a_slot_for_each(fake: FakeGitHub) -> None:
    """A GraphQL document of several mutations (``bot.github.forge.batch``) is paced as that
    many writes: whether GitHub counts it once against content creation is not documented."""
    sleeps = Sleeps()
    limits = RateLimits(pace=Pace(spacing=1.0, burst=2), sleeper=sleeps, wall=lambda: sleeps.now)
    async with aiohttp.ClientSession() as session:
        gh = await paced(fake, session, limits)
        with carrying(3):
            await gh.post(f"/repos/{REPO}/issues", data={"title": "three writes' worth"})
        await gh.post(f"/repos/{REPO}/issues", data={"title": "one"})
    assert sleeps.calls == [1.0, 1.0]  # the burst of two, then a second for each of the rest


@pytest.mark.parametrize(("retry_after", "waits"), [(60, [60.0, 60.0]), (None, [60.0, 120.0])],
                         ids=["retry-after", "message only"])
async def test_a_secondary_limit_on_a_write_is_waited_out_and_holds_the_installation(
        fake: FakeGitHub, retry_after: int | None, waits: list[float]) -> None:
    """GitHub's content-creation limit, as the fake enforces it (here 3 writes in 2 minutes):
    ``retry-after`` is honoured; without it questbot waits a minute, then twice as long
    (BEHAVIOUR.md §15); and the writes after it wait for the installation's block too."""
    sleeps = Sleeps()
    start = 1_000_000.0
    limits = RateLimits(sleeper=sleeps, wall=lambda: start + sleeps.now)
    fake.secondary = ContentLimits(lambda: start + sleeps.now, windows=((120.0, 3),),
                                   retry_after=retry_after)
    async with aiohttp.ClientSession() as session:
        gh = await paced(fake, session, limits)
        other = await paced(fake, session, limits)  # another client of the same installation
        for n in range(4):
            await gh.post(f"/repos/{REPO}/issues", data={"title": f"t{n}"})
        assert sleeps.calls == waits  # the fourth was refused twice, then went
        await other.post(f"/repos/{REPO}/issues", data={"title": "later"})
    assert len(fake.repo(REPO).issues) == 5
    assert len(fake.secondary.hits) == 2
    blocked = [e.status for e in fake.calls("issues/create")]
    assert blocked == [201, 201, 201, 403, 403, 201, 201]
    fake.secondary.hits.clear()


async def test_an_installation_turn_is_kept_only_while_a_write_holds_or_awaits_it() -> None:
    """One write at a time per installation, and no turn kept for the installations a worker
    wrote to once (the soak, ``docs/performance.md``)."""
    limits = RateLimits()
    order: list[tuple[int, str]] = []

    async def write(installation: int) -> None:
        async with limits.turn(installation):
            order.append((installation, "in"))
            await asyncio.sleep(0.001)
            order.append((installation, "out"))

    await asyncio.gather(*(write(n % 100) for n in range(300)))
    for installation in range(100):  # each installation's writes one after another
        mine = [step for n, step in order if n == installation]
        assert mine == ["in", "out"] * 3
    assert limits.turns_held() == 0
