"""Getting a commit's files onto disk, and a change back onto the quest branch, through a host.

The agent reaches the repository only through a ``bot.adapters.GitHost`` (today GitHub's REST
API, ``bot.github.forge.git``); everything here is local git work around it:

* ``materialise(host, sha, dest)`` asks the host for the commit's files (path → blob SHA) and
  their contents, and commits them into a fresh local repository. Local git computes the same
  blob SHAs the host does, so every file is checked against the SHA the host listed: what the
  agent reads is what the repository has.
* ``push_change(host, ...)`` hands a set of file changes to the host as one commit on the quest
  branch, on top of the checkout's commit, with the parent's tree SHA as the local checkout
  computed it (the host needs it to build the new tree; identical to GitHub's for the regular
  files the REST host can hold). The commit names the effect it was pushed for in a
  ``Questbot-Effect: <key>`` trailer. Pushed once per effect: before it pushes, it notes the
  push (``PushNotes``: the branch, the parent and every file of the tree it is about to make),
  so a run of the same effect after a crash between the branch update and the run's outcome
  memo finds its commit — the branch's head, holding exactly the noted files — and reports it
  instead of pushing again (``earlier_push``).
* ``proof_repository(host, ...)`` builds one local repository holding the base (optionally with
  the reproduction's files laid over it) and the head as two commits, so
  ``bot.agent.proof_runner`` can run checks at the head and the reproduction at the base. Its
  bundle then names local SHAs; ``rebind`` swaps in the repository's SHAs and the digest is
  recomputed from the new bundle.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import os
import stat
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Protocol

from bot.adapters import Changes, GitHost
from bot.agent.errors import AgentError
from bot.agent.validation import lexical_path_problem
from bot.core.proof import ProofBundle
from bot.errors import PermanentError

log = logging.getLogger(__name__)

EFFECT_TRAILER = "Questbot-Effect"
"""The commit-message trailer naming the effect a commit was pushed for."""
LOCAL_JUNK = "__pycache__/\n*.py[co]\n.pytest_cache/\n.mypy_cache/\n.ruff_cache/\n"
"""Never part of a change: what running Python checks in a checkout leaves behind."""
_IDENTITY = ("-c", "user.name=questbot", "-c", "user.email=questbot@users.noreply.github.com")
_SAFE_GIT = ("-c", "core.hooksPath=/dev/null", "-c", "commit.gpgsign=false",
             "-c", "core.autocrlf=false", "-c", "init.defaultBranch=main")  # fmt: skip


class WorkspaceError(AgentError, PermanentError):
    """A commit could not be materialised, or a change could not be pushed."""


@dataclass(frozen=True, slots=True)
class Checkout:
    """A local git repository whose one commit holds the tree of the repository's commit
    ``commit``."""

    path: Path
    commit: str
    local_commit: str
    files: Mapping[str, str]
    """Path → blob SHA, as the host listed them (and as local git computed them)."""


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


async def materialise(host: GitHost, sha: str, dest: Path) -> Checkout:
    """A fresh local repository at ``dest`` whose one commit holds the host's commit ``sha``."""
    repo = host.repo
    files = await host.files(sha)
    blobs = await host.blobs(sha, files)
    dest.mkdir(parents=True, exist_ok=True)
    await git(dest, "init", "-q")
    (dest / ".git" / "info").mkdir(parents=True, exist_ok=True)
    (dest / ".git" / "info" / "exclude").write_text(LOCAL_JUNK)
    _write_tree(dest, files, blobs)
    local = await _commit_all(dest, f"{repo}@{sha}")
    got = await _local_blobs(dest, local)
    if got != dict(files):
        wrong = sorted(p for p in set(got) | set(files) if got.get(p) != files.get(p))
        raise WorkspaceError(f"{repo}@{sha}: local blobs differ from the host's for {wrong[:5]}")
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
        changes[path] = None if status.startswith("D") else _read_regular(root, path)
    return changes


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


def _read_regular(root: Path, path: str) -> bytes:
    target = _inside(root, path)
    try:
        fd = os.open(target, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError as exc:
        raise WorkspaceError(f"the change to {path!r} cannot be read ({exc.strerror}); "
                             "questbot pushes regular files only, not symbolic links") from None
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            raise WorkspaceError(f"the change makes {path!r} something other than a regular "
                                 "file; questbot pushes regular files only")
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


def files_after(parent: Checkout, changes: Changes) -> dict[str, str]:
    """The files (path → blob SHA) of ``parent``'s commit with ``changes`` made."""
    files = dict(parent.files)
    for path, content in changes.items():
        if content is None:
            files.pop(path, None)
        else:
            files[path] = blob_sha(content)
    return files


async def earlier_push(host: GitHost, notes: PushNotes) -> tuple[NotedPush, str] | None:
    """The push an earlier run of the same effect made, with the commit it made: the noted
    push, when the branch's head holds exactly its files. ``None`` when nothing was noted, or
    the push never happened, or someone pushed over it since."""
    noted = await notes.noted()
    if noted is None:
        return None
    head = await host.branch_head(noted.branch)
    if head is None or await host.files(head) != dict(noted.files):
        return None
    return noted, head


async def push_change(host: GitHost, *, branch: str, parent: Checkout, changes: Changes,
                      message: str, force: bool = False, effect_key: str | None = None,
                      notes: PushNotes | None = None) -> str:
    """Commit ``changes`` on top of ``parent`` as one commit on ``branch``; the new head SHA.

    With ``notes`` (and the ``effect_key`` the commit is for), once per effect: a push an
    earlier run of the effect made that holds the same files on the same parent is reported,
    not made again; one that holds other files (an agent that answered otherwise this time)
    is replaced, so the branch holds what this run reports."""
    if not changes:
        raise WorkspaceError(f"nothing to push to {branch}: the change is empty")
    for path in changes:
        _safe_path(path)
    if effect_key is not None:
        message = f"{message.rstrip()}\n\n{EFFECT_TRAILER}: {effect_key}"
    if notes is not None:
        files = files_after(parent, changes)
        earlier = await earlier_push(host, notes)
        if earlier is not None:
            noted, head = earlier
            if noted.branch == branch and noted.parent == parent.commit and (
                    dict(noted.files) == files):
                log.info("%s: the push for %s was made before (%s); not pushing it again",
                         host.repo, effect_key, head[:12])
                return head
            log.warning("%s: replacing %s, pushed for %s by an earlier run, with this run's "
                        "change", host.repo, head[:12], effect_key)
            force = True
        await notes.note(NotedPush(branch=branch, parent=parent.commit, files=files))
    parent_tree = await git(parent.path, "rev-parse", f"{parent.local_commit}^{{tree}}")
    return await host.push(branch, parent=parent.commit, parent_tree=parent_tree,
                           changes=changes, message=message, force=force)


async def proof_repository(host: GitHost, *, base: str, head: str, dest: Path,
                           overlay: Mapping[str, str] | None = None,
                           overlay_ref: str | None = None) -> ProofRepository:
    """Base and head of ``repo`` as two commits of one local repository at ``dest``.

    ``overlay`` (path → blob SHA in ``overlay_ref``) is laid over the base: the reproduction's
    files, so the reproduction runs against the base's code rather than failing for want of
    its own test file.
    """
    base_files = await host.files(base)
    head_files = await host.files(head)
    base_blobs = await host.blobs(base, base_files)
    missing = {p: s for p, s in head_files.items() if s not in base_blobs}
    head_blobs = {**base_blobs, **await host.blobs(head, missing)}
    extra = {p: s for p, s in (overlay or {}).items() if s not in head_blobs}
    if extra:
        head_blobs.update(await host.blobs(overlay_ref or head, extra))
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
    """The bundle naming the repository's ``base`` and ``head`` instead of the local commits."""
    return ProofBundle.model_validate({**bundle.as_json(), "base": base, "head": head})
