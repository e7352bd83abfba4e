"""The tree of a revert, built from directory listings: what ``rollback`` commits.

Reverting needs the landed commit's tree with the quest's own changes undone. The REST subset
questbot is held to cannot read a commit object (no ``git/get-commit``), but it can list a
commit's files with their blob SHAs through the contents API, and it can write a tree from
entries. So: list the files at the quest's base, at its approved head, and at the merge; every
path the quest changed (its blob differs between base and head) goes back to its blob at the
base, or is removed if the quest added it; every other path keeps its blob at the merge, so
what others merged meanwhile stays. This is ``git revert`` of the quest's diff, by path.
"""

from __future__ import annotations

from bot.github.forge.git import FILE_MODE, GitData


def revert_entries(base: dict[str, str], head: dict[str, str],
                   merged: dict[str, str]) -> dict[str, str]:
    """Path → blob SHA of the reverted tree (pure, for testing without GitHub)."""
    changed = {p for p in base.keys() | head.keys() if base.get(p) != head.get(p)}
    tree = {p: sha for p, sha in merged.items() if p not in changed}
    tree.update({p: base[p] for p in changed if p in base})
    return tree


async def revert_tree(git: GitData, *, base: str, head: str, merge_sha: str) -> str:
    """Create the reverted tree on GitHub and return its SHA."""
    entries = revert_entries(await git.files(base), await git.files(head),
                             await git.files(merge_sha))
    return await git.create_tree([{"path": path, "mode": FILE_MODE, "type": "blob", "sha": sha}
                                  for path, sha in sorted(entries.items())])
