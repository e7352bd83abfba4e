"""A repository's git data over GitHub's REST API: the ``GitHost`` the agent works through.

Why REST and not ``git clone``? The worker needs no git credentials, credential helpers or
network git this way; issue 11 moves checkouts and pushes to git over HTTPS, and
``bot.adapters.GitHost`` says how that transport fits the same methods.

* ``files(commit)`` lists the commit's tree in one ``git/get-tree?recursive=1``: path → blob
  SHA. Only regular files: a symlink or a submodule stops it with ``GitHostError``.
* ``blobs(commit, files)`` fetches each distinct blob's base64 content once with
  ``git/get-blob``, a few at a time.
* ``push(...)`` writes a set of file changes as one commit through the Git Data API: ``POST
  git/blobs`` per changed file, ``POST git/trees`` with ``base_tree``, ``POST git/commits`` with
  the parent, then ``PATCH git/refs/heads/<branch>`` (``POST git/refs`` when the branch does
  not exist yet). The parent's tree SHA comes from the caller — the local checkout computes the
  same one GitHub has when every file has mode 100644. A repository with executable files
  answers 422 on that ``base_tree``, and the push stops with ``GitHostError`` saying so,
  rather than silently rewriting file modes with a full tree.
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
_REGULAR_MODES = frozenset({FILE_MODE, "100755"})
"""What the workspace holds as a file; an executable keeps its mode only where the agent does
not change it (a changed file is written as 100644)."""
_FETCH_CONCURRENCY = 8


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

    async def files(self, commit: str) -> dict[str, str]:
        """Every file of ``commit`` as path → blob SHA: ``git/get-tree`` of the commit with
        ``recursive``, one request whatever the repository's size (the contents API lists at
        most 1,000 entries a directory and needs a request per directory). A listing GitHub
        cut short (``truncated``: over 100,000 entries or 7 MB) is walked tree by tree."""
        data = await self.gh.getitem(f"{self.base}/git/trees/{commit}{{?recursive}}",
                                     {"recursive": "1"})
        if not data.get("truncated"):
            return self._regular(commit, data["tree"], "")
        files: dict[str, str] = {}
        pending = [(str(data["sha"]), "")]
        while pending:
            tree, prefix = pending.pop()
            listing = await self.gh.getitem(f"{self.base}/git/trees/{tree}")
            for entry in listing["tree"]:
                if entry["type"] == "tree":
                    pending.append((str(entry["sha"]), f"{prefix}{entry['path']}/"))
            files.update(self._regular(commit, listing["tree"], prefix))
        return files

    def _regular(self, commit: str, entries: list[dict[str, Any]], prefix: str) -> dict[str, str]:
        files: dict[str, str] = {}
        for entry in entries:
            path, kind, mode = prefix + str(entry["path"]), entry["type"], str(entry["mode"])
            if kind == "tree":
                continue
            if kind != "blob" or mode not in _REGULAR_MODES:
                what = {"120000": "symlink", "160000": "submodule"}.get(mode, f"mode {mode}")
                raise GitHostError(
                    f"{self.repo}: {path} at {commit} is a {what}; the REST workspace handles "
                    "regular files only (use a git clone for repositories with symlinks or "
                    "submodules)")
            files[path] = str(entry["sha"])
        return files

    async def blobs(self, commit: str, files: Mapping[str, str]) -> dict[str, bytes]:
        """The content of each distinct blob in ``files`` (path → SHA), keyed by blob SHA:
        ``git/get-blob``, which serves blobs up to 100 MB (the contents API refuses JSON
        past 1 MB with a 403)."""
        gate = asyncio.Semaphore(_FETCH_CONCURRENCY)

        async def fetch(sha: str) -> tuple[str, bytes]:
            async with gate:
                item = await self.gh.getitem(f"{self.base}/git/blobs/{sha}")
            if item.get("encoding") != "base64":
                raise GitHostError(f"{self.repo}: blob {sha} of {commit} came back as "
                                   f"{item.get('encoding')!r}, not base64")
            return sha, base64.b64decode(item["content"])

        pairs = await asyncio.gather(*(fetch(sha) for sha in sorted(set(files.values()))))
        return dict(pairs)

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
