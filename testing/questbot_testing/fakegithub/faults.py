"""GitHub having a bad day, on purpose: some requests answered with the errors the real API gives.

Off by default. ``Faults(rate=0.05, seed=7)`` makes about one API request in twenty fail, each
with one of these kinds, drawn from the seeded random generator so a run can be repeated:

``5xx``
    ``502`` before anything happened, with either of the two bodies GitHub's front end sends:
    JSON ``{"message": "Server Error"}`` or the HTML "Unicorn!" page
    (https://github.com/gitcoinco/web/issues/2824, https://github.com/PyGithub/PyGithub/issues/2047).
``timeout``
    the request *is* carried out, then the answer is held for ``hold_s`` seconds and replaced
    by ``502`` "We couldn't respond to your request in time…" — GitHub stops waiting for its
    backend after 10 s and says so even when the write went through
    (https://github.com/softprops/action-gh-release/issues/612). This is the fault that shows
    whether a client creates an object twice.
``secondary``
    ``403`` with the secondary-limit message and a ``retry-after`` header; the primary limit
    headers stay as they were (``x-ratelimit-remaining`` above zero), as GitHub sends them
    (BEHAVIOUR.md §15).
``429``
    ``429`` with the same message and ``retry-after``.

Nothing under ``/_fake/`` (the fake's own control and log routes) is ever faulted. Every fault
is recorded in ``injected`` with the request it hit.

A test that needs one fault on one request, rather than a rate, aims it:
``fake.faults.aim("timeout", "POST", "/repos/octo/sample/pulls")`` gives the next such request
(its path exactly, the query aside) that fault, whatever the rate — a race the chaos run found
once by chance, repeated every time.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass, field

from questbot_testing.fakegithub.calls import Reply

KINDS = ("5xx", "timeout", "secondary", "429")
BEFORE = frozenset({"5xx", "secondary", "429"})
"""Kinds answered instead of the handler: nothing was done."""

SERVER_ERROR = {"message": "Server Error"}
TIMED_OUT = ("We couldn't respond to your request in time. Sorry about that. Please try "
             "resubmitting your request and contact us if the problem persists.")
SECONDARY = ("You have exceeded a secondary rate limit and have been temporarily blocked from "
             "content creation. Please retry your request again later.")
SECONDARY_DOCS = ("https://docs.github.com/rest/overview/rate-limits-for-the-rest-api"
                  "#about-secondary-rate-limits")
UNICORN = (b"<!DOCTYPE html>\n<html>\n  <head>\n    <title>Unicorn! &middot; GitHub</title>\n"
           b"  </head>\n  <body>\n    <p>No server is currently available to service your "
           b"request.</p>\n    <p>Sorry about that. Please try refreshing and contact us if the "
           b"problem persists.</p>\n  </body>\n</html>\n")


@dataclass(frozen=True)
class Injected:
    """One request that got a fault instead of (or after) its answer."""

    at: float
    method: str
    path: str
    kind: str
    status: int


@dataclass
class Faults:
    """Which requests fail and how; ``rate`` 0 (the default) injects nothing."""

    rate: float = 0.0
    kinds: tuple[str, ...] = KINDS
    seed: int | None = None
    hold_s: float = 10.0
    """How long a ``timeout`` holds its answer (GitHub gives up after about 10 s)."""
    retry_after_s: int = 1
    injected: list[Injected] = field(default_factory=list)
    aimed: list[tuple[str, str, str]] = field(default_factory=list)
    """``(kind, method, path)`` for the next requests to fault, in order (``aim``)."""
    _rng: random.Random = field(init=False, repr=False)

    def __post_init__(self) -> None:
        unknown = set(self.kinds) - set(KINDS)
        if unknown:
            raise ValueError(f"unknown fault kinds {sorted(unknown)}; known: {', '.join(KINDS)}")
        if not 0.0 <= self.rate <= 1.0:
            raise ValueError(f"the fault rate must be between 0 and 1, got {self.rate}")
        self._rng = random.Random(self.seed)

    def aim(self, kind: str, method: str, path: str, *, times: int = 1) -> None:
        """Fault the next ``times`` requests ``method path`` with ``kind``."""
        if kind not in KINDS:
            raise ValueError(f"unknown fault kind {kind!r}; known: {', '.join(KINDS)}")
        self.aimed += [(kind, method.upper(), path)] * times

    def draw(self, method: str, raw_path: str) -> str | None:
        """The fault this request gets, if any."""
        path = raw_path.split("?", 1)[0]
        for i, (kind, aimed_method, aimed_path) in enumerate(self.aimed):
            if aimed_method == method.upper() and aimed_path == path:
                del self.aimed[i]
                return kind
        if self.rate <= 0 or not self.kinds or raw_path.startswith("/_fake/"):
            return None
        if self._rng.random() >= self.rate:
            return None
        return self._rng.choice(self.kinds)

    def record(self, method: str, path: str, kind: str, status: int) -> None:
        self.injected.append(Injected(time.time(), method, path, kind, status))

    def instead(self, kind: str) -> Reply:
        """The answer for a kind in ``BEFORE``: the request is not carried out."""
        if kind == "5xx":
            if self._rng.random() < 0.5:
                return Reply(502, dict(SERVER_ERROR))
            return Reply(502, raw=UNICORN, content_type="text/html; charset=utf-8")
        status = 403 if kind == "secondary" else 429
        return Reply(status, {"message": SECONDARY, "documentation_url": SECONDARY_DOCS},
                     headers={"retry-after": str(self.retry_after_s)})

    @staticmethod
    def timed_out() -> Reply:
        """What replaces the answer of a ``timeout`` once ``hold_s`` has passed."""
        return Reply(502, {"message": TIMED_OUT,
                           "documentation_url": "https://docs.github.com/rest"})
