"""What the journal answers: the outcome of one apply, and one entry read back."""

from __future__ import annotations

from dataclasses import dataclass

from bot.core import Effect, Event, Quest


@dataclass(frozen=True, slots=True)
class Applied:
    """The answer to one apply."""

    event_id: str
    quest: Quest
    effects: tuple[Effect, ...]
    """The effects this apply put in the outbox (none for a duplicate)."""
    version: int
    """The journal version the event holds (for a duplicate: where it was first applied); its
    follow-ups, journaled with it, hold the next ones."""
    duplicate: bool = False
    """The event id was already in the journal; nothing was written."""
    absorbed: bool = False
    """The quest is terminal and the event changed nothing; it was journaled."""


@dataclass(frozen=True, slots=True)
class JournalEntry:
    version: int
    entry_id: str
    event: Event
