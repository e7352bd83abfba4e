"""The tree of a revert, built from tree listings: what ``rollback`` commits.

Reverting needs the landed commit's tree with the quest's own changes undone. So: list the
entries (mode and SHA) at the quest's base, at its approved head, and at the merge; every path
the quest changed (its entry differs between base and head) goes back to its entry at the base,
or is removed if the quest added it; every other path keeps its entry at the merge, so what
others merged meanwhile stays. This is ``git revert`` of the quest's diff, by path, with modes
kept (an executable stays executable, a symlink a symlink).
"""

from __future__ import annotations

from typing import TypeVar

from bot.github.forge.git import TYPES, GitData

E = TypeVar("E")


def revert_entries(base: dict[str, E], head: dict[str, E],
                   merged: dict[str, E]) -> dict[str, E]:
    """Path → entry of the reverted tree (pure, for testing without GitHub)."""
    changed = {p for p in base.keys() | head.keys() if base.get(p) != head.get(p)}
    tree = {p: entry for p, entry in merged.items() if p not in changed}
    tree.update({p: base[p] for p in changed if p in base})
    return tree


async def revert_tree(git: GitData, *, base: str, head: str, merge_sha: str) -> str:
    """Create the reverted tree on GitHub and return its SHA."""
    entries = revert_entries(await git.entries(base), await git.entries(head),
                             await git.entries(merge_sha))
    return await git.create_tree([{"path": path, "mode": mode, "type": TYPES.get(mode, "blob"),
                                   "sha": sha} for path, (mode, sha) in sorted(entries.items())])
