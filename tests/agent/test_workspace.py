"""The workspace through the REST git host, against the fake GitHub and real git: materialise,
push, proof repository."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from bot.adapters import GitHost
from bot.agent.demo_spec import REPRODUCTION_PATH, REPRODUCTION_TEST, sample_files
from bot.agent.workspace import (
    WorkspaceError,
    changes_in,
    materialise,
    proof_repository,
    push_change,
    rebind,
)
from bot.core.proof import ProofBundle, Risk
from bot.github.client import GitHubClients
from bot.github.forge import Forges
from tests.agent.conftest import REPO
from tests.fakegithub import FakeGitHub


async def host_of(clients: GitHubClients) -> GitHost:
    return await Forges(clients).git_host(REPO)


def show(repo: Path, rev: str, path: str) -> str:
    return subprocess.run(["git", "show", f"{rev}:{path}"], cwd=repo, check=True,
                          capture_output=True, text=True).stdout


async def test_materialise_change_push_round_trip(fake: FakeGitHub, clients: GitHubClients,
                                                  main_sha: str, tmp_path: Path) -> None:
    host = await host_of(clients)
    checkout = await materialise(host, main_sha, tmp_path / "co")
    assert {p: (checkout.path / p).read_text() for p in checkout.files} == sample_files()
    assert checkout.files == fake.repo(REPO).git.files(main_sha)

    (checkout.path / "pager.py").write_text("print('patched')\n")
    (checkout.path / "README.md").unlink()
    (checkout.path / "docs").mkdir()
    (checkout.path / "docs" / "new.md").write_text("new\n")
    (checkout.path / "__pycache__").mkdir()
    (checkout.path / "__pycache__" / "x.pyc").write_bytes(b"junk")
    changes = await changes_in(checkout)
    assert changes == {"pager.py": b"print('patched')\n", "README.md": None,
                       "docs/new.md": b"new\n"}

    await fake.push(REPO, "quest/q-1", {})  # the draft PR's branch, at the base's files
    pr = await fake.open_pull_request(REPO, "quest/q-1", draft=True)
    first = await host.branch_head("quest/q-1")
    assert first is not None
    parent = await materialise(host, first, tmp_path / "co2")
    head = await push_change(host, branch="quest/q-1", parent=parent, changes=changes,
                             message="a change")
    stored = fake.repo(REPO)
    assert stored.branch_sha("quest/q-1") == head == pr.head_sha
    assert stored.git.commits[head].parents == (first,)
    files = stored.git.files(head)
    assert "README.md" not in files
    assert stored.git.read(head, "docs/new.md") == b"new\n"
    test_file = sample_files()["tests/test_pager.py"].encode()
    assert stored.git.read(head, "tests/test_pager.py") == test_file
    assert {e.operation_id for e in fake.calls(method="POST")} >= {
        "git/create-blob", "git/create-tree", "git/create-commit"}
    assert fake.calls("git/update-ref")


async def test_push_creates_the_branch_when_missing(fake: FakeGitHub, clients: GitHubClients,
                                                    main_sha: str, tmp_path: Path) -> None:
    host = await host_of(clients)
    assert await host.branch_head("quest/new") is None
    checkout = await materialise(host, main_sha, tmp_path / "co")
    head = await push_change(host, branch="quest/new", parent=checkout,
                             changes={"x.txt": b"x\n"}, message="x")
    assert fake.repo(REPO).branch_sha("quest/new") == head
    assert len(fake.calls("git/create-ref")) == 1
    with pytest.raises(WorkspaceError, match="empty"):
        await push_change(host, branch="quest/new", parent=checkout, changes={},
                          message="nothing")


async def test_proof_repository_holds_base_with_overlay_and_head(
        fake: FakeGitHub, clients: GitHubClients, main_sha: str, tmp_path: Path) -> None:
    host = await host_of(clients)
    repro = await fake.push(REPO, "quest/q-1", {REPRODUCTION_PATH: REPRODUCTION_TEST})
    fixed = sample_files()["pager.py"].replace("total // per_page", "-(-total // per_page)")
    head = await fake.push(REPO, "quest/q-1", {"pager.py": fixed})
    local = await proof_repository(host, base=main_sha, head=head.sha, dest=tmp_path / "p",
                                   overlay={REPRODUCTION_PATH: (await host.files(
                                       repro.sha))[REPRODUCTION_PATH]},
                                   overlay_ref=repro.sha)
    assert show(local.path, local.local_base, "pager.py") == sample_files()["pager.py"]
    assert show(local.path, local.local_base, REPRODUCTION_PATH) == REPRODUCTION_TEST
    assert show(local.path, local.local_head, "pager.py") == fixed
    assert local.head_files == fake.repo(REPO).git.files(head.sha)


def test_rebind_names_github_shas_and_changes_the_digest() -> None:
    bundle = ProofBundle(quest_id="q", revision=1, risk=Risk.LOW, base="l1", head="l2")
    bound = rebind(bundle, base="a" * 40, head="b" * 40)
    assert (bound.base, bound.head) == ("a" * 40, "b" * 40)
    assert bound.digest() != bundle.digest()


async def test_a_link_planted_in_the_checkout_never_takes_the_worker_outside(
        fake: FakeGitHub, clients: GitHubClients, main_sha: str, tmp_path: Path) -> None:
    """Sandboxed code could write the checkout; the worker reads and writes it unconfined
    afterwards. A link there must not make it push a file from outside (the App's key) or
    write one outside (its own code)."""
    from bot.agent.workspace import apply_changes

    secret = tmp_path / "app.pem"
    secret.write_text("PRIVATE KEY\n")
    victim_dir = tmp_path / "worker-code"
    victim_dir.mkdir()
    victim = victim_dir / "config.py"
    victim.write_text("original\n")
    checkout = await materialise(await host_of(clients), main_sha, tmp_path / "co")
    (checkout.path / "leak.txt").symlink_to(secret)
    with pytest.raises(WorkspaceError, match="regular files only"):
        await changes_in(checkout)
    (checkout.path / "leak.txt").unlink()
    (checkout.path / "pager.py").unlink()
    (checkout.path / "pager.py").symlink_to(victim)
    (checkout.path / "out").symlink_to(victim_dir)
    apply_changes(checkout, {"pager.py": b"patched\n"})
    assert victim.read_text() == "original\n"  # the link was replaced, not followed
    assert not (checkout.path / "pager.py").is_symlink()
    assert (checkout.path / "pager.py").read_bytes() == b"patched\n"
    with pytest.raises(WorkspaceError, match="is a symbolic link"):
        apply_changes(checkout, {"out/config.py": b"pwned\n"})
    assert victim.read_text() == "original\n"
