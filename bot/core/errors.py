"""The core's errors, in the one tree of ``bot.errors``. Messages are lowercase and name the
state, the event and the way forward, because the worker shows them to people as replies."""

from __future__ import annotations

from bot.core.names import Name
from bot.errors import InternalError, QuestbotError, Refused


class QuestError(QuestbotError):
    """Base of every error the core raises."""


class Refusal(Name):
    """Why a transition was refused: the worker picks its reply from this."""

    UNDEFINED = "undefined"  # the table has no such move from this state
    CLAIMED = "claimed"  # someone else holds the review
    STALE = "stale"  # the decision was made on an older snapshot
    PRODUCER = "producer"  # the author of the head cannot approve it
    NOT_AT_CHECKPOINT = "not_at_checkpoint"
    UNBOUND_PROOF = "unbound_proof"  # the bundle does not match the quest
    BAD_EVENT = "bad_event"  # the event contradicts the quest (wrong id, unknown request)


class InvalidTransition(QuestError, Refused):
    """An event the table does not allow in the quest's current state. The quest is unchanged."""

    def __init__(self, state: str, event_type: str, reason: str, code: Refusal) -> None:
        self.state = str(state)
        self.event_type = event_type
        self.reason = reason
        self.code = code
        super().__init__(f"can't apply {event_type} in state {state}: {reason}")


class TableViolation(QuestError, InternalError):
    """A handler chose a next state its table row does not list: a bug in the core."""
