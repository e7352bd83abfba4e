"""The git host (``bot.github.gitremote``): git's smart HTTP with the installation token, and how
it tells a refusal (permanent) from a fault or a refused token (retried)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from bot.adapters import GitHostError
from bot.github.forge import Forges
from bot.github.gitremote import GitRemote, GitTransportError, git_base_url
from tests.github.conftest import REPO, World


def local(tmp: Path) -> Path:
    subprocess.run(["git", "init", "-q", str(tmp)], check=True)
    return tmp


def test_git_is_served_where_github_serves_it() -> None:
    assert git_base_url("https://api.github.com") == "https://github.com"
    assert git_base_url("https://api.github.com/") == "https://github.com"
    assert git_base_url("https://ghe.example.com/api/v3") == "https://ghe.example.com"
    assert git_base_url("http://127.0.0.1:8787") == "http://127.0.0.1:8787"


async def test_a_fetch_and_a_push_move_the_branch(world: World, tmp_path: Path) -> None:
    host = await Forges(world.clients).git_host(REPO)
    repo = local(tmp_path / "r")
    await host.fetch(repo, [world.main_sha])
    subprocess.run(["git", "cat-file", "-e", f"{world.main_sha}^{{tree}}"], cwd=repo,
                   check=True)
    commit = subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit-tree",
                             f"{world.main_sha}^{{tree}}", "-p", world.main_sha, "-m", "x"],
                            cwd=repo, check=True, capture_output=True, text=True).stdout.strip()
    await host.push(repo, commit, "quest/q-1")
    assert await host.branch_head("quest/q-1") == commit
    assert world.fake.repo(REPO).git.commits[commit].parents == (world.main_sha,)
    assert await host.branch_head("quest/none") is None


async def test_a_commit_github_does_not_have_is_a_refusal(world: World, tmp_path: Path) -> None:
    host = await Forges(world.clients).git_host(REPO)
    with pytest.raises(GitHostError, match="could not fetch"):
        await host.fetch(local(tmp_path / "r"), ["1" * 40])


async def test_a_token_github_answers_401_to_is_renewed_once(world: World,
                                                            tmp_path: Path) -> None:
    host = await Forges(world.clients).git_host(REPO)
    await host.branch_head("main")  # the token is fetched and cached
    mints = len(world.fake.calls("apps/create-installation-access-token"))
    world.fake.revoke_tokens()  # GitHub answers 401 to it from now on
    await host.fetch(local(tmp_path / "r"), [world.main_sha])
    assert len(world.fake.calls("apps/create-installation-access-token")) == mints + 1
    assert [e.status for e in world.fake.git_requests][-3:] == [401, 200, 200]


async def test_a_token_refused_twice_is_a_fault_to_retry_and_never_shown(
        world: World, tmp_path: Path) -> None:
    async def token() -> str:
        return "ghs_" + "a" * 36

    async def renew(stale: str) -> str:
        return "ghs_" + "b" * 36

    host = GitRemote(REPO, base_url=world.fake.url, token=token, renew=renew)
    with pytest.raises(GitTransportError, match="a new one too") as refused:
        await host.fetch(local(tmp_path / "r"), [world.main_sha])
    assert "ghs_" not in str(refused.value)
    assert [e.status for e in world.fake.git_requests] == [401, 401]


async def test_an_unreachable_github_is_a_fault_to_retry(tmp_path: Path) -> None:
    async def token() -> str:
        return "ghs_secret"

    host = GitRemote(REPO, base_url="http://127.0.0.1:9", token=token)
    with pytest.raises(GitTransportError, match="retrying later") as fault:
        await host.branch_head("main")
    assert "ghs_secret" not in str(fault.value)
