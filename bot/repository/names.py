"""A quest follows its repository by id: the name questbot knows a repository by stays the
first it saw, whatever GitHub calls it since.

GitHub keeps a repository's id through a rename or a transfer, answers its old name with a
redirect (BEHAVIOUR §23) — until someone makes a new repository under that name — and sends
the new name in every later webhook. questbot's quests, indexes and memory are keyed by the
name, so rather than move them all, ``known_names`` reads each webhook's repositories back to
the names questbot knows them by (the payload's ``repository``, a pull request's ``head`` and
``base`` repositories, an installation's lists: every object with an ``id`` and a
``full_name``), and records a new name it meets as where that repository is now. Requests go
to the new name from then on (``bot.github.forge.Forges``), never through the old one.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

from bot.github.forge import Forges
from bot.github.payloads import ident, text

log = logging.getLogger(__name__)

_DEPTH = 6
"""How deep repositories sit in a payload (``pull_request.head.repo`` is three down)."""


def repositories(value: object, depth: int = 0) -> Iterator[dict[str, Any]]:
    """The objects of a payload that are repositories: an ``id`` and an ``owner/name``."""
    if depth > _DEPTH:
        return
    if isinstance(value, dict):
        name = text(value.get("full_name"))
        if ident(value.get("id")) is not None and name.count("/") == 1:
            yield value
        for item in value.values():
            yield from repositories(item, depth + 1)
    elif isinstance(value, list):
        for item in value:
            yield from repositories(item, depth + 1)


async def known_names(forges: Forges, payload: dict[str, Any]) -> dict[str, Any]:
    """``payload`` with each repository under the name questbot knows it by; a repository
    that moved is recorded where it is now. The payload is changed in place and returned."""
    found = list(repositories(payload))
    if not found:
        return payload
    seen = {int(r["id"]): str(r["full_name"]) for r in found}
    known = await forges.known_names(seen)
    for repo_id, name in seen.items():
        if known[repo_id] != name:
            log.info("repository %s is %s on GitHub now: questbot follows it there", known[repo_id],
                     name)
            await forges.moved(known[repo_id], name)
    for r in found:
        r["full_name"] = known[int(r["id"])]
    return payload
