"""The REST git host (``Forge.git``): what the agent pushes through, and how it refuses."""

from __future__ import annotations

import pytest

from bot.adapters import GitHostError
from bot.github.forge import Forges
from tests.github.conftest import REPO, World


async def test_a_push_is_one_commit_on_the_parent_and_moves_the_branch(world: World) -> None:
    git = await Forges(world.clients).git_host(REPO)
    files = await git.files(world.main_sha)
    assert set(files) == {"README.md", "app.py"}
    blobs = await git.blobs(world.main_sha, files)
    assert blobs[files["app.py"]] == b"x = 1\n"
    tree = world.fake.repo(REPO).git.commits[world.main_sha].tree
    head = await git.push("quest/q-1", parent=world.main_sha, parent_tree=tree,
                          changes={"app.py": b"x = 2\n", "README.md": None}, message="fix")
    assert await git.branch_head("quest/q-1") == head
    stored = world.fake.repo(REPO).git
    assert stored.commits[head].parents == (world.main_sha,)
    assert stored.files(head).keys() == {"app.py"} and stored.read(head, "app.py") == b"x = 2\n"


async def test_a_tree_the_host_does_not_know_stops_the_push(world: World) -> None:
    git = await Forges(world.clients).git_host(REPO)
    with pytest.raises(GitHostError, match="use a git clone"):
        await git.push("quest/q-1", parent=world.main_sha, parent_tree="0" * 40,
                       changes={"app.py": b"x = 2\n"}, message="fix")
    assert await git.branch_head("quest/q-1") is None  # nothing moved
