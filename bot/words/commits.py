"""The words of the one commit questbot makes of its own accord: the quest branch's first,
which changes no file (GitHub opens a pull request only for a branch with a commit of its
own). Its message says what the work is for, as a person reads it in ``git log`` or the pull
request's list of commits — never the quest's id, which is questbot's bookkeeping."""

from __future__ import annotations

from bot.agent.commit_words import commit_message
from bot.control_chars import one_line
from bot.core import Quest

_FAILED = {"check": "check", "suite": "check suite", "workflow": "workflow"}
"""A failure's fingerprint prefix (``bot.failures.signals``) and what GitHub calls the run."""


def work_words(quest: Quest) -> str:
    """What the quest works on, as a phrase: "the failing `tests` check", "issue 12: the
    last page is missing". An issue goes by its number without ``#``: a commit naming
    ``#12`` would add a reference to the issue's timeline with every push of the branch."""
    kind, _, name = quest.fingerprint.partition(":")
    name = one_line(name)[:100]
    if kind in _FAILED and name:
        return f"the failing `{name.replace('`', '')}` {_FAILED[kind]}"
    title = one_line(quest.title)
    if kind == "issue" and name.isdigit():
        named = title and title != f"issue #{name}"  # a /quest fix names no title of its own
        return f"issue {name}" + (f": {title}" if named else "")
    return title or "a failure"


def first_commit_message(quest: Quest) -> str:
    """The quest branch's first commit: what it starts work on, and why it is empty."""
    return commit_message(
        f"questbot: start work on {work_words(quest)}",
        "This commit changes no file. GitHub opens a pull request only for a branch with a "
        "commit of its own, and the pull request is where the work is shown and decided on, "
        "checkpoint by checkpoint.") + "\n"
