"""The workspace over git's smart HTTP, against the fake GitHub and real git: materialise, push,
proof repository — modes, symlinks and large files kept, the token nowhere on disk."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from bot.adapters import GitHost
from bot.agent.workspace import (
    Checkout,
    WorkspaceError,
    apply_changes,
    changes_in,
    materialise,
    proof_repository,
    push_change,
    rebind,
    tree_files,
)
from bot.core.proof import ProofBundle, Risk
from bot.github.client import GitHubClients
from bot.github.forge import Forges
from questbot_testing.fakegithub import FakeGitHub
from questbot_testing.sample import REPRODUCTION_PATH, REPRODUCTION_TEST, sample_files
from tests.agent.conftest import REPO

BIG = bytes(range(256)) * (6 * 1024)  # 1.5 MB: past the contents API's 1 MB
MIXED = "octo-org/mixed"
SCRIPT = "#!/bin/sh\necho run\n"


async def host_of(clients: GitHubClients, repo: str = REPO) -> GitHost:
    return await Forges(clients).git_host(repo)


def show(repo: Path, rev: str, path: str) -> str:
    return subprocess.run(["git", "show", f"{rev}:{path}"], cwd=repo, check=True,
                          capture_output=True, text=True).stdout


def api_calls(fake: FakeGitHub) -> list[str]:
    """What questbot asked the REST API, apart from its installation token."""
    return [str(e.operation_id) for e in fake.requests
            if e.operation_id != "apps/create-installation-access-token"]


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
    (parent.path / "left-by-a-check.txt").write_text("not part of the change\n")
    head = await push_change(host, branch="quest/q-1", parent=parent, changes=changes,
                             message="a change")
    stored = fake.repo(REPO)
    assert stored.branch_sha("quest/q-1") == head == pr.head_sha  # synchronize was sent
    assert stored.git.commits[head].parents == (first,)
    files = stored.git.files(head)
    assert "README.md" not in files and "left-by-a-check.txt" not in files
    assert stored.git.read(head, "docs/new.md") == b"new\n"
    test_file = sample_files()["tests/test_pager.py"].encode()
    assert stored.git.read(head, "tests/test_pager.py") == test_file
    assert api_calls(fake) == [], "the checkouts and the push went over git, not the API"
    services = {e.operation_id for e in fake.git_requests}
    assert services == {"git/info-refs", "git/upload-pack", "git/receive-pack"}
    assert all(e.status == 200 for e in fake.git_requests)


async def test_push_creates_the_branch_when_missing(fake: FakeGitHub, clients: GitHubClients,
                                                    main_sha: str, tmp_path: Path) -> None:
    host = await host_of(clients)
    assert await host.branch_head("quest/new") is None
    checkout = await materialise(host, main_sha, tmp_path / "co")
    head = await push_change(host, branch="quest/new", parent=checkout,
                             changes={"x.txt": b"x\n"}, message="x")
    assert fake.repo(REPO).branch_sha("quest/new") == head
    pushes = [d.delivery.payload for d in fake.deliveries if d.delivery.event == "push"]
    assert [(p["ref"], p["after"], p["created"]) for p in pushes] == [
        ("refs/heads/quest/new", head, True)], "a push over git sends GitHub's push webhook"
    with pytest.raises(WorkspaceError, match="empty"):
        await push_change(host, branch="quest/new", parent=checkout, changes={},
                          message="nothing")


async def test_proof_repository_holds_base_with_overlay_and_head(
        fake: FakeGitHub, clients: GitHubClients, main_sha: str, tmp_path: Path) -> None:
    host = await host_of(clients)
    repro = await fake.push(REPO, "quest/q-1", {REPRODUCTION_PATH: REPRODUCTION_TEST})
    fixed = sample_files()["pager.py"].replace("total // per_page", "-(-total // per_page)")
    head = await fake.push(REPO, "quest/q-1", {"pager.py": fixed})
    overlay = {REPRODUCTION_PATH: fake.repo(REPO).git.files(repro.sha)[REPRODUCTION_PATH]}
    local = await proof_repository(host, base=main_sha, head=head.sha, dest=tmp_path / "p",
                                   overlay=overlay, overlay_ref=repro.sha)
    assert show(local.path, local.local_base, "pager.py") == sample_files()["pager.py"]
    assert show(local.path, local.local_base, REPRODUCTION_PATH) == REPRODUCTION_TEST
    assert show(local.path, local.local_head, "pager.py") == fixed
    assert local.local_head == head.sha
    assert local.head_files == fake.repo(REPO).git.files(head.sha)


def _mixed(fake: FakeGitHub) -> str:
    repo = fake.create_repository(
        MIXED, {"run.sh": SCRIPT, "data/big.bin": BIG, "latest": "data/big.bin",
                "src/app.py": "x = 1\n"},
        modes={"run.sh": "100755", "latest": "120000"}, private=True)
    return str(repo.branch_sha("main"))


async def test_executables_symlinks_and_large_files_survive_a_round_trip(
        fake: FakeGitHub, clients: GitHubClients, tmp_path: Path) -> None:
    main = _mixed(fake)
    await clients.remember_installation(MIXED, fake.repo(MIXED).installation_id)
    host = await host_of(clients, MIXED)
    checkout = await materialise(host, main, tmp_path / "co")
    root = checkout.path
    assert os.access(root / "run.sh", os.X_OK)
    assert (root / "latest").is_symlink() and os.readlink(root / "latest") == "data/big.bin"
    assert (root / "data" / "big.bin").read_bytes() == BIG

    apply_changes(checkout, {"run.sh": b"#!/bin/sh\necho changed\n",
                             "data/big.bin": BIG[::-1] + BIG, "new.sh": b"#!/bin/sh\n"})
    (root / "new.sh").chmod(0o755)
    (root / "docs").symlink_to("src")
    changes = await changes_in(checkout)
    assert changes["docs"] == b"src", "a symlink's content is its target"
    head = await push_change(host, branch="quest/q-9", parent=checkout, changes=changes,
                             message="modes")
    entries = fake.repo(MIXED).git.entries(head)
    assert entries["run.sh"][0] == "100755", "a changed executable stays executable"
    assert entries["new.sh"][0] == "100755" and entries["docs"][0] == "120000"
    assert entries["latest"][0] == "120000" and entries["src/app.py"][0] == "100644"
    assert fake.repo(MIXED).git.read(head, "data/big.bin") == BIG[::-1] + BIG
    assert api_calls(fake) == []


async def test_a_submodule_is_kept_as_it_is(fake: FakeGitHub, clients: GitHubClients,
                                            main_sha: str, tmp_path: Path) -> None:
    repo = fake.repo(REPO)
    entries = {**repo.git.entries(main_sha), "vendor/lib": ("160000", "5" * 40)}
    commit = repo.git.put_commit(repo.git.write_entries(entries), [main_sha], "a submodule")
    repo.refs["refs/heads/main"] = commit.sha
    host = await host_of(clients)
    checkout = await materialise(host, commit.sha, tmp_path / "co")
    assert checkout.files["vendor/lib"] == "5" * 40 and (checkout.path / "vendor/lib").is_dir()
    head = await push_change(host, branch="quest/sub", parent=checkout,
                             changes={"pager.py": b"x = 1\n"}, message="beside a submodule")
    assert repo.git.entries(head)["vendor/lib"] == ("160000", "5" * 40)


async def test_writes_never_follow_a_symlink_out_of_the_checkout(
        fake: FakeGitHub, clients: GitHubClients, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("the worker's own file\n")
    main = _mixed(fake)
    await clients.remember_installation(MIXED, fake.repo(MIXED).installation_id)
    host = await host_of(clients, MIXED)
    checkout = await materialise(host, main, tmp_path / "co")
    (checkout.path / "out").symlink_to(outside)
    (checkout.path / "leak").symlink_to(outside / "secret.txt")
    with pytest.raises(WorkspaceError, match="symbolic link"):
        apply_changes(checkout, {"out/secret.txt": b"overwritten\n"})
    apply_changes(checkout, {"leak": b"a file now\n"})
    assert (outside / "secret.txt").read_text() == "the worker's own file\n"
    assert not (checkout.path / "leak").is_symlink()
    (checkout.path / "leak").unlink()
    (checkout.path / "leak").symlink_to(outside / "secret.txt")
    changes = await changes_in(checkout)
    assert changes["leak"] == os.fsencode(outside / "secret.txt"), "the link, not the secret"


async def test_the_token_is_never_written_into_the_checkout(
        fake: FakeGitHub, clients: GitHubClients, main_sha: str, tmp_path: Path) -> None:
    host = await host_of(clients)
    checkout = await materialise(host, main_sha, tmp_path / "co")
    await push_change(host, branch="quest/t", parent=checkout, changes={"t.txt": b"t\n"},
                      message="t")
    (token,) = [t.token for t in fake.world.tokens.values()]
    for path in checkout.path.rglob("*"):
        if path.is_file() and not path.is_symlink():
            assert token.encode() not in path.read_bytes(), path
    config = (checkout.path / ".git" / "config").read_text()
    assert "extraheader" not in config.lower() and fake.url not in config
    assert all(e.headers["authorization"].startswith("Basic ") for e in fake.git_requests)


async def test_requests_do_not_grow_with_the_repository(
        fake: FakeGitHub, clients: GitHubClients, main_sha: str, tmp_path: Path) -> None:
    big = fake.create_repository("octo-org/big", {f"pkg{i % 40}/m{i}.py": f"n = {i}\n"
                                                  for i in range(2_000)})
    await clients.remember_installation("octo-org/big", big.installation_id)
    counts = []
    for name, sha in ((REPO, main_sha), ("octo-org/big", str(big.branch_sha("main")))):
        api, git = len(fake.requests), len(fake.git_requests)
        checkout = await materialise(await host_of(clients, name), sha, tmp_path / name)
        assert len(await tree_files(checkout.path, sha)) == len(checkout.files)
        counts.append((len(api_calls(fake)[api:]), len(fake.git_requests) - git))
    assert counts[0] == counts[1] and counts[0][0] == 0, counts


async def test_a_commit_in_the_repository_is_not_fetched_again(
        fake: FakeGitHub, clients: GitHubClients, main_sha: str, tmp_path: Path) -> None:
    host = await host_of(clients)
    first: Checkout = await materialise(host, main_sha, tmp_path / "co")
    before = len(fake.git_requests)
    again = await materialise(host, main_sha, first.path)
    assert len(fake.git_requests) == before and again.files == first.files


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
    assert (await changes_in(checkout))["leak.txt"] == os.fsencode(secret), "the link, never "\
        "what it points at"
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
