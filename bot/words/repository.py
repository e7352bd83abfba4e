"""What people read when their repository changes under a quest: what happened, and what sets
it right. Each text becomes the parked quest's note (its status comment, its check run, the
inbox) and is shown as plain text, so it holds no Markdown of its own."""

from __future__ import annotations

from enum import StrEnum

from bot.words.render import login


class Change(StrEnum):
    """How a repository changed under its quests (``bot.repository.signals`` reads each)."""

    ARCHIVED = "archived"
    UNARCHIVED = "unarchived"
    RENAMED = "renamed"
    TRANSFERRED = "transferred"
    PRIVATIZED = "privatized"
    DEFAULT_BRANCH = "default branch renamed"
    REMOVED = "removed from the App"
    ADDED = "added to the App"
    UNINSTALLED = "App uninstalled"
    SUSPENDED = "App suspended"
    UNSUSPENDED = "App unsuspended"
    BRANCH_DELETED = "quest branch deleted"
    DELETED = "deleted"


PARKS: frozenset[Change] = frozenset({Change.ARCHIVED, Change.REMOVED, Change.UNINSTALLED,
                                      Change.SUSPENDED, Change.BRANCH_DELETED, Change.DELETED})
"""Changes after which questbot cannot go on with a quest of the repository: it parks."""

UNDOES: dict[Change, frozenset[Change]] = {
    Change.UNARCHIVED: frozenset({Change.ARCHIVED}),
    Change.ADDED: frozenset({Change.REMOVED, Change.UNINSTALLED}),
    Change.UNSUSPENDED: frozenset({Change.SUSPENDED}),
}
"""The change that sets each parking change right: the quests it parked take up again."""


def _by(actor: str) -> str:
    return f" by {actor}" if actor else ""


def parked_note(change: Change, repo: str, *, actor: str = "", branch: str = "") -> str:
    """Why the quest parked and what sets it right, in one paragraph."""
    if change is Change.ARCHIVED:
        return (f"{repo} was archived{_by(actor)}, so GitHub takes no writes to it and "
                "questbot cannot go on. Unarchive the repository (its Settings, Danger Zone) "
                "and the quest takes up again where it stopped; or end it with /kill once it "
                "is unarchived.")
    if change is Change.REMOVED:
        return (f"{repo} was removed from questbot's App installation{_by(actor)}, so "
                "questbot can no longer read or write there. Give the App access to the "
                "repository again (the installation's Repository access settings) and the "
                "quest takes up again where it stopped.")
    if change is Change.UNINSTALLED:
        return (f"questbot's App was uninstalled from the account that owns {repo}"
                f"{_by(actor)}, so questbot can no longer read or write there. Install the "
                "App on the repository again and the quest takes up again where it stopped.")
    if change is Change.SUSPENDED:
        return (f"questbot's App was suspended on the account that owns {repo}{_by(actor)}: "
                "GitHub gives it no access until it is unsuspended. Unsuspend the App (the "
                "installation's settings) and the quest takes up again where it stopped.")
    if change is Change.BRANCH_DELETED:
        return (f"The quest's branch {branch} was deleted{_by(actor)}, and its pull request "
                "with it. Restore the branch (the Restore branch button on the closed pull "
                "request), reopen the pull request and /resume the quest; or /kill it.")
    if change is Change.DELETED:
        return (f"{repo} was deleted{_by(actor)}, and its pull requests, issues and questbot's "
                "inbox with it, so questbot cannot go on and has nowhere on GitHub to say so. "
                "The quest stays parked, and nothing of it is tried again. If the repository "
                "is restored, give questbot's App access to it again and the quest takes up "
                "again where it stopped; if it is not, questbot abandons the quest once GitHub "
                "no longer lets it be restored (an operator may end it sooner: python -m bot "
                "abandon).")
    return f"{repo}: {change.value}{_by(actor)}."


def taken_up_text(change: Change, repo: str, actor: str = "") -> str:
    """Said on the quest's pull request when the change that parked it was undone: the
    parking itself could not be said there (GitHub took no writes), so both are said now."""
    undone = {Change.UNARCHIVED: "unarchived", Change.ADDED: "given back to questbot's App",
              Change.UNSUSPENDED: "back from the App's suspension"}[change]
    parked = {Change.UNARCHIVED: "archived", Change.ADDED: "out of questbot's reach",
              Change.UNSUSPENDED: "out of reach while questbot's App was suspended"}[change]
    by = f" (by {login(actor)})" if actor else ""
    return (f"{repo} was {parked}, so questbot parked this quest. It is {undone} now{by}, and "
            "questbot took the quest up again where it stopped.")


def restored_text(repo: str, actor: str = "") -> str:
    """Said on the quest's pull request when its deleted repository was restored and the App
    reaches it again — given back to it, or found by questbot's own look on an installation
    on all repositories: nothing could be said while it was gone."""
    by = f" (by {login(actor)})" if actor else ""
    return (f"{repo} was deleted, so questbot parked this quest. It was restored, and "
            f"questbot's App can reach it again{by}, so questbot took the quest up again where "
            "it stopped.")


def gone_reason(repo: str, days: float) -> str:
    """Why questbot abandoned a quest whose repository was deleted (the ``killed`` event's
    reason, read in ``replay`` and the journal)."""
    return (f"{repo} was deleted and not restored within {days:g} days, as long as GitHub "
            "lets an owner restore a deleted repository: the quest, parked since, cannot go "
            "on, and questbot abandoned it.")
