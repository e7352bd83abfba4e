"""A repository's refs and the few commits questbot makes through GitHub's Git Data API.

The agent's checkouts and pushes go over git itself (``bot.github.gitremote``); what is left
here is what the worker does without a local repository: read where a branch points
(``git/get-ref``), make the quest branch's first commit and a revert's commit from trees GitHub
has (``git/create-tree``, ``git/create-commit``), and create or move a branch
(``git/create-ref``, ``git/update-ref``). ``entries(commit)`` lists a commit's tree in one
``git/get-tree?recursive=1`` (a listing GitHub cuts short past 100,000 entries or 7 MB is walked
tree by tree), each path with its mode, so a tree made from it keeps executables, symlinks and
submodules as they are.
"""

from __future__ import annotations

from typing import Any

import gidgethub
from gidgethub.abc import GitHubAPI

from bot.github.forge.refusals import refused, status_of

TYPES = {"040000": "tree", "160000": "commit"}
"""The object type a tree entry of each mode names; every other mode names a blob."""


class GitData:
    """One repository's refs, trees, blobs and commits (``git/*``)."""

    def __init__(self, gh: GitHubAPI, repo: str) -> None:
        self.gh = gh
        self._repo = repo
        self.base = f"/repos/{repo}"

    @property
    def repo(self) -> str:
        return self._repo

    # -- reading ---------------------------------------------------------------------------

    async def branch_head(self, branch: str) -> str | None:
        """``git/get-ref``: the commit a branch points at, or ``None`` if it does not exist."""
        try:
            data = await self.gh.getitem(f"{self.base}/git/ref/heads/{{+branch}}",
                                         {"branch": branch})
        except gidgethub.BadRequest as exc:
            if status_of(exc) == 404:
                return None
            raise
        return str(data["object"]["sha"])

    async def entries(self, commit: str) -> dict[str, tuple[str, str]]:
        """Every entry of ``commit``'s tree that is not a tree, as path → (mode, SHA): one
        request whatever the repository's size, unless GitHub truncated the listing."""
        data = await self.gh.getitem(f"{self.base}/git/trees/{commit}{{?recursive}}",
                                     {"recursive": "1"})
        if not data.get("truncated"):
            return _leaves(data["tree"], "")
        entries: dict[str, tuple[str, str]] = {}
        pending = [(str(data["sha"]), "")]
        while pending:
            tree, prefix = pending.pop()
            listing = await self.gh.getitem(f"{self.base}/git/trees/{tree}")
            for entry in listing["tree"]:
                if entry["type"] == "tree":
                    pending.append((str(entry["sha"]), f"{prefix}{entry['path']}/"))
            entries.update(_leaves(listing["tree"], prefix))
        return entries

    async def commit_tree(self, commit: str) -> str:
        """``git/get-commit``: the tree a commit records."""
        data = await self.gh.getitem(f"{self.base}/git/commits/{commit}")
        return str(data["tree"]["sha"])

    # -- writing ---------------------------------------------------------------------------

    async def create_tree(self, entries: list[dict[str, Any]], *,
                          base_tree: str | None = None) -> str:
        """``git/create-tree``: a tree of ``entries``, over ``base_tree`` when given."""
        data: dict[str, Any] = {"tree": entries}
        if base_tree is not None:
            data["base_tree"] = base_tree
        answer = await self.gh.post(f"{self.base}/git/trees", data=data)
        return str(answer["sha"])

    async def create_commit(self, *, tree: str, parents: list[str], message: str) -> str:
        """``git/create-commit``."""
        data = await self.gh.post(f"{self.base}/git/commits",
                                  data={"tree": tree, "parents": parents, "message": message})
        return str(data["sha"])

    async def ensure_branch(self, branch: str, sha: str) -> str:
        """The branch's commit, creating it at ``sha`` if missing (``git/create-ref``)."""
        found = await self.branch_head(branch)
        if found is not None:
            return found
        try:
            data = await self.gh.post(f"{self.base}/git/refs",
                                      data={"ref": f"refs/heads/{branch}", "sha": sha})
        except gidgethub.BadRequest as exc:
            if status_of(exc) == 422:  # created meanwhile by another runner: read it back
                again = await self.branch_head(branch)
                if again is not None:
                    return again
            raise refused(exc, f"create branch {branch} at {sha[:12]} in {self.repo}",
                          "check that the commit exists and questbot may write contents") from exc
        return str(data["object"]["sha"])

    async def create_branch(self, branch: str, sha: str) -> bool:
        """``git/create-ref`` without reading first: ``True`` if this call made the branch,
        ``False`` if it was there already (GitHub's 422 "Reference already exists", the branch
        read back to tell it from another refusal). *Why not look first:* a branch name is
        unique on GitHub, so the create is its own look-up, one request instead of two for
        the usual case of a branch that is not there yet."""
        try:
            await self.gh.post(f"{self.base}/git/refs",
                               data={"ref": f"refs/heads/{branch}", "sha": sha})
        except gidgethub.BadRequest as exc:
            if status_of(exc) == 422 and await self.branch_head(branch) is not None:
                return False
            raise refused(exc, f"create branch {branch} at {sha[:12]} in {self.repo}",
                          "check that the commit exists and questbot may write contents") from exc
        return True

    async def set_branch(self, branch: str, sha: str, *, force: bool = False,
                         exists: bool | None = None) -> None:
        """Point ``branch`` at ``sha``: ``git/update-ref``, or ``git/create-ref`` if missing
        (``exists``: whether it is there, when the caller has just read it)."""
        if exists is None:
            exists = await self.branch_head(branch) is not None
        if not exists:
            try:
                await self.gh.post(f"{self.base}/git/refs",
                                   data={"ref": f"refs/heads/{branch}", "sha": sha})
                return
            except gidgethub.BadRequest as exc:
                # 422 "Reference already exists": created meanwhile — move it, below
                if status_of(exc) != 422 or await self.branch_head(branch) is None:
                    raise
        await self.gh.patch(f"{self.base}/git/refs/heads/{{+branch}}", {"branch": branch},
                            data={"sha": sha, "force": force})


def _leaves(listing: list[dict[str, Any]], prefix: str) -> dict[str, tuple[str, str]]:
    return {prefix + str(e["path"]): (str(e["mode"]), str(e["sha"]))
            for e in listing if e["type"] != "tree"}
