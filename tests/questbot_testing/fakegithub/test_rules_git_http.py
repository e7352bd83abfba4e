"""The fake serves git's smart HTTP as GitHub does (BEHAVIOUR §11, §12, §13, §17): the
installation token as the basic-auth password, GitHub's refusals for a push, and one repository
that the REST API and git both see."""

from __future__ import annotations

import asyncio
import base64
import os
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from questbot_testing.fakegithub import FakeGitHub
from questbot_testing.fakegithub.permissions import EVERYTHING
from tests.questbot_testing.fakegithub.conftest import OWNER, REPO

BASE = f"/repos/{REPO}"


class Git:
    """Real git in a scratch repository, talking to the fake with a token (or none)."""

    def __init__(self, fake: FakeGitHub, where: Path, token: str | None) -> None:
        self.fake, self.where, self.token = fake, where, token
        where.mkdir(parents=True, exist_ok=True)
        self.local("init", "-q")

    def url(self, repo: str = REPO) -> str:
        return f"{self.fake.url}/{repo}.git"

    def _env(self, auth: bool) -> dict[str, str]:
        env = {"PATH": os.environ["PATH"], "HOME": str(self.where), "GIT_TERMINAL_PROMPT": "0",
               "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}
        if auth and self.token is not None:
            basic = base64.b64encode(f"x-access-token:{self.token}".encode()).decode()
            env.update(GIT_CONFIG_COUNT="1", GIT_CONFIG_KEY_0="http.extraHeader",
                       GIT_CONFIG_VALUE_0=f"Authorization: Basic {basic}")
        return env

    def local(self, *args: str) -> str:
        done = subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t.invalid",
                               *args], cwd=self.where, env=self._env(False),
                              capture_output=True, text=True, check=True)
        return done.stdout.strip()

    async def remote(self, *args: str) -> subprocess.CompletedProcess[str]:
        """A git command that talks to the fake (run off the loop: the fake answers it)."""
        return await asyncio.to_thread(
            subprocess.run, ["git", "-c", "protocol.version=2", *args], cwd=self.where,
            env=self._env(True), capture_output=True, text=True, check=False)

    async def fetch(self, sha: str, repo: str = REPO) -> subprocess.CompletedProcess[str]:
        return await self.remote("fetch", "-q", "--depth", "1", self.url(repo), sha)

    async def commit_and_push(self, base: str, files: dict[str, str], ref: str,
                              repo: str = REPO) -> tuple[str, subprocess.CompletedProcess[str]]:
        fetched = await self.fetch(base, repo)
        assert fetched.returncode == 0, fetched.stderr
        self.local("checkout", "-q", "--force", base)
        for path, text in files.items():
            (self.where / path).parent.mkdir(parents=True, exist_ok=True)
            (self.where / path).write_text(text)
        self.local("add", "-A")
        self.local("commit", "-q", "-m", "change")
        head = self.local("rev-parse", "HEAD")
        return head, await self.remote("push", self.url(repo), f"{head}:{ref}")


def main_of(fake: FakeGitHub, repo: str = REPO) -> str:
    return str(fake.repo(repo).branch_sha("main"))


@pytest.fixture
def token(fake: FakeGitHub) -> str:
    return fake.installation_token(fake.repo(REPO).installation_id)


# -- §12 the token as the password ------------------------------------------------------------


async def test_a_clone_and_a_push_with_the_installation_token(fake: FakeGitHub, token: str,
                                                             tmp_path: Path) -> None:
    git = Git(fake, tmp_path / "w", token)
    head, pushed = await git.commit_and_push(main_of(fake), {"new.txt": "new\n"},
                                             "refs/heads/feature")
    assert pushed.returncode == 0, pushed.stderr
    assert fake.repo(REPO).branch_sha("feature") == head
    assert [e.operation_id for e in fake.git_requests][-2:] == ["git/info-refs",
                                                                "git/receive-pack"]
    assert not fake.requests, "git is not the REST API: no rate limit spent"


async def test_a_private_repository_wants_a_token_and_a_public_one_is_read_by_anyone(
        fake: FakeGitHub, tmp_path: Path) -> None:
    private = fake.create_repository(f"{OWNER}/secret", {"a": "a\n"}, private=True)
    anonymous = Git(fake, tmp_path / "anon", None)
    refused = await anonymous.fetch(main_of(fake, private.full_name), private.full_name)
    assert refused.returncode != 0 and fake.git_requests[-1].status == 401
    assert (await anonymous.fetch(main_of(fake))).returncode == 0  # public: no token needed
    _, pushed = await anonymous.commit_and_push(main_of(fake), {"x": "x\n"}, "refs/heads/x")
    assert pushed.returncode != 0 and fake.git_requests[-1].status == 401
    assert fake.repo(REPO).branch_sha("x") is None


async def test_an_unknown_or_expired_token_is_401(fake: FakeGitHub, tmp_path: Path) -> None:
    installation = fake.repo(REPO).installation_id
    expired = fake.installation_token(installation)
    fake.world.tokens[expired].expires_at = time.time() - 1
    for token in ("ghs_" + "x" * 36, expired):
        done = await Git(fake, tmp_path / token[-6:], token).fetch(main_of(fake))
        assert done.returncode != 0 and fake.git_requests[-1].status == 401
        assert fake.git_requests[-1].headers["authorization"].startswith("Basic ")


async def test_another_installations_token_sees_no_private_repository_and_pushes_nowhere(
        fake: FakeGitHub, tmp_path: Path) -> None:
    private = fake.create_repository(f"{OWNER}/secret", {"a": "a\n"}, private=True)
    other = fake.world.installation_for("someone-else").id
    git = Git(fake, tmp_path / "w", fake.installation_token(other))
    done = await git.fetch(main_of(fake, private.full_name), private.full_name)
    assert done.returncode != 0 and "not found" in done.stderr
    assert fake.git_requests[-1].status == 404
    _, pushed = await git.commit_and_push(main_of(fake), {"x": "x\n"}, "refs/heads/x")
    assert pushed.returncode != 0 and fake.git_requests[-1].status == 403
    assert "Permission to octo-org/rules.git denied to questbot[bot]" in pushed.stderr


async def test_a_token_without_contents_write_cannot_push(fake: FakeGitHub,
                                                          tmp_path: Path) -> None:
    reader = fake.installation_token(fake.repo(REPO).installation_id,
                                     permissions={"contents": "read", "metadata": "read"})
    _, pushed = await Git(fake, tmp_path / "w", reader).commit_and_push(
        main_of(fake), {"x": "x\n"}, "refs/heads/x")
    assert pushed.returncode != 0 and fake.git_requests[-1].status == 403


# -- §11, §17 what a push may change -----------------------------------------------------------


async def test_a_workflow_file_needs_the_workflows_permission(fake: FakeGitHub, token: str,
                                                              tmp_path: Path) -> None:
    workflow = {".github/workflows/ci.yml": "on: push\n"}
    _, pushed = await Git(fake, tmp_path / "w", token).commit_and_push(
        main_of(fake), workflow, "refs/heads/ci")
    assert pushed.returncode != 0
    assert ("refusing to allow a GitHub App to create or update workflow "
            "`.github/workflows/ci.yml` without `workflows` permission") in pushed.stderr
    assert fake.repo(REPO).branch_sha("ci") is None, "a refused push changes nothing"
    fake.world.app_permissions = {**EVERYTHING, "workflows": "write"}  # the App asks for it
    allowed = fake.installation_token(fake.repo(REPO).installation_id)
    head, pushed = await Git(fake, tmp_path / "w2", allowed).commit_and_push(
        main_of(fake), workflow, "refs/heads/ci")
    assert pushed.returncode == 0, pushed.stderr
    assert fake.repo(REPO).branch_sha("ci") == head


async def test_a_protected_default_branch_takes_no_direct_push(fake: FakeGitHub, token: str,
                                                               tmp_path: Path) -> None:
    fake.repo(REPO).required_checks = ["tests"]
    git = Git(fake, tmp_path / "w", token)
    _, pushed = await git.commit_and_push(main_of(fake), {"x": "x\n"}, "refs/heads/main")
    assert pushed.returncode != 0
    assert "GH006: Protected branch update failed for refs/heads/main." in pushed.stderr
    assert 'Required status check "tests" is expected.' in pushed.stderr
    head, pushed = await git.commit_and_push(main_of(fake), {"x": "x\n"}, "refs/heads/other")
    assert pushed.returncode == 0 and fake.repo(REPO).branch_sha("other") == head
    deleted = await git.remote("push", git.url(), ":refs/heads/main")
    assert deleted.returncode != 0 and "refusing to delete the current branch" in deleted.stderr
    assert fake.repo(REPO).branch_sha("main") is not None


# -- one repository, two ways in ----------------------------------------------------------------


async def test_the_rest_api_and_git_see_the_same_repository(fake: FakeGitHub, token: str,
                                                            answer: Any, tmp_path: Path) -> None:
    git = Git(fake, tmp_path / "w", token)
    (tmp_path / "w" / "bin").mkdir()
    head, pushed = await git.commit_and_push(main_of(fake), {"bin/tool": "#!/bin/sh\n"},
                                             "refs/heads/feature")
    assert pushed.returncode == 0, pushed.stderr
    status, ref = await answer("GET", f"{BASE}/git/ref/heads/feature")
    assert status == 200 and ref["object"]["sha"] == head
    status, commit = await answer("GET", f"{BASE}/git/commits/{head}")
    assert status == 200 and commit["parents"][0]["sha"] == main_of(fake)
    status, tree = await answer("GET", f"{BASE}/git/trees/{head}?recursive=1")
    assert {e["path"] for e in tree["tree"]} >= {"bin/tool", "README.md", "src/app.py"}

    again = await git.remote("push", git.url(), f"{main_of(fake)}:refs/heads/same")
    assert again.returncode == 0 and fake.repo(REPO).branch_sha("same") == main_of(fake)
    made = await fake.push(REPO, "feature", {"README.md": "changed on GitHub\n"})
    listed = await git.remote("ls-remote", git.url(), "refs/heads/feature")
    assert listed.stdout.split()[0] == made.sha, "git sees what the REST side made"
    assert (await git.fetch(made.sha)).returncode == 0
    assert git.local("show", f"{made.sha}:README.md") == "changed on GitHub"
    assert f"parent {head}" in git.local("cat-file", "-p", made.sha)
    fake.assert_clean()


async def test_modes_pushed_over_git_are_what_the_api_lists(fake: FakeGitHub, token: str,
                                                            answer: Any, tmp_path: Path) -> None:
    git = Git(fake, tmp_path / "w", token)
    assert (await git.fetch(main_of(fake))).returncode == 0
    git.local("checkout", "-q", main_of(fake))
    (tmp_path / "w" / "run.sh").write_text("#!/bin/sh\n")
    (tmp_path / "w" / "run.sh").chmod(0o755)
    (tmp_path / "w" / "here").symlink_to("README.md")
    git.local("add", "-A")
    git.local("commit", "-q", "-m", "modes")
    head = git.local("rev-parse", "HEAD")
    assert (await git.remote("push", git.url(), f"{head}:refs/heads/modes")).returncode == 0
    status, tree = await answer("GET", f"{BASE}/git/trees/{head}?recursive=1")
    assert status == 200
    modes = {e["path"]: e["mode"] for e in tree["tree"]}
    assert (modes["run.sh"], modes["here"], modes["README.md"]) == ("100755", "120000", "100644")
    assert tree["sha"] == git.local("rev-parse", f"{head}^{{tree}}")
    fake.assert_clean()
