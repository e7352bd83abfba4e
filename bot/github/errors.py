"""One exception tree for the GitHub adapter, so callers can catch the whole room at once.

Messages are lowercase, name the value and what it was checked against, and say what to do
(gidgethub's ``GitHubException`` tree is the model).
"""

from __future__ import annotations


class GitHubAdapterError(Exception):
    """Base of every error raised by ``bot.github``."""
