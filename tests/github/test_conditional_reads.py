"""Repeated reads are conditional: the Forge sends the ``ETag`` it was given in
``If-None-Match``, and a ``304`` — which GitHub does not count against the rate limit
(BEHAVIOUR.md §15) — gives back the body it had, through the client's per-installation cache."""

from __future__ import annotations

from bot.github.forge import Forge
from bot.github.repo_settings import RepoSettings
from bot.settings.repository.schema import SETTINGS_PATH
from tests.github.conftest import REPO, World


def conditional(world: World, operation: str) -> list[tuple[int, bool]]:
    """Each exchange of ``operation``: its status, and whether it carried If-None-Match."""
    return [(e.status, "if-none-match" in e.headers) for e in world.fake.calls(operation)]


async def forge(world: World) -> Forge:
    return await world.effects.forges.for_repo(REPO)


async def test_a_pull_request_read_again_is_a_304_and_the_same_pull(world: World) -> None:
    await world.fake.push(REPO, "topic", {"b.txt": "b\n"})
    pr = await world.fake.open_pull_request(REPO, "topic")
    first = await (await forge(world)).pull(pr.number)
    again = await (await forge(world)).pull(pr.number)  # a new Forge: the cache is the client's
    assert again == first
    assert conditional(world, "pulls/get") == [(200, False), (304, True)]
    await world.fake.push(REPO, "topic", {"b.txt": "changed\n"})
    moved = await (await forge(world)).pull(pr.number)
    assert moved.head_sha != first.head_sha
    assert conditional(world, "pulls/get")[-1] == (200, True)


async def test_the_settings_file_read_again_is_a_304(world: World) -> None:
    await world.fake.push(REPO, "main", {SETTINGS_PATH: "max_attempts: 5\n"})
    settings = RepoSettings(world.clients, world.redis)
    assert (await settings.settings(REPO)).max_attempts == 5
    settings.forget(REPO)  # its time in the cache is up
    assert (await settings.settings(REPO)).max_attempts == 5
    assert conditional(world, "repos/get-content") == [(200, False), (304, True)]


async def test_a_304_does_not_spend_the_rate_limit(world: World) -> None:
    gh = await world.clients.for_repo(REPO)
    for _ in range(3):
        await gh.getitem(f"/repos/{REPO}/git/ref/heads/main")
    (*_, last) = world.fake.calls("git/get-ref")
    assert conditional(world, "git/get-ref") == [(200, False), (304, True), (304, True)]
    assert world.clients.limits.remaining == 5000 - 1  # the token's one counted request
    assert last.status == 304
