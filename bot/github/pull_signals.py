"""What happens to a quest's pull request on GitHub, read into intents with no I/O.

The pull request is where people decide, and they do not always decide with a comment:

* a GitHub review — "Approve" or "Request changes" — is a decision (``ReviewSubmitted``):
  intake counts it as ``/approve C`` bound to the reviewed ``commit_id``, or as ``/revise``
  with its body;
* closing the pull request without merging it stops the quest, reopening it starts it again
  (``PullClosed`` with ``merged`` false, ``PullReopened``);
* the merge itself — questbot's, GitHub's auto-merge, the merge queue's or a person's — is
  ``PullClosed`` with ``merged`` true: the quest landed, if it was the approved head.

Only pull requests from ``quest/…`` branches are read, and reviews by accounts GitHub calls
``Bot`` are not decisions. An intent names the pull request and its head — the branch and the
repository it is in (``head.repo.full_name``, a fork's for a pull request from a fork) — and no
quest: which quest it is, if any, is ``bot.worker.quest_of``'s to decide (a branch's name is
anyone's to choose). ``bot.github.signals`` routes these with the rest.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Protocol

from gidgethub import routing, sansio

from bot.adapters import AppIdentity
from bot.github.payloads import ident, is_bot, login_of, obj, repo_of, text

QUEST_BRANCH_PREFIX = "quest/"
_QUEST_BRANCH = re.compile(r"(?P<id>[^/]+?)(?:-r(?P<revision>[0-9]+))?")
DECISIONS = frozenset({"approved", "changes_requested"})
"""The review states that decide; ``commented`` and ``dismissed`` do not."""


def quest_of_branch(branch: str) -> str | None:
    """The quest a ``quest/…`` branch belongs to, or ``None`` (not a quest branch, or a
    revert's ``quest/<id>-revert-<n>``)."""
    if not branch.startswith(QUEST_BRANCH_PREFIX):
        return None
    rest = branch.removeprefix(QUEST_BRANCH_PREFIX)
    found = _QUEST_BRANCH.fullmatch(rest)
    if found is None or "-revert-" in rest:
        return None
    return found["id"]


@dataclass(frozen=True, slots=True)
class PullClosed:
    """A pull request from a ``quest/…`` branch was closed: merged, or closed by hand."""

    repo: str
    number: int
    branch: str
    head_repo: str
    """The repository the head branch is in: ``repo`` itself, or a fork."""
    head: str
    merged: bool
    merge_sha: str
    """The merge commit (``merged``), else empty."""
    actor: str
    by_us: bool
    """questbot closed it itself (its own ``<slug>[bot]`` account, of type Bot)."""


@dataclass(frozen=True, slots=True)
class PullReopened:
    repo: str
    number: int
    branch: str
    head_repo: str
    actor: str
    by_us: bool


@dataclass(frozen=True, slots=True)
class ReviewSubmitted:
    """A person approved a pull request from a ``quest/…`` branch or requested changes on
    it."""

    repo: str
    number: int
    branch: str
    head_repo: str
    review_id: int
    reviewer: str
    state: str
    """``approved`` or ``changes_requested`` (the webhook's lowercase states)."""
    commit_id: str
    """The commit the review is of: an approval binds to it, not to whatever is newest."""
    body: str


class Sink(Protocol):
    """Where handlers put intents (``bot.github.signals.Intents``)."""

    app: AppIdentity
    items: list[Any]


pulls = routing.Router()


def _quest_pull(data: dict[str, Any]) -> tuple[str, int, str, str, dict[str, Any]] | None:
    """``(repo, number, branch, head repository, pull request)`` for a pull request from a
    ``quest/…`` branch (a fork whose repository GitHub no longer shows has an empty head
    repository, which is no repository's)."""
    pull = obj(data.get("pull_request"))
    repo, number = repo_of(data), ident(pull.get("number"))
    head = obj(pull.get("head"))
    branch = text(head.get("ref"))
    if repo is None or number is None or quest_of_branch(branch) is None:
        return None
    return repo, number, branch, text(obj(head.get("repo")).get("full_name")), pull


def _ours(sender: object, app: AppIdentity) -> bool:
    return is_bot(sender) and login_of(sender) == app.bot_login


@pulls.register("pull_request", action="closed")
async def _closed(event: sansio.Event, out: Sink) -> None:
    found = _quest_pull(event.data)
    sender = event.data.get("sender")
    if found is None or not login_of(sender):
        return
    repo, number, branch, head_repo, pull = found
    merged = pull.get("merged") is True
    out.items.append(PullClosed(repo, number, branch, head_repo,
                                text(obj(pull.get("head")).get("sha")), merged,
                                text(pull.get("merge_commit_sha")) if merged else "",
                                login_of(sender), _ours(sender, out.app)))


@pulls.register("pull_request", action="reopened")
async def _reopened(event: sansio.Event, out: Sink) -> None:
    found = _quest_pull(event.data)
    sender = event.data.get("sender")
    if found is None or not login_of(sender):
        return
    repo, number, branch, head_repo, _pull = found
    out.items.append(PullReopened(repo, number, branch, head_repo, login_of(sender),
                                  _ours(sender, out.app)))


@pulls.register("pull_request_review", action="submitted")
async def _review(event: sansio.Event, out: Sink) -> None:
    found = _quest_pull(event.data)
    review = obj(event.data.get("review"))
    user = review.get("user")
    state, review_id, reviewer = text(review.get("state")).lower(), ident(review.get("id")), \
        login_of(user)
    if (found is None or review_id is None or not reviewer or is_bot(user)
            or state not in DECISIONS):
        return
    repo, number, branch, head_repo, _pull = found
    out.items.append(ReviewSubmitted(repo, number, branch, head_repo, review_id, reviewer, state,
                                     text(review.get("commit_id")), text(review.get("body"))))
