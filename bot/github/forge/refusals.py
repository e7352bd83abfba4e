"""GitHub's refusals, told apart: the ones a retry cannot fix become ``PermanentError``.

A 403 that is not a rate limit, a 404 or a 422 will be answered the same way however often it is
asked, so ``refused`` turns it into ``bot.journal.PermanentError`` with a message saying what
happened, to what, and what to do. Everything else (5xx, rate limits that outlast the client's
patience, network errors) propagates, and the effect runner retries it.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import gidgethub

from bot.journal import PermanentError

PERMANENT_STATUSES = frozenset({403, 404, 422})


def status_of(exc: gidgethub.HTTPException) -> int:
    return int(exc.status_code)


ARCHIVED = "archived so is read-only"
"""What GitHub's 403 to a write says when the repository is archived (BEHAVIOUR §23)."""
SUSPENDED = "installation has been suspended"
"""What GitHub's 403 says when the App's installation is suspended (BEHAVIOUR §23)."""


def refused(exc: gidgethub.HTTPException, what: str, todo: str) -> PermanentError:
    """A ``PermanentError`` for a GitHub refusal of ``what``, saying what to do about it —
    the repository's state when GitHub's answer names it, rather than a permission."""
    said = str(exc)
    if ARCHIVED in said.lower():
        todo = "the repository is archived: unarchive it"
    elif SUSPENDED in said.lower():
        todo = "questbot's App is suspended on this account: unsuspend it"
    return PermanentError(f"github refused to {what} (HTTP {status_of(exc)}: {said}); {todo}")


def is_permanent(exc: Exception) -> bool:
    return (isinstance(exc, gidgethub.BadRequest)
            and not isinstance(exc, gidgethub.RateLimitExceeded)
            and status_of(exc) in PERMANENT_STATUSES)


@contextmanager
def refusals(what: str, todo: str) -> Iterator[None]:
    """Inside, a permanent GitHub refusal becomes ``refused(exc, what, todo)``; anything else
    (a 5xx, a rate limit) goes through unchanged, for a retry."""
    try:
        yield
    except gidgethub.BadRequest as exc:
        if is_permanent(exc):
            raise refused(exc, what, todo) from exc
        raise
