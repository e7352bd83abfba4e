"""Getting a commit onto disk, and a change back onto the quest branch, through a host.

The agent reaches the repository only through a ``bot.adapters.GitHost`` (today git's smart
HTTP to GitHub, ``bot.github.gitremote``); everything here is local git work around it, in
ordinary git repositories that never hold a credential:

* ``materialise(host, sha, dest)`` has the host fetch the commit (its tree and blobs, not its
  history) into a local repository at ``dest`` and checks it out: the files are git's own,
  modes, executables, symlinks and large files included. A repository already at ``dest``
  (another commit of the same run was fetched there) is reused, and the host sends only what
  it lacks.
* ``push_change(host, ...)`` makes one commit of a set of file changes on top of the
  checkout's commit — built in a separate index from the commit's tree, so exactly the changes
  and nothing a check left in the working tree; each changed file with the mode it has on disk
  (executable, symlink) — and has the host push it to the quest branch. The commit names the
  effect it was pushed for in a ``Questbot-Effect: <key>`` trailer. Pushed once per effect:
  before it pushes, it notes the push (``PushNotes``: the branch, the parent and every file of
  the commit's tree), so a run of the same effect after a crash between the branch update and
  the run's outcome memo finds its commit — the branch's head, holding exactly the noted files
  — and reports it instead of pushing again (``earlier_push``).
* ``proof_repository(host, ...)`` brings the base and the head into one local repository, with
  the base optionally overlaid by the reproduction's files as a local commit, so
  ``bot.agent.proof_runner`` can run checks at the head and the reproduction at the base. Its
  bundle may name a local SHA; ``rebind`` swaps in the repository's SHAs and the digest is
  recomputed from the new bundle.

Writing into a checkout never follows a symlink: a change to a path that is a link replaces
the link, and a path below a linked directory is refused (a repository's symlink may point
anywhere on the worker's disk).
"""

from __future__ import annotations

import hashlib
import logging
import os
import stat
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Protocol

from bot.adapters import Changes, GitHost
from bot.agent.errors import AgentError
from bot.agent.validation import lexical_path_problem
from bot.core.proof import ProofBundle
from bot.errors import PermanentError
from bot.gitrun import GIT_TIMEOUT_SECONDS, run_git

log = logging.getLogger(__name__)

EFFECT_TRAILER = "Questbot-Effect"
"""The commit-message trailer naming the effect a commit was pushed for."""
LOCAL_JUNK = "__pycache__/\n*.py[co]\n.pytest_cache/\n.mypy_cache/\n.ruff_cache/\n"
"""Never part of a change: what running Python checks in a checkout leaves behind."""
_IDENTITY = ("-c", "user.name=questbot", "-c", "user.email=questbot@users.noreply.github.com")
FILE_MODE, EXECUTABLE_MODE, SYMLINK_MODE = "100644", "100755", "120000"


class WorkspaceError(AgentError, PermanentError):
    """A commit could not be materialised, or a change could not be pushed."""


@dataclass(frozen=True, slots=True)
class Checkout:
    """A local git repository with the repository's commit ``commit`` checked out."""

    path: Path
    commit: str
    local_commit: str
    """The commit the working tree was checked out from: ``commit`` itself."""
    files: Mapping[str, str]
    """Path → blob SHA (a submodule's commit SHA) of every file of the commit."""


@dataclass(frozen=True, slots=True)
class ProofRepository:
    """Base (plus overlay) and head of a quest in one local repository, for the proof runner."""

    path: Path
    base: str
    head: str
    local_base: str
    local_head: str
    head_files: Mapping[str, str]


async def git(repo: Path, *args: str, stdin: bytes | None = None,
              env: Mapping[str, str] | None = None) -> str:
    """Run git in ``repo`` without blocking the event loop; raise ``WorkspaceError`` on failure."""
    run = await run_git(repo, *_IDENTITY, *args, stdin=stdin, env=env)
    if run.code is None:
        raise WorkspaceError(f"git {' '.join(args[:3])} in {repo} took longer than "
                             f"{GIT_TIMEOUT_SECONDS:g} s and was killed")
    if not run.ok:
        raise WorkspaceError(f"git {' '.join(args[:3])} failed in {repo}: {run.err}")
    return run.text


def _safe_path(path: str) -> PurePosixPath:
    problem = lexical_path_problem(path)
    if problem is not None:
        raise WorkspaceError(f"refusing path {path!r}: {problem}")
    return PurePosixPath(path)


async def local_repository(dest: Path) -> Path:
    """A local git repository at ``dest``: the one there, or a fresh one."""
    if not (dest / ".git").is_dir():
        dest.mkdir(parents=True, exist_ok=True)
        await git(dest, "init", "-q")
        (dest / ".git" / "info").mkdir(parents=True, exist_ok=True)
        (dest / ".git" / "info" / "exclude").write_text(LOCAL_JUNK)
    return dest


async def tree_files(root: Path, rev: str) -> dict[str, str]:
    """Path → object SHA of every file of ``rev`` (a symlink's blob, a submodule's commit)."""
    return {path: sha for path, (_mode, sha) in (await tree_entries(root, rev)).items()}


async def tree_entries(root: Path, rev: str) -> dict[str, tuple[str, str]]:
    """Path → (mode, object SHA) of every file of ``rev``."""
    listing = await git(root, "ls-tree", "-r", "-z", "--full-tree", rev)
    out: dict[str, tuple[str, str]] = {}
    for record in filter(None, listing.split("\0")):
        meta, path = record.split("\t", 1)
        mode, _kind, sha = meta.split()
        out[path] = (mode, sha)
    return out


async def materialise(host: GitHost, sha: str, dest: Path) -> Checkout:
    """The host's commit ``sha`` checked out in a local repository at ``dest``."""
    await local_repository(dest)
    await host.fetch(dest, [sha])
    await git(dest, "checkout", "-q", "--force", "--detach", sha)
    await git(dest, "clean", "-q", "-d", "-f", "-x")  # a reused repository: only the commit
    return Checkout(path=dest, commit=sha, local_commit=sha, files=await tree_files(dest, sha))


async def changes_in(checkout: Checkout) -> dict[str, bytes | None]:
    """What was changed in the checkout's working tree since its commit (``None``: deleted;
    a symlink's content is its target, never what it points at)."""
    root = checkout.path
    await git(root, "add", "-A")
    listing = await git(root, "diff", "--cached", "--name-status", "-z", "--no-renames",
                        checkout.local_commit)  # fmt: skip
    fields = [f for f in listing.split("\0") if f]
    changes: dict[str, bytes | None] = {}
    for status, path in zip(fields[::2], fields[1::2], strict=True):
        changes[path] = None if status.startswith("D") else _read(root, path)
    return changes


async def changed_paths(root: Path) -> list[str]:
    """The paths changed in the working tree of the repository at ``root`` since its ``HEAD``
    (the commit it was checked out at), without reading any of them."""
    await git(root, "add", "-A")
    listing = await git(root, "diff", "--cached", "--name-only", "-z", "--no-renames", "HEAD")
    return [path for path in listing.split("\0") if path]


def _inside(root: Path, path: str) -> Path:
    """``root / path`` with no symbolic link on the way to it (the last part may be one).

    The checkout was writable to sandboxed code (an agent, the checks), and the worker reads
    and writes it afterwards unconfined: a link planted there must never take a worker read
    or write outside it — the App's key pushed as a "change", a file written into the
    worker's own code."""
    target = root / _safe_path(path)
    walked = root
    for part in target.relative_to(root).parts[:-1]:
        walked = walked / part
        if walked.is_symlink():
            raise WorkspaceError(f"refusing path {path!r}: {walked.relative_to(root)} is a "
                                 "symbolic link")
    return target


def _read(root: Path, path: str) -> bytes:
    """What git stores for the changed file at ``path``: a symbolic link's target (the link
    is read, never followed), a regular file's bytes (opened without following a link)."""
    target = _inside(root, path)
    if target.is_symlink():
        return os.fsencode(os.readlink(target))
    try:
        fd = os.open(target, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError as exc:
        raise WorkspaceError(f"the change to {path!r} cannot be read ({exc.strerror})") from None
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            raise WorkspaceError(f"the change makes {path!r} something other than a file or a "
                                 "symbolic link; questbot pushes files and links only")
        return handle.read()


def apply_changes(checkout: Checkout, changes: Changes) -> None:
    """Write ``changes`` into the checkout's working tree (for agents that return contents).

    A symbolic link where a file is written is replaced by the file, never followed."""
    for path, content in changes.items():
        target = _inside(checkout.path, path)
        if content is None or target.is_symlink():
            target.unlink(missing_ok=True)
        if content is not None:
            target.parent.mkdir(parents=True, exist_ok=True)
            _inside(checkout.path, path)  # mkdir made only directories; check them again
            fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o644)
            with os.fdopen(fd, "wb") as handle:
                handle.write(content)


@dataclass(frozen=True, slots=True)
class NotedPush:
    """A push an effect's run is about to make, noted before it is made."""

    branch: str
    parent: str
    """The commit it is made on."""
    files: Mapping[str, str]
    """Every file of the tree it makes, path → blob SHA."""


class PushNotes(Protocol):
    """Where one effect's runs note their push (``bot.agent.runs`` keeps it in Redis)."""

    async def noted(self) -> NotedPush | None: ...

    async def note(self, push: NotedPush) -> None: ...


def blob_sha(data: bytes) -> str:
    """The SHA git names a blob of ``data`` by, as every host does."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()


async def earlier_push(host: GitHost, notes: PushNotes,
                       repo: Path) -> tuple[NotedPush, str] | None:
    """The push an earlier run of the same effect made, with the commit it made: the noted
    push, when the branch's head holds exactly its files (read by fetching the head into the
    local repository ``repo``). ``None`` when nothing was noted, or the push never happened,
    or someone pushed over it since."""
    noted = await notes.noted()
    if noted is None:
        return None
    head = await host.branch_head(noted.branch)
    if head is None:
        return None
    await local_repository(repo)
    await host.fetch(repo, [head])
    if await tree_files(repo, head) != dict(noted.files):
        return None
    return noted, head


def _mode(target: Path, parent_mode: str | None) -> str:
    """The mode a changed file is committed with: as it is on disk (a symlink, an executable,
    a file), or as it was in the parent when the change never touched the disk."""
    try:
        info = target.lstat()
    except FileNotFoundError:
        return parent_mode if parent_mode in (EXECUTABLE_MODE, SYMLINK_MODE) else FILE_MODE
    if stat.S_ISLNK(info.st_mode):
        return SYMLINK_MODE
    return EXECUTABLE_MODE if info.st_mode & stat.S_IXUSR else FILE_MODE


async def commit_changes(checkout: Checkout, changes: Changes, message: str) -> str:
    """One local commit of ``changes`` on the checkout's commit: its SHA. Built in an index of
    its own from the commit's tree, so it holds the changes and nothing else."""
    root = checkout.path
    index = {"GIT_INDEX_FILE": str(root / ".git" / "questbot-change.index")}
    parent = await tree_entries(root, checkout.commit)
    await git(root, "read-tree", checkout.commit, env=index)
    lines: list[str] = []
    for path, content in sorted(changes.items()):
        if content is None:
            lines.append(f"0 {'0' * 40}\t{path}")
            continue
        sha = await git(root, "hash-object", "-w", "--stdin", stdin=content)
        mode = _mode(root / _safe_path(path), parent.get(path, ("", ""))[0])
        lines.append(f"{mode} {sha}\t{path}")
    await git(root, "update-index", "-z", "--index-info",
              stdin="".join(f"{line}\0" for line in lines).encode(), env=index)
    tree = await git(root, "write-tree", env=index)
    return await git(root, "commit-tree", tree, "-p", checkout.commit, "-F", "-",
                     stdin=message.encode())


async def push_change(host: GitHost, *, branch: str, parent: Checkout, changes: Changes,
                      message: str, effect_key: str | None = None,
                      notes: PushNotes | None = None) -> str:
    """Commit ``changes`` on top of ``parent`` as one commit on ``branch``; the new head SHA.

    The branch only moves forward: ``parent`` is its head (the caller checks it out), and a
    head that moved since — a person pushed — makes the host refuse the push rather than drop
    their commit. With ``notes`` (and the ``effect_key`` the commit is for), once per effect: a
    push an earlier run of the effect made that holds the same files on the same parent is
    reported, not made again; one that holds other files (an agent that answered otherwise
    this time) is replaced — that commit of questbot's own and nothing else, checked as the
    branch moves — so the branch holds what this run reports."""
    if not changes:
        raise WorkspaceError(f"nothing to push to {branch}: the change is empty")
    for path in changes:
        _safe_path(path)
    if effect_key is not None:
        message = f"{message.rstrip()}\n\n{EFFECT_TRAILER}: {effect_key}"
    commit = await commit_changes(parent, changes, message)
    replacing: str | None = None
    if notes is not None:
        files = await tree_files(parent.path, commit)
        earlier = await earlier_push(host, notes, parent.path)
        if earlier is not None:
            noted, head = earlier
            if noted.branch == branch and noted.parent == parent.commit and (
                    dict(noted.files) == files):
                log.info("%s: the push for %s was made before (%s); not pushing it again",
                         host.repo, effect_key, head[:12])
                return head
            log.warning("%s: replacing %s, pushed for %s by an earlier run, with this run's "
                        "change", host.repo, head[:12], effect_key)
            replacing = head
        await notes.note(NotedPush(branch=branch, parent=parent.commit, files=files))
    await host.push(parent.path, commit, branch, replacing=replacing)
    return commit


async def proof_repository(host: GitHost, *, base: str, head: str, dest: Path,
                           overlay: Mapping[str, str] | None = None,
                           overlay_ref: str | None = None) -> ProofRepository:
    """Base and head of the repository in one local repository at ``dest`` (reused if there).

    ``overlay`` (path → blob SHA in ``overlay_ref``) is laid over the base as a local commit:
    the reproduction's files, so the reproduction runs against the base's code rather than
    failing for want of its own test file.
    """
    await local_repository(dest)
    wanted: Sequence[str] = [base, head] + ([overlay_ref] if overlay and overlay_ref else [])
    await host.fetch(dest, wanted)
    local_base = base
    if overlay:
        modes = await tree_entries(dest, overlay_ref or head) if overlay_ref else {}
        for path in overlay:
            _safe_path(path)
        index = {"GIT_INDEX_FILE": str(dest / ".git" / "questbot-proof.index")}
        await git(dest, "read-tree", base, env=index)
        info = "".join(f"{modes.get(p, (FILE_MODE, ''))[0]} {sha}\t{p}\0"
                       for p, sha in sorted(overlay.items()))
        await git(dest, "update-index", "-z", "--index-info", stdin=info.encode(), env=index)
        tree = await git(dest, "write-tree", env=index)
        local_base = await git(dest, "commit-tree", tree, "-p", base, "-m",
                               f"base {base} + reproduction")
    return ProofRepository(path=dest, base=base, head=head, local_base=local_base,
                           local_head=head, head_files=await tree_files(dest, head))


def rebind(bundle: ProofBundle, *, base: str, head: str) -> ProofBundle:
    """The bundle naming the repository's ``base`` and ``head`` instead of the local commits."""
    return ProofBundle.model_validate({**bundle.as_json(), "base": base, "head": head})
