"""A quest's branch names: ``quest/<id>``, and ``quest/<id>-r<revision>`` once it starts again
(``Quest.branch``). A name is only a claim — which repository's quest it is, and whether the
pull request is the quest's recorded one, ``quest_of`` decides."""

from __future__ import annotations

import re

QUEST_BRANCH_PREFIX = "quest/"
_QUEST_BRANCH = re.compile(r"(?P<id>[^/]+?)(?:-r(?P<revision>[0-9]+))?")


def quest_of_branch(branch: str) -> str | None:
    """The quest a ``quest/…`` branch belongs to, or ``None`` (not a quest branch, or a
    revert's ``quest/<id>-revert-<n>``)."""
    if not branch.startswith(QUEST_BRANCH_PREFIX):
        return None
    rest = branch.removeprefix(QUEST_BRANCH_PREFIX)
    found = _QUEST_BRANCH.fullmatch(rest)
    if found is None or "-revert-" in rest:
        return None
    return found["id"]
