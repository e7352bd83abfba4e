"""The agent run's errors, in the one tree of ``bot.errors``.

Messages are lowercase, name the value and the state involved, and say what would have been
accepted instead, so a log line or a status comment is enough to understand the refusal.
"""

from __future__ import annotations

from bot.errors import InternalError, QuestbotError, Refused, RetryLater


class AgentError(QuestbotError):
    """Base of every error the agent package raises on purpose."""


class IllegalMove(AgentError, Refused):
    """The machine was asked for a move its table does not define; the run is unchanged."""

    def __init__(self, state: str, event: str, reason: str) -> None:
        self.state = state
        self.event = event
        self.reason = reason
        super().__init__(f"can't handle event {event!r} in state {state!r}: {reason}")


class RunFinished(IllegalMove):
    """An event arrived after the run reached a terminal state (terminal states absorb nothing)."""


class RunNotFinished(AgentError, InternalError):
    """A terminal result was asked of a run that is still going."""

    def __init__(self, state: str) -> None:
        self.state = state
        super().__init__(
            f"run is still in state {state!r}; a task result exists only for a terminal run"
        )


class UnsafePath(AgentError, Refused):
    """A cited path would be read from outside the checkout (or from its ``.git``)."""

    def __init__(self, path: str, reason: str) -> None:
        self.path = path
        self.reason = reason
        super().__init__(f"path {path!r} is not readable evidence: {reason}")


class ProofRunError(AgentError, RetryLater):
    """The proof runner could not set up or tear down its worktree."""
