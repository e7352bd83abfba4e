"""The answers GitHub gave with an ``ETag``, kept so a read made again is conditional.

gidgethub sends ``If-None-Match`` for a URL it holds an answer for, and GitHub's ``304`` to it
does not count against the rate limit (BEHAVIOUR.md §15): the body comes from the cache.
Answers are kept per installation — an installation's token sees only its repositories, so
one installation's answer must never serve another's read — but in **one** cache for the whole
process, bounded by ``ANSWERS`` in all. Why one: a dict of per-installation caches grew with
every installation a worker ever served (each up to 500 answers, whole JSON bodies), never
shrinking; a soak of a few hundred quests showed the workers' memory climbing with them
(``docs/performance.md``). One bound for all keeps a worker's memory the same whatever the
number of installations, and the reads that matter — the same pull request, ref or settings
file read again within minutes — are the recent ones an LRU keeps.

Each answer is held as its JSON, compressed, and decoded again when a ``304`` uses it: decoded,
a pull request's answer (its head's and base's repositories, ~90 fields each) holds ~15 KB of
Python objects, compressed ~2 KB. A soak's worker filling the bound with fresh repositories'
answers grew by those 15 KB each (``docs/performance.md``, the soak); at the bound the cache
was ~15 MB a worker, now ~2 MB. A read served from it gets its own copy, which a caller may
change without changing the next read's.
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Iterator, MutableMapping
from typing import Any

from cachetools import LRUCache

ANSWERS = 1000
"""Answers kept in all, least recently used first out: a quest's reads again (its pull
request, branch, check runs, settings file) are a few dozen, and a worker has tens in flight."""


class Etags:
    """The process's cache of answers, by installation and URL."""

    def __init__(self, maxsize: int = ANSWERS) -> None:
        self._answers: LRUCache[tuple[int, str], Any] = LRUCache(maxsize=maxsize)

    def __len__(self) -> int:
        return len(self._answers)

    def of(self, installation_id: int) -> MutableMapping[str, Any]:
        """The view gidgethub is given for one installation's client (its ``cache``)."""
        return InstallationEtags(self._answers, installation_id)


class InstallationEtags(MutableMapping[str, Any]):
    """One installation's answers in the shared cache: URL → what gidgethub stores (``etag``,
    ``last_modified``, ``data``, ``more``)."""

    def __init__(self, answers: LRUCache[tuple[int, str], Any], installation_id: int) -> None:
        self._answers = answers
        self.installation_id = installation_id

    def __getitem__(self, url: str) -> Any:
        return unpacked(self._answers[(self.installation_id, url)])

    def __setitem__(self, url: str, answer: Any) -> None:
        self._answers[(self.installation_id, url)] = packed(answer)

    def __delitem__(self, url: str) -> None:
        del self._answers[(self.installation_id, url)]

    def __iter__(self) -> Iterator[str]:
        return iter([url for (inst, url) in list(self._answers) if inst == self.installation_id])

    def __len__(self) -> int:
        return sum(1 for inst, _url in list(self._answers) if inst == self.installation_id)


class Packed(bytes):
    """An answer's data as compressed JSON (a type of its own: a body may be ``bytes``)."""


def packed(answer: Any) -> Any:
    """gidgethub's ``(etag, last_modified, data, more)`` with ``data`` compressed."""
    if not (isinstance(answer, tuple) and len(answer) == 4):
        return answer
    etag, last_modified, data, more = answer
    try:
        body = Packed(zlib.compress(json.dumps(data, separators=(",", ":")).encode(), 1))
    except (TypeError, ValueError):  # not JSON (gidgethub decodes only JSON; kept as is)
        return answer
    return (etag, last_modified, body, more)


def unpacked(answer: Any) -> Any:
    if isinstance(answer, tuple) and len(answer) == 4 and isinstance(answer[2], Packed):
        etag, last_modified, body, more = answer
        return (etag, last_modified, json.loads(zlib.decompress(body)), more)
    return answer
