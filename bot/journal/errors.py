"""The journal's errors, in the one tree of ``bot.errors``. Messages are lowercase and say what
to do next."""

from __future__ import annotations

from bot.errors import PermanentError, QuestbotError, Refused, RetryLater

__all__ = ["ConcurrencyError", "CorruptJournal", "DurabilityError", "JournalError",
           "LeaseLost", "PermanentError", "UnstorableId"]


class JournalError(QuestbotError):
    """Base of every error the journal raises."""


class UnstorableId(JournalError, Refused, ValueError):
    """An id that cannot be used in a key (it would break the cluster hash tag)."""


class ConcurrencyError(JournalError, RetryLater):
    """An apply lost the optimistic race more times than it may retry."""


class DurabilityError(JournalError, RetryLater):
    """Redis acknowledged the write but did not confirm it reached the AOF in time.

    The write may still be durable; applying the same event again is safe (it is absorbed)."""


class LeaseLost(JournalError, RetryLater):
    """Another runner holds a quest's delivery lease now (this one stalled past it): stop,
    record nothing; the other delivers, and this one looks again later."""


class CorruptJournal(JournalError, PermanentError):
    """A stored record or entry the journal cannot read."""
