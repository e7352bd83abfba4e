"""A content-addressed git object store with the SHAs real git would compute.

Blobs, trees and commits are hashed exactly as ``git hash-object`` does (``<type> <len>\\0`` +
body), so a SHA the fake hands out looks and behaves like GitHub's: the same files give the same
tree, a commit pins its parents and tree. Trees are nested as in git; callers mostly work with
the flat ``{path: blob sha}`` view from :meth:`GitStore.files`, and with :meth:`GitStore.entries`
(``{path: (mode, sha)}``) where a file's mode matters: an executable (``100755``), a symlink
(``120000``, its blob the link's target) or a submodule (``160000``, a commit SHA). Every object
keeps the bytes it was hashed from (:meth:`GitStore.raw`), so ``fakegithub.smarthttp`` can
hand the same objects to real git, and :meth:`GitStore.add_raw` takes objects back from a push.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TypeVar

FILE_MODE = "100644"
EXECUTABLE_MODE = "100755"
SYMLINK_MODE = "120000"
SUBMODULE_MODE = "160000"
TREE_MODE = "040000"

Entry = tuple[str, str]
"""A file's ``(mode, sha)`` in a tree."""


V = TypeVar("V")


def entry_type(mode: str) -> str:
    """The object type a tree entry of ``mode`` names."""
    return {TREE_MODE: "tree", SUBMODULE_MODE: "commit"}.get(mode, "blob")


@dataclass(frozen=True)
class TreeEntry:
    path: str
    mode: str
    type: str
    sha: str


@dataclass(frozen=True)
class Commit:
    sha: str
    tree: str
    parents: tuple[str, ...]
    message: str
    author: str
    email: str
    date: str
    raw: bytes = b""
    """The commit object's body as hashed (``tree …\nparent …\nauthor …``)."""


def object_sha(kind: str, body: bytes) -> str:
    """The git object id of ``body`` stored as ``kind`` (blob, tree, commit)."""
    return hashlib.sha1(f"{kind} {len(body)}\0".encode() + body, usedforsecurity=False).hexdigest()


@dataclass
class GitStore:
    """Objects of one repository, keyed by SHA."""

    blobs: dict[str, bytes] = field(default_factory=dict)
    trees: dict[str, list[TreeEntry]] = field(default_factory=dict)
    commits: dict[str, Commit] = field(default_factory=dict)

    def put_blob(self, content: bytes) -> str:
        sha = object_sha("blob", content)
        self.blobs[sha] = content
        return sha

    def put_tree(self, entries: list[TreeEntry]) -> str:
        # git sorts entries by name, comparing a tree's name as if it ended in "/".
        ordered = sorted(entries, key=lambda e: e.path + ("/" if e.type == "tree" else ""))
        sha = object_sha("tree", _tree_body(ordered))
        self.trees[sha] = ordered
        return sha

    def write_files(self, files: dict[str, str], modes: dict[str, str] | None = None) -> str:
        """Store ``{path: blob sha}`` as nested trees (each file ``100644`` unless ``modes``
        names another); returns the root tree SHA."""
        modes = modes or {}
        return self.write_entries({p: (modes.get(p, FILE_MODE), s) for p, s in files.items()})

    def write_entries(self, entries: dict[str, Entry]) -> str:
        """Store ``{path: (mode, sha)}`` as nested trees; returns the root tree SHA."""
        here: dict[str, Entry] = {}
        below: dict[str, dict[str, Entry]] = {}
        for path, entry in entries.items():
            head, _, rest = path.partition("/")
            if rest:
                below.setdefault(head, {})[rest] = entry
            else:
                here[head] = entry
        made = [TreeEntry(name, mode, entry_type(mode), sha)
                for name, (mode, sha) in here.items()]
        made += [TreeEntry(name, TREE_MODE, "tree", self.write_entries(sub))
                 for name, sub in below.items()]
        return self.put_tree(made)

    def walk(self, tree_sha: str, prefix: str = "") -> list[TreeEntry]:
        """Every entry below a tree, depth first, with full paths (``?recursive=1``)."""
        out: list[TreeEntry] = []
        for entry in self.trees[tree_sha]:
            out.append(TreeEntry(prefix + entry.path, entry.mode, entry.type, entry.sha))
            if entry.type == "tree":
                out.extend(self.walk(entry.sha, f"{prefix}{entry.path}/"))
        return out

    def tree_files(self, tree_sha: str, prefix: str = "") -> dict[str, str]:
        """The flat ``{path: blob sha}`` view of a tree."""
        return {path: sha for path, (_mode, sha) in self.tree_entries(tree_sha, prefix).items()}

    def tree_entries(self, tree_sha: str, prefix: str = "") -> dict[str, Entry]:
        """The flat ``{path: (mode, sha)}`` view of a tree."""
        out: dict[str, Entry] = {}
        for entry in self.trees[tree_sha]:
            if entry.type == "tree":
                out.update(self.tree_entries(entry.sha, f"{prefix}{entry.path}/"))
            else:
                out[prefix + entry.path] = (entry.mode, entry.sha)
        return out

    def put_commit(
        self,
        tree: str,
        parents: list[str],
        message: str,
        *,
        author: str = "octocat",
        email: str = "octocat@example.com",
        date: str = "2026-01-01T00:00:00Z",
        timestamp: int = 1767225600,
    ) -> Commit:
        lines = [f"tree {tree}", *(f"parent {p}" for p in parents)]
        lines += [f"author {author} <{email}> {timestamp} +0000"]
        lines += [f"committer {author} <{email}> {timestamp} +0000", "", message]
        raw = "\n".join(lines).encode()
        sha = object_sha("commit", raw)
        commit = Commit(sha, tree, tuple(parents), message, author, email, date, raw)
        self.commits[sha] = commit
        return commit

    def files(self, commit_sha: str) -> dict[str, str]:
        """``{path: blob sha}`` of a commit's tree."""
        return self.tree_files(self.commits[commit_sha].tree)

    def entries(self, commit_sha: str) -> dict[str, Entry]:
        """``{path: (mode, sha)}`` of a commit's tree."""
        return self.tree_entries(self.commits[commit_sha].tree)

    # -- objects as git stores them ------------------------------------------------------------

    def raw(self, sha: str) -> tuple[str, bytes]:
        """``(type, body)`` of an object, the bytes its SHA was computed from."""
        if sha in self.blobs:
            return "blob", self.blobs[sha]
        if sha in self.trees:
            return "tree", _tree_body(self.trees[sha])
        return "commit", self.commits[sha].raw

    def add_raw(self, kind: str, body: bytes) -> str:
        """Keep an object real git made (one pushed over smart HTTP); its SHA."""
        sha = object_sha(kind, body)
        if kind == "blob":
            self.blobs[sha] = body
        elif kind == "tree":
            self.trees[sha] = _parse_tree(body)
        elif kind == "commit":
            self.commits[sha] = _parse_commit(sha, body)
        else:  # a tag: GitHub keeps it; questbot never reads one
            raise ValueError(f"the fake keeps no {kind} objects")
        return sha

    def read(self, commit_sha: str, path: str) -> bytes | None:
        sha = self.files(commit_sha).get(path)
        return None if sha is None else self.blobs[sha]

    def is_ancestor(self, ancestor: str, descendant: str) -> bool:
        """Whether ``ancestor`` is reachable from ``descendant`` through parents."""
        seen: set[str] = set()
        todo = [descendant]
        while todo:
            sha = todo.pop()
            if sha == ancestor:
                return True
            if sha in seen or sha not in self.commits:
                continue
            seen.add(sha)
            todo.extend(self.commits[sha].parents)
        return False

    def merge_base(self, ours: str, theirs: str) -> str | None:
        """The nearest common ancestor of two commits (first found walking back from theirs)."""
        mine: set[str] = set()
        todo = [ours]
        while todo:
            sha = todo.pop()
            if sha not in mine and sha in self.commits:
                mine.add(sha)
                todo.extend(self.commits[sha].parents)
        queue = [theirs]
        seen: set[str] = set()
        while queue:
            sha = queue.pop(0)
            if sha in mine:
                return sha
            if sha in seen or sha not in self.commits:
                continue
            seen.add(sha)
            queue.extend(self.commits[sha].parents)
        return None

    def merge_entries(self, ours: str, theirs: str) -> dict[str, Entry] | None:
        """A three-way merge of two commits' files, modes included; ``None`` if a path
        changed on both sides."""
        base_sha = self.merge_base(ours, theirs)
        base = self.entries(base_sha) if base_sha else {}
        return three_way(base, self.entries(ours), self.entries(theirs))


def three_way(base: dict[str, V], mine: dict[str, V],
                 other: dict[str, V]) -> dict[str, V] | None:
    """``{path: entry}`` with both sides' changes from ``base``; ``None`` on a conflict."""
    merged: dict[str, V] = {}
    for path in set(base) | set(mine) | set(other):
        b, m, o = base.get(path), mine.get(path), other.get(path)
        if m == o or o == b:
            result = m
        elif m == b:
            result = o
        else:
            return None
        if result is not None:
            merged[path] = result
    return merged


def _tree_body(entries: list[TreeEntry]) -> bytes:
    return b"".join(f"{e.mode.lstrip('0')} {e.path}\0".encode() + bytes.fromhex(e.sha)
                    for e in entries)


def _parse_tree(body: bytes) -> list[TreeEntry]:
    entries: list[TreeEntry] = []
    at = 0
    while at < len(body):
        space = body.index(b" ", at)
        nul = body.index(b"\0", space)
        mode = body[at:space].decode().rjust(6, "0")
        name = body[space + 1:nul].decode("utf-8", errors="surrogateescape")
        entries.append(TreeEntry(name, mode, entry_type(mode), body[nul + 1:nul + 21].hex()))
        at = nul + 21
    return entries


def _parse_commit(sha: str, body: bytes) -> Commit:
    head, _, message = body.partition(b"\n\n")
    tree, parents, author, email, when = "", [], "", "", 0
    for line in head.decode("utf-8", errors="replace").splitlines():
        key, _, value = line.partition(" ")
        if key == "tree":
            tree = value
        elif key == "parent":
            parents.append(value)
        elif key == "author":
            name, _, rest = value.partition(" <")
            address, _, stamp = rest.partition("> ")
            author, email, when = name, address, int(stamp.split()[0])
    date = datetime.fromtimestamp(when, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    return Commit(sha, tree, tuple(parents), message.decode("utf-8", errors="replace"),
                  author, email, date, body)
