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
quest: which quest it is, if any, is ``bot.quests.quest_of``'s to decide (a branch's name is
anyone's to choose). ``bot.intake.routes`` routes these with the rest.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from gidgethub import routing, sansio

from bot.adapters import AppIdentity
from bot.github.payloads import (
    Sink,
    default_branch,
    ident,
    is_bot,
    items,
    login_of,
    obj,
    repo_of,
    text,
)
from bot.quests.branches import QUEST_BRANCH_PREFIX, quest_of_branch

DECISIONS = frozenset({"approved", "changes_requested"})
"""The review states that decide; ``commented`` and ``dismissed`` do not."""


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


SETTINGS_FILE = ".github/questbot.yml"


@dataclass(frozen=True, slots=True)
class QuestPush:
    """Someone pushed to a ``quest/…`` branch of ``repo`` — whose quest's, if any, is
    ``bot.quests.quest_of``'s to decide: the quest of that name must be ``repo``'s."""

    repo: str
    branch: str
    """The branch pushed to: ``quest/<id>``, or ``quest/<id>-r<revision>`` after a rollback
    or a reopening (``Quest.branch``); only the quest's current one is its work."""
    head: str
    pusher: str
    by_bot: bool
    """questbot pushed it itself (its own ``<slug>[bot]`` account, of type Bot): a patch,
    rebase or reproduction commit, not a person's revision."""


@dataclass(frozen=True, slots=True)
class BasePush:
    """The default branch moved."""

    repo: str
    before: str
    after: str
    pusher: str
    touched_settings: bool = False
    """A commit in the push changed ``.github/questbot.yml``: settings must be read again."""


pushes = routing.Router()


@pushes.register("push")
async def _push(event: sansio.Event, out: Sink) -> None:
    data = event.data
    repo = repo_of(data)
    ref, after = text(data.get("ref")), text(data.get("after"))
    if repo is None or not ref.startswith("refs/heads/") or set(after) <= {"0"}:
        return  # a deleted branch has an all-zero `after`
    branch = ref.removeprefix("refs/heads/")
    sender = data.get("sender")
    pusher = login_of(sender) or text(obj(data.get("pusher")).get("name"))
    if branch.startswith(QUEST_BRANCH_PREFIX):
        if quest_of_branch(branch):
            ours = is_bot(sender) and pusher == out.app.bot_login
            out.items.append(QuestPush(repo, branch, after, pusher, ours))
    elif branch == default_branch(data):
        touched = any(SETTINGS_FILE in paths for c in items(data.get("commits"))
                      for k in ("added", "modified", "removed")
                      if isinstance(paths := c.get(k), list))
        out.items.append(BasePush(repo, text(data.get("before")), after, pusher, touched))
