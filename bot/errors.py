"""The one exception tree: every error questbot raises on purpose derives from ``QuestbotError``.

Errors are grouped by what the caller does about them, not by the room that raises them:

* ``Refused`` — a rule refused the request and nothing changed (an event the lifecycle does
  not allow now, a bad signature, a path outside the checkout, an unreadable input file). Tell
  whoever asked why, and what they can do instead; do not retry.
* ``PermanentError`` — the work cannot be done, and trying again will not change that (GitHub
  refused with a 4xx, the App is not installed, a stored record cannot be read). Record it
  where people see it; do not retry.
* ``RetryLater`` — the same call may well succeed shortly (a write not yet confirmed durable,
  a race lost too often, GitHub still busy with an asynchronous update). Retry with back-off.
* ``ConfigurationError`` — the environment or a repository's ``.github/questbot.yml`` is
  wrong. Report every problem with its fix; a process refuses to start, a repository keeps its
  last good settings.
* ``InternalError`` — questbot broke one of its own invariants: a bug to report, never the
  fault of the person who triggered it.

Each room keeps a base of its own (``QuestError``, ``JournalError``, ``AgentError``,
``GitHubAdapterError``) so a caller can also catch "anything from the journal"; a concrete
error derives from its room's base and from the group above. Messages are lowercase, name
what happened and to what, and end with the way out (gidgethub's ``GitHubException`` tree is
the model). Errors that are not ours — redis-py's ``ConnectionError``, aiohttp's, gidgethub's
HTTP errors — pass through unchanged where a caller knows them; the GitHub adapter turns a
permanent GitHub refusal into ``PermanentError`` with a message saying what to do.

This module imports nothing of questbot, so every room, the pure core included, may use it.
"""

from __future__ import annotations


class QuestbotError(Exception):
    """Base of every error questbot raises on purpose."""


class Refused(QuestbotError):
    """A rule refused the request; nothing changed. Say why and what to do instead."""


class PermanentError(QuestbotError):
    """Retrying cannot help (a 404, a refused merge, input that can never be read).

    An effect adapter raising it has its effect recorded as failed at once instead of being
    retried, and the failure is shown to people."""


class RetryLater(QuestbotError):
    """The same call may succeed shortly; try again with back-off."""


class ConfigurationError(QuestbotError):
    """The process environment or a repository's settings are wrong; report every problem."""


class InternalError(QuestbotError):
    """questbot broke one of its own invariants: a bug, never the requester's fault."""
