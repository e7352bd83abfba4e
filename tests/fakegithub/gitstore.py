"""A content-addressed git object store with the SHAs real git would compute.

Blobs, trees and commits are hashed exactly as ``git hash-object`` does (``<type> <len>\\0`` +
body), so a SHA the fake hands out looks and behaves like GitHub's: the same files give the same
tree, a commit pins its parents and tree. Trees are nested as in git; callers mostly work with
the flat ``{path: content}`` view from :meth:`GitStore.files`.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

FILE_MODE = "100644"
TREE_MODE = "040000"


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
        body = b"".join(
            f"{e.mode.lstrip('0')} {e.path}\0".encode() + bytes.fromhex(e.sha) for e in ordered
        )
        sha = object_sha("tree", body)
        self.trees[sha] = ordered
        return sha

    def write_files(self, files: dict[str, str]) -> str:
        """Store ``{path: blob sha}`` as nested trees; returns the root tree SHA."""
        here: dict[str, str] = {}
        below: dict[str, dict[str, str]] = {}
        for path, sha in files.items():
            head, _, rest = path.partition("/")
            if rest:
                below.setdefault(head, {})[rest] = sha
            else:
                here[head] = sha
        entries = [TreeEntry(name, FILE_MODE, "blob", sha) for name, sha in here.items()]
        entries += [
            TreeEntry(name, TREE_MODE, "tree", self.write_files(sub)) for name, sub in below.items()
        ]
        return self.put_tree(entries)

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
        out: dict[str, str] = {}
        for entry in self.trees[tree_sha]:
            if entry.type == "tree":
                out.update(self.tree_files(entry.sha, f"{prefix}{entry.path}/"))
            else:
                out[prefix + entry.path] = entry.sha
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
        sha = object_sha("commit", "\n".join(lines).encode())
        commit = Commit(sha, tree, tuple(parents), message, author, email, date)
        self.commits[sha] = commit
        return commit

    def files(self, commit_sha: str) -> dict[str, str]:
        """``{path: blob sha}`` of a commit's tree."""
        return self.tree_files(self.commits[commit_sha].tree)

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

    def merge_files(self, ours: str, theirs: str) -> dict[str, str] | None:
        """A three-way merge of two commits' files; ``None`` if a path changed on both sides."""
        base_sha = self.merge_base(ours, theirs)
        base = self.files(base_sha) if base_sha else {}
        return three_way(base, self.files(ours), self.files(theirs))


def three_way(base: dict[str, str], mine: dict[str, str],
              other: dict[str, str]) -> dict[str, str] | None:
    """``{path: blob}`` with both sides' changes from ``base``; ``None`` on a conflict."""
    merged: dict[str, str] = {}
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
