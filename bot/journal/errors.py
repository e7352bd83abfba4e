"""One exception tree for the journal. Messages are lowercase and say what to do next."""

from __future__ import annotations


class JournalError(Exception):
    """Base of every error the journal raises."""


class UnstorableId(JournalError, ValueError):
    """An id that cannot be used in a key (it would break the cluster hash tag)."""


class ConcurrencyError(JournalError):
    """An apply lost the optimistic race more times than it may retry."""


class DurabilityError(JournalError):
    """Redis acknowledged the write but did not confirm it reached the AOF in time.

    The write may still be durable; applying the same event again is safe (it is absorbed)."""


class CorruptJournal(JournalError):
    """A stored record or entry the journal cannot read."""


class PermanentError(Exception):
    """Raised by an adapter when retrying cannot help (a 404, a refused merge, bad input).

    The effect is recorded as failed at once instead of being retried."""
