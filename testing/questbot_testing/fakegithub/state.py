"""What the fake GitHub knows: installations, repositories and everything inside them.

Plain mutable dataclasses, owned by one :class:`World`. Numbering follows GitHub: issues and
pull requests share one counter per repository (a pull request *is* an issue with extra parts),
while comments, check runs, reviews and other objects get ids from one global counter. Handlers
and test helpers change the world; :mod:`.render` turns it into GitHub's JSON.
"""

from __future__ import annotations

import hashlib
import itertools
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import StrEnum

from questbot_testing.fakegithub.gitstore import Commit, GitStore
from questbot_testing.fakegithub.permissions import ALWAYS_SENT, EVENTS, EVERYTHING


class Permission(StrEnum):
    """A collaborator's role on a repository; ``fakegithub.collaborators`` has how
    ``GET .../collaborators/{u}/permission`` reports each."""

    ADMIN = "admin"
    MAINTAIN = "maintain"
    WRITE = "write"
    TRIAGE = "triage"
    READ = "read"
    NONE = "none"


def iso(moment: float | None = None) -> str:
    """GitHub's timestamp format: UTC, second precision, ``Z`` suffix."""
    when = datetime.fromtimestamp(time.time() if moment is None else moment, UTC)
    return when.strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass
class Installation:
    id: int
    account: str
    account_type: str = "Organization"
    suspended_at: str | None = None
    """Set while the installation is suspended: GitHub refuses its tokens (BEHAVIOUR §23)."""
    repository_selection: str = "selected"
    """``selected``: the repositories it was given; ``all``: every repository of the account,
    "current and future" as the install page says, so a repository restored there is covered
    again with nothing sent (**unconfirmed**: GitHub documents no event either way)."""


@dataclass
class Token:
    token: str
    installation_id: int
    expires_at: float
    permissions: dict[str, str] = field(default_factory=dict)
    """What the token may do: the App's permissions, or the subset asked for (§13)."""


@dataclass
class Comment:
    id: int
    issue_number: int
    body: str
    user: str
    created_at: str
    updated_at: str
    reactions: list[tuple[str, str]] = field(default_factory=list)


@dataclass
class Issue:
    number: int
    title: str
    body: str | None
    user: str
    created_at: str
    state: str = "open"
    labels: list[str] = field(default_factory=list)
    comments: list[int] = field(default_factory=list)
    assignees: list[str] = field(default_factory=list)
    """Logins, in the order they were assigned (``issues/add-assignees``, BEHAVIOUR §8)."""
    is_pull_request: bool = False
    locked: bool = False
    lock_reason: str | None = None
    pinned_at: int = 0
    """When ``pinIssue`` pinned it (an order, not a time); 0: not pinned."""


@dataclass
class Review:
    id: int
    user: str
    state: str
    body: str
    commit_id: str
    submitted_at: str


@dataclass
class PullRequest:
    number: int
    head_ref: str
    base_ref: str
    head_sha: str
    base_sha: str
    draft: bool = False
    merged: bool = False
    merged_by: str | None = None
    merge_commit_sha: str | None = None
    merged_at: str | None = None
    requested_reviewers: list[str] = field(default_factory=list)
    reviews: list[Review] = field(default_factory=list)
    auto_merge: AutoMerge | None = None
    queued: QueueEntry | None = None
    head_repo: str = ""
    """The fork the head branch lives in (``owner/name``), for a pull request from a fork;
    empty: the head branch is in the base repository itself."""


@dataclass
class AutoMerge:
    """``enablePullRequestAutoMerge``: merge with ``method`` once the PR is mergeable, if its
    head is still ``expected_head`` (when given)."""

    method: str
    enabled_by: str
    enabled_at: str
    expected_head: str | None = None


@dataclass
class QueueEntry:
    """``enqueuePullRequest``: waiting in the merge queue, pinned to ``expected_head``."""

    id: int
    enqueued_by: str
    enqueued_at: str
    expected_head: str | None = None
    state: str = "QUEUED"


@dataclass
class Label:
    name: str
    color: str = "ededed"
    description: str | None = None


@dataclass
class CheckRun:
    id: int
    head_sha: str
    name: str
    status: str
    conclusion: str | None
    external_id: str
    started_at: str
    completed_at: str | None = None
    details_url: str | None = None
    output: dict[str, object] = field(default_factory=dict)
    actions: list[dict[str, object]] = field(default_factory=list)
    app_slug: str = "questbot"


@dataclass
class CommitStatus:
    id: int
    sha: str
    state: str
    context: str
    description: str | None
    target_url: str | None
    created_at: str


@dataclass
class WorkflowRun:
    id: int
    name: str
    head_sha: str
    head_branch: str
    status: str = "completed"
    conclusion: str | None = "failure"
    run_attempt: int = 1
    logs: bytes = b"PK\x05\x06" + bytes(18)  # an empty zip archive


@dataclass
class Repository:
    id: int
    owner: str
    name: str
    default_branch: str
    installation_id: int
    private: bool = False
    archived: bool = False
    """Archived: every write is answered 403 (BEHAVIOUR §23)."""
    git: GitStore = field(default_factory=GitStore)
    refs: dict[str, str] = field(default_factory=dict)  # "refs/heads/main" -> commit sha
    issues: dict[int, Issue] = field(default_factory=dict)
    pulls: dict[int, PullRequest] = field(default_factory=dict)
    comments: dict[int, Comment] = field(default_factory=dict)
    check_runs: dict[int, CheckRun] = field(default_factory=dict)
    statuses: list[CommitStatus] = field(default_factory=list)
    workflow_runs: dict[int, WorkflowRun] = field(default_factory=dict)
    permissions: dict[str, Permission] = field(default_factory=dict)
    labels: dict[str, Label] = field(default_factory=dict)  # lowercased name -> label
    next_number: int = 1
    allow_merge_commit: bool = True
    allow_squash_merge: bool = True
    allow_rebase_merge: bool = True
    allow_auto_merge: bool = False
    """GitHub's defaults (OA schema ``repository``)."""
    drafts_supported: bool = True
    """False for a private repository on a plan without draft pull requests (BEHAVIOUR §1)."""
    required_checks: list[str] = field(default_factory=list)
    """Branch protection of the default branch, reduced to its required check names."""
    merge_queue: bool = False
    """The default branch requires a merge queue (BEHAVIOUR §5, §6)."""
    linear_history: bool = False
    """Branch protection's ``required_linear_history`` on the default branch: no merge commits
    (BEHAVIOUR §5)."""
    required_reviews: int = 0
    """Branch protection's ``required_approving_review_count`` on the default branch (0-6)."""
    dismiss_stale_reviews: bool = False
    """Branch protection's ``dismiss_stale_reviews``: an approval counts only on the head it
    was given on (BEHAVIOUR §4)."""

    @property
    def full_name(self) -> str:
        return f"{self.owner}/{self.name}"

    def branch_sha(self, branch: str) -> str | None:
        return self.refs.get(f"refs/heads/{branch}")

    def resolve(self, ref: str) -> str | None:
        """A commit SHA for a SHA, a branch name, ``heads/x``, ``refs/heads/x`` or ``tags/x``."""
        if ref in self.git.commits:
            return ref
        for candidate in (ref, f"refs/{ref}", f"refs/heads/{ref}", f"refs/tags/{ref}"):
            if candidate in self.refs:
                return self.refs[candidate]
        return None

    def head_commit(self, branch: str) -> Commit:
        return self.git.commits[self.refs[f"refs/heads/{branch}"]]

    def permission(self, login: str) -> Permission:
        if login == self.owner:
            return Permission.ADMIN
        return self.permissions.get(login, Permission.NONE)

    def missing_checks(self, pr: PullRequest) -> list[str]:
        """Required checks (of a pull request into the default branch) without a passing run
        on its head: the newest run of each name counts, as GitHub shows it."""
        if pr.base_ref != self.default_branch:
            return []
        latest: dict[str, str | None] = {}
        for run in sorted(self.check_runs.values(), key=lambda r: r.id):
            if run.head_sha == pr.head_sha:
                latest[run.name] = run.conclusion
        return [name for name in self.required_checks
                if latest.get(name) not in ("success", "neutral", "skipped")]

    def missing_approvals(self, pr: PullRequest) -> int:
        """Approvals a pull request into the default branch still needs (BEHAVIOUR §4): each
        reviewer's latest approving or changes-requesting review counts, only from accounts
        with write access, and with ``dismiss_stale_reviews`` only on the current head."""
        if pr.base_ref != self.default_branch or self.required_reviews == 0:
            return 0
        latest: dict[str, Review] = {}
        for review in pr.reviews:
            if review.state in ("APPROVED", "CHANGES_REQUESTED", "DISMISSED"):
                latest[review.user.lower()] = review
        approvals = sum(
            1 for review in latest.values()
            if review.state == "APPROVED"
            and self.permission(review.user) in (Permission.ADMIN, Permission.MAINTAIN,
                                                 Permission.WRITE)
            and (not self.dismiss_stale_reviews or review.commit_id == pr.head_sha))
        return max(0, self.required_reviews - approvals)

    def take_number(self) -> int:
        number = self.next_number
        self.next_number += 1
        return number


@dataclass
class World:
    """All state of one fake GitHub; ids come from one counter so they never collide."""

    app_id: int
    app_slug: str = "questbot"
    app_permissions: dict[str, str] = field(default_factory=lambda: dict(EVERYTHING))
    """The App's permissions (its manifest's ``default_permissions``), which every
    installation granted; every permission the fake knows unless a test installs a manifest."""
    app_events: frozenset[str] | None = None
    """The events the App subscribed to (``default_events``); ``None``: all of them."""
    installations: dict[int, Installation] = field(default_factory=dict)
    repositories: dict[str, Repository] = field(default_factory=dict)  # lowercased full name
    tokens: dict[str, Token] = field(default_factory=dict)
    revoked: dict[str, Token] = field(default_factory=dict)
    """Tokens no longer accepted (``FakeGitHub.revoke_tokens``), kept so tests can tell them
    from tokens that never existed (and the log checks can look for them)."""
    ids: itertools.count[int] = field(default_factory=lambda: itertools.count(1000))
    renamed: dict[str, int] = field(default_factory=dict)
    """A renamed repository's old full name (lowercased) → its id: the old name redirects
    (BEHAVIOUR §23)."""
    deleted: dict[int, Repository] = field(default_factory=dict)
    """Deleted repositories by id: answered by no name (404), kept as GitHub keeps them a
    while to be restored — and for tests to read what was there."""
    suites: dict[tuple[int, str, str], int] = field(default_factory=dict)
    """(repository id, App slug, commit) → check suite id (``suite_id``)."""

    def new_id(self) -> int:
        return next(self.ids)

    def app_id_of(self, slug: str) -> int:
        """The id of the App called ``slug``: this App's, GitHub Actions' (15368, as on
        github.com), or a stable one of its own for any other."""
        if slug == self.app_slug:
            return self.app_id
        if slug == "github-actions":
            return 15368
        return 100_000 + int(hashlib.sha256(slug.encode()).hexdigest()[:6], 16)

    def suite_id(self, repo: Repository, app_slug: str, sha: str) -> int:
        """The check suite of one App's runs on one commit of ``repo``: GitHub makes one per
        App and commit, and adds every run the App creates there to it (BEHAVIOUR §9)."""
        return self.suites.setdefault((repo.id, app_slug, sha), self.new_id())

    def subscribed(self, event: str) -> bool:
        """Whether GitHub sends ``event`` to the App: one it subscribed to and has the
        permission for, or one about its installation, which every App gets."""
        if event in ALWAYS_SENT:
            return True
        if self.app_events is not None and event not in self.app_events:
            return False
        needed = EVENTS.get(event)
        return needed is None or needed in self.app_permissions

    def repository(self, full_name: str) -> Repository | None:
        # GitHub treats owner and repository names case-insensitively.
        return self.repositories.get(full_name.lower())

    def repository_by_id(self, repo_id: int) -> Repository | None:
        return next((r for r in self.repositories.values() if r.id == repo_id), None)

    def installation_for(self, account: str) -> Installation:
        for installation in self.installations.values():
            if installation.account.lower() == account.lower():
                return installation
        installation = Installation(self.new_id(), account)
        self.installations[installation.id] = installation
        return installation
