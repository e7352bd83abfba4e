"""Getting a commit's files onto disk, and a change back onto the quest branch, over REST only.

Why not ``git clone``? In production a real clone (with a short-lived installation token as the
password) is the natural way, and it would replace ``materialise`` and ``proof_repository``
here. We go through the REST API instead for two reasons: the fake GitHub the tests and the
demo run against speaks only REST (every request checked against the REST description), so a
git remote would be the one part of the product the fake cannot hold honest; and the worker
needs no git credentials, credential helpers or network git at all.

The three directions:

* ``materialise(gh, repo, sha, dest)`` walks the contents API at ``ref=<sha>`` (directory
  listings, then each file's base64 content, each distinct blob fetched once) and commits the
  files into a fresh local repository. Local git computes the same blob SHAs GitHub does, so
  every file is checked against the SHA GitHub listed: what the agent reads is what GitHub has.
* ``push_change(...)`` writes a set of file changes as one commit through the Git Data API:
  ``POST git/blobs`` per changed file, ``POST git/trees`` with ``base_tree``, ``POST
  git/commits`` with the parent, then ``PATCH git/refs/heads/quest/<id>`` (``POST git/refs``
  when the branch does not exist yet). The REST subset has no ``GET git/commits``, so the
  parent's tree SHA is the one the local checkout computes: identical to GitHub's when every
  file has mode 100644, which is what the contents API lets us reproduce. A repository with
  executable files or symlinks answers 422 on that ``base_tree`` and the push stops with a
  ``WorkspaceError`` saying so, rather than silently rewriting file modes with a full tree.
* ``proof_repository(...)`` builds one local repository holding the base (optionally with the
  reproduction's files laid over it) and the head as two commits, so ``bot.agent.proof_runner``
  can run checks at the head and the reproduction at the base. Its bundle then names local
  SHAs; ``rebind`` swaps in the GitHub SHAs and the digest is recomputed from the new bundle.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from gidgethub import BadRequest

from bot.agent.errors import AgentError
from bot.agent.validation import lexical_path_problem
from bot.core.proof import ProofBundle

FILE_MODE = "100644"
LOCAL_JUNK = "__pycache__/\n*.py[co]\n.pytest_cache/\n.mypy_cache/\n.ruff_cache/\n"
"""Never part of a change: what running Python checks in a checkout leaves behind."""
_FETCH_CONCURRENCY = 8
_IDENTITY = ("-c", "user.name=questbot", "-c", "user.email=questbot@users.noreply.github.com")
_SAFE_GIT = ("-c", "core.hooksPath=/dev/null", "-c", "commit.gpgsign=false",
             "-c", "core.autocrlf=false", "-c", "init.defaultBranch=main")  # fmt: skip


class WorkspaceError(AgentError):
    """A commit could not be materialised, or a change could not be pushed."""


Changes = Mapping[str, bytes | None]
"""Path → new content, or ``None`` to delete the path."""


@dataclass(frozen=True, slots=True)
class Checkout:
    """A local git repository whose one commit holds the tree of GitHub commit ``commit``."""

    path: Path
    commit: str
    local_commit: str
    files: Mapping[str, str]
    """Path → blob SHA, as GitHub listed them (and as local git computed them)."""


@dataclass(frozen=True, slots=True)
class ProofRepository:
    """Base (plus overlay) and head of a quest as two local commits, for the proof runner."""

    path: Path
    base: str
    head: str
    local_base: str
    local_head: str
    head_files: Mapping[str, str]


GIT_TIMEOUT_SECONDS = 300.0
"""No local git command of a workspace takes minutes; one that does is stuck, not slow."""


async def git(repo: Path, *args: str, stdin: bytes | None = None) -> str:
    """Run git in ``repo`` without blocking the event loop; raise ``WorkspaceError`` on failure."""
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "GIT_CONFIG_NOSYSTEM": "1"}
    process = await asyncio.create_subprocess_exec(
        "git", *_SAFE_GIT, *_IDENTITY, *args, cwd=repo, env=env,
        stdin=asyncio.subprocess.PIPE if stdin is not None else asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    try:
        out, err = await asyncio.wait_for(process.communicate(stdin), GIT_TIMEOUT_SECONDS)
    except TimeoutError:
        with contextlib.suppress(ProcessLookupError):
            process.kill()
        raise WorkspaceError(f"git {' '.join(args[:3])} in {repo} took longer than "
                             f"{GIT_TIMEOUT_SECONDS:g} s and was killed") from None
    if process.returncode != 0:
        detail = err.decode(errors="replace").strip()
        raise WorkspaceError(f"git {' '.join(args[:3])} failed in {repo}: {detail}")
    return out.decode(errors="replace").strip()


def _contents_url(repo: str) -> str:
    return f"/repos/{repo}/contents/{{+path}}{{?ref}}"


async def list_files(gh: Any, repo: str, ref: str) -> dict[str, str]:
    """Every file of commit ``ref`` as path → blob SHA, from directory listings alone."""
    files: dict[str, str] = {}
    pending = [""]
    while pending:
        directory = pending.pop()
        listing = await gh.getitem(_contents_url(repo), {"path": directory, "ref": ref})
        if not isinstance(listing, list):
            raise WorkspaceError(f"{repo}: {directory or 'the root'} at {ref} is not a directory")
        for entry in listing:
            kind, path = entry["type"], entry["path"]
            if kind == "dir":
                pending.append(path)
            elif kind == "file":
                files[path] = entry["sha"]
            else:
                raise WorkspaceError(
                    f"{repo}: {path} at {ref} is a {kind}; the REST workspace handles regular "
                    "files only (use a git clone for repositories with symlinks or submodules)"
                )
    return files


async def fetch_blobs(gh: Any, repo: str, ref: str, files: Mapping[str, str]) -> dict[str, bytes]:
    """The content of each distinct blob in ``files`` (path → SHA), keyed by blob SHA."""
    by_sha: dict[str, str] = {}
    for path, sha in files.items():
        by_sha.setdefault(sha, path)
    gate = asyncio.Semaphore(_FETCH_CONCURRENCY)

    async def fetch(sha: str, path: str) -> tuple[str, bytes]:
        async with gate:
            item = await gh.getitem(_contents_url(repo), {"path": path, "ref": ref})
        if item.get("encoding") != "base64":
            raise WorkspaceError(
                f"{repo}: {path} at {ref} came back as {item.get('encoding')!r}, not base64 "
                "(files over 1 MB need a git clone)"
            )
        return sha, base64.b64decode(item["content"])

    pairs = await asyncio.gather(*(fetch(sha, path) for sha, path in by_sha.items()))
    return dict(pairs)


def _safe_path(path: str) -> PurePosixPath:
    problem = lexical_path_problem(path)
    if problem is not None:
        raise WorkspaceError(f"refusing path {path!r}: {problem}")
    return PurePosixPath(path)


def _write_tree(root: Path, files: Mapping[str, str], blobs: Mapping[str, bytes]) -> None:
    for path, sha in files.items():
        target = root / _safe_path(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(blobs[sha])


async def _clear_tree(root: Path) -> None:
    await git(root, "rm", "-r", "-q", "--ignore-unmatch", "--", ".")


async def _commit_all(root: Path, message: str) -> str:
    await git(root, "add", "-A")
    await git(root, "commit", "-q", "--allow-empty", "--no-verify", "-m", message)
    return await git(root, "rev-parse", "HEAD")


async def _local_blobs(root: Path, rev: str) -> dict[str, str]:
    listing = await git(root, "ls-tree", "-r", "-z", "--full-tree", rev)
    out: dict[str, str] = {}
    for record in filter(None, listing.split("\0")):
        meta, path = record.split("\t", 1)
        out[path] = meta.split()[2]
    return out


async def materialise(gh: Any, repo: str, sha: str, dest: Path) -> Checkout:
    """A fresh local repository at ``dest`` whose one commit holds GitHub commit ``sha``."""
    files = await list_files(gh, repo, sha)
    blobs = await fetch_blobs(gh, repo, sha, files)
    dest.mkdir(parents=True, exist_ok=True)
    await git(dest, "init", "-q")
    (dest / ".git" / "info").mkdir(parents=True, exist_ok=True)
    (dest / ".git" / "info" / "exclude").write_text(LOCAL_JUNK)
    _write_tree(dest, files, blobs)
    local = await _commit_all(dest, f"{repo}@{sha}")
    got = await _local_blobs(dest, local)
    if got != dict(files):
        wrong = sorted(p for p in set(got) | set(files) if got.get(p) != files.get(p))
        raise WorkspaceError(f"{repo}@{sha}: local blobs differ from GitHub's for {wrong[:5]}")
    return Checkout(path=dest, commit=sha, local_commit=local, files=dict(files))


async def changes_in(checkout: Checkout) -> dict[str, bytes | None]:
    """What was changed in the checkout's working tree since its commit (``None``: deleted)."""
    root = checkout.path
    await git(root, "add", "-A")
    listing = await git(root, "diff", "--cached", "--name-status", "-z", "--no-renames",
                        checkout.local_commit)  # fmt: skip
    fields = [f for f in listing.split("\0") if f]
    changes: dict[str, bytes | None] = {}
    for status, path in zip(fields[::2], fields[1::2], strict=True):
        _safe_path(path)
        changes[path] = None if status.startswith("D") else (root / path).read_bytes()
    return changes


def apply_changes(checkout: Checkout, changes: Changes) -> None:
    """Write ``changes`` into the checkout's working tree (for agents that return contents)."""
    for path, content in changes.items():
        target = checkout.path / _safe_path(path)
        if content is None:
            target.unlink(missing_ok=True)
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(content)


async def _ref_sha(gh: Any, repo: str, branch: str) -> str | None:
    try:
        ref = await gh.getitem(f"/repos/{repo}/git/ref/heads/{{+branch}}", {"branch": branch})
    except BadRequest as exc:
        if exc.status_code == 404:
            return None
        raise
    sha: str = ref["object"]["sha"]
    return sha


async def branch_head(gh: Any, repo: str, branch: str) -> str | None:
    """The commit ``branch`` points at on GitHub, or ``None`` when there is no such branch."""
    return await _ref_sha(gh, repo, branch)


async def push_change(gh: Any, repo: str, *, branch: str, parent: Checkout, changes: Changes,
                      message: str, force: bool = False) -> str:
    """Commit ``changes`` on top of ``parent`` as one commit on ``branch``; the new head SHA."""
    if not changes:
        raise WorkspaceError(f"nothing to push to {branch}: the change is empty")
    base_tree = await git(parent.path, "rev-parse", f"{parent.local_commit}^{{tree}}")
    entries: list[dict[str, Any]] = []
    for path, content in sorted(changes.items()):
        _safe_path(path)
        if content is None:
            entries.append({"path": path, "mode": FILE_MODE, "type": "blob", "sha": None})
            continue
        blob = await gh.post(f"/repos/{repo}/git/blobs", data={
            "content": base64.b64encode(content).decode(), "encoding": "base64"})
        entries.append({"path": path, "mode": FILE_MODE, "type": "blob", "sha": blob["sha"]})
    try:
        tree = await gh.post(f"/repos/{repo}/git/trees",
                             data={"base_tree": base_tree, "tree": entries})
    except BadRequest as exc:
        if exc.status_code != 422:
            raise
        raise WorkspaceError(
            f"{repo}: GitHub does not know the tree of {parent.commit} as the REST workspace "
            "computed it (a file with another mode than 100644?); use a git clone"
        ) from exc
    commit = await gh.post(f"/repos/{repo}/git/commits", data={
        "message": message, "tree": tree["sha"], "parents": [parent.commit]})
    head: str = commit["sha"]
    if await _ref_sha(gh, repo, branch) is None:
        await gh.post(f"/repos/{repo}/git/refs",
                      data={"ref": f"refs/heads/{branch}", "sha": head})
    else:
        await gh.patch(f"/repos/{repo}/git/refs/heads/{{+branch}}", {"branch": branch},
                       data={"sha": head, "force": force})
    return head


async def proof_repository(gh: Any, repo: str, *, base: str, head: str, dest: Path,
                           overlay: Mapping[str, str] | None = None,
                           overlay_ref: str | None = None) -> ProofRepository:
    """Base and head of ``repo`` as two commits of one local repository at ``dest``.

    ``overlay`` (path → blob SHA in ``overlay_ref``) is laid over the base: the reproduction's
    files, so the reproduction runs against the base's code rather than failing for want of
    its own test file.
    """
    base_files = await list_files(gh, repo, base)
    head_files = await list_files(gh, repo, head)
    base_blobs = await fetch_blobs(gh, repo, base, base_files)
    missing = {p: s for p, s in head_files.items() if s not in base_blobs}
    head_blobs = {**base_blobs, **await fetch_blobs(gh, repo, head, missing)}
    extra = {p: s for p, s in (overlay or {}).items() if s not in head_blobs}
    if extra:
        head_blobs.update(await fetch_blobs(gh, repo, overlay_ref or head, extra))
    dest.mkdir(parents=True, exist_ok=True)
    await git(dest, "init", "-q")
    _write_tree(dest, {**base_files, **(overlay or {})}, head_blobs)
    local_base = await _commit_all(dest, f"base {base}" + (" + reproduction" if overlay else ""))
    await _clear_tree(dest)
    _write_tree(dest, head_files, head_blobs)
    local_head = await _commit_all(dest, f"head {head}")
    return ProofRepository(path=dest, base=base, head=head, local_base=local_base,
                           local_head=local_head, head_files=head_files)


def rebind(bundle: ProofBundle, *, base: str, head: str) -> ProofBundle:
    """The bundle naming GitHub's ``base`` and ``head`` instead of the local commits."""
    return ProofBundle.model_validate({**bundle.as_json(), "base": base, "head": head})
