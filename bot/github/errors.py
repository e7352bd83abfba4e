"""The GitHub adapter's base error, in the one tree of ``bot.errors``, so callers can catch the
whole room at once.

Messages are lowercase, name the value and what it was checked against, and say what to do
(gidgethub's ``GitHubException`` tree is the model).
"""

from __future__ import annotations

from bot.errors import QuestbotError


class GitHubAdapterError(QuestbotError):
    """Base of every error raised by ``bot.github``."""
