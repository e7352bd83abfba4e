"""A repository's git data over GitHub's REST API: the ``GitHost`` the agent works through.

Why REST and not ``git clone``? The fake GitHub the tests and the demo run against speaks REST
(every request checked against GitHub's REST description), and the worker needs no git
credentials, credential helpers or network git. ``bot.adapters.GitHost`` says how a git
transport would fit the same methods.

* ``files(commit)`` walks the contents API at ``ref=<commit>``, directory by directory: path →
  blob SHA. Only regular files: a symlink or a submodule stops it with ``GitHostError``.
* ``blobs(commit, files)`` fetches each distinct blob's base64 content once, a few at a time.
* ``push(...)`` writes a set of file changes as one commit through the Git Data API: ``POST
  git/blobs`` per changed file, ``POST git/trees`` with ``base_tree``, ``POST git/commits`` with
  the parent, then ``PATCH git/refs/heads/<branch>`` (``POST git/refs`` when the branch does
  not exist yet). The parent's tree SHA comes from the caller — the local checkout computes the
  same one GitHub has when every file has mode 100644, which is what the contents API lets us
  reproduce. A repository with executable files or symlinks answers 422 on that ``base_tree``,
  and the push stops with ``GitHostError`` saying so, rather than silently rewriting file modes
  with a full tree.
"""

from __future__ import annotations

import asyncio
import base64
from collections.abc import Mapping
from typing import Any

import gidgethub
from gidgethub.abc import GitHubAPI

from bot.adapters import Changes, GitHostError
from bot.github.forge.refusals import refused, status_of

FILE_MODE = "100644"
_FETCH_CONCURRENCY = 8


class GitData:
    """One repository's refs, trees, blobs and commits (``git/*`` and ``repos/get-content``)."""

    def __init__(self, gh: GitHubAPI, repo: str) -> None:
        self.gh = gh
        self._repo = repo
        self.base = f"/repos/{repo}"

    @property
    def repo(self) -> str:
        return self._repo

    def _contents_url(self) -> str:
        return f"{self.base}/contents/{{+path}}{{?ref}}"

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

    async def files(self, commit: str) -> dict[str, str]:
        """Every file of ``commit`` as path → blob SHA, from directory listings alone."""
        files: dict[str, str] = {}
        pending = [""]
        while pending:
            directory = pending.pop()
            listing = await self.gh.getitem(self._contents_url(),
                                            {"path": directory, "ref": commit})
            if not isinstance(listing, list):
                raise GitHostError(f"{self.repo}: {directory or 'the root'} at {commit} is not "
                                   "a directory")
            for entry in listing:
                kind, path = entry["type"], entry["path"]
                if kind == "dir":
                    pending.append(path)
                elif kind == "file":
                    files[path] = entry["sha"]
                else:
                    raise GitHostError(
                        f"{self.repo}: {path} at {commit} is a {kind}; the REST workspace "
                        "handles regular files only (use a git clone for repositories with "
                        "symlinks or submodules)")
        return files

    async def blobs(self, commit: str, files: Mapping[str, str]) -> dict[str, bytes]:
        """The content of each distinct blob in ``files`` (path → SHA), keyed by blob SHA."""
        by_sha: dict[str, str] = {}
        for path, sha in files.items():
            by_sha.setdefault(sha, path)
        gate = asyncio.Semaphore(_FETCH_CONCURRENCY)

        async def fetch(sha: str, path: str) -> tuple[str, bytes]:
            async with gate:
                item = await self.gh.getitem(self._contents_url(), {"path": path, "ref": commit})
            if item.get("encoding") != "base64":
                raise GitHostError(
                    f"{self.repo}: {path} at {commit} came back as {item.get('encoding')!r}, "
                    "not base64 (files over 1 MB need a git clone)")
            return sha, base64.b64decode(item["content"])

        pairs = await asyncio.gather(*(fetch(sha, path) for sha, path in by_sha.items()))
        return dict(pairs)

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

    async def set_branch(self, branch: str, sha: str, *, force: bool = False) -> None:
        """Point ``branch`` at ``sha``: ``git/update-ref``, or ``git/create-ref`` if missing."""
        if await self.branch_head(branch) is None:
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

    async def push(self, branch: str, *, parent: str, parent_tree: str, changes: Changes,
                   message: str, force: bool = False) -> str:
        """One commit of ``changes`` on ``parent``, and ``branch`` moved to it; its SHA."""
        entries: list[dict[str, Any]] = []
        for path, content in sorted(changes.items()):
            if content is None:
                entries.append({"path": path, "mode": FILE_MODE, "type": "blob", "sha": None})
                continue
            blob = await self.gh.post(f"{self.base}/git/blobs", data={
                "content": base64.b64encode(content).decode(), "encoding": "base64"})
            entries.append({"path": path, "mode": FILE_MODE, "type": "blob",
                            "sha": blob["sha"]})
        try:
            tree = await self.create_tree(entries, base_tree=parent_tree)
        except gidgethub.BadRequest as exc:
            if status_of(exc) != 422:
                raise
            raise GitHostError(
                f"{self.repo}: GitHub does not know the tree of {parent} as the REST workspace "
                "computed it (a file with another mode than 100644?); use a git clone"
            ) from exc
        head = await self.create_commit(tree=tree, parents=[parent], message=message)
        await self.set_branch(branch, head, force=force)
        return head
