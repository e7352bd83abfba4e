"""What each request needs of the App's permissions, and what each event needs to be sent.

An installation token carries the App's permissions (or the subset asked for when it was
made); a request they do not cover is answered 403 ``Resource not accessible by integration``
(BEHAVIOUR.md §13), and in GraphQL the field is ``null`` with an error of type ``FORBIDDEN``
(§16). The table is GitHub's own, from the data behind docs.github.com's "Permissions required
for GitHub Apps" (``perm-data`` in BEHAVIOUR.md §17); GitHub's REST description has no such
metadata (its ``x-github`` holds category, subcategory and notification flags only), so it is
kept here, one line an operation the fake implements. A need is a tuple of clauses, each a
tuple of alternatives: ``((("issues", WRITE), ("pull_requests", WRITE)),)`` is "issues: write
or pull_requests: write". Issue-thread operations accept ``pull_requests`` only on a pull
request's thread (``thread_need``). ``metadata: read`` every App has.

The events an App may subscribe to need a permission too (docs:
webhooks/webhook-events-and-payloads, the "Availability" and permission of each event);
GitHub sends an App only the events it subscribed to, except those about the App's
installation itself, which every App gets.
"""

from __future__ import annotations

from collections.abc import Mapping

READ, WRITE = "read", "write"
NOT_ACCESSIBLE = "Resource not accessible by integration"
LEVELS = {READ: 1, WRITE: 2, "admin": 3}

Clause = tuple[tuple[str, str], ...]
Need = tuple[Clause, ...]


def one(permission: str, level: str) -> Need:
    return (((permission, level),),)


def either(*alternatives: tuple[str, str]) -> Need:
    return (alternatives,)


NOTHING: Need = ()

OPERATIONS: dict[str, Need] = {
    "meta/root": NOTHING,
    "actions/download-job-logs-for-workflow-run": one("actions", READ),
    "actions/download-workflow-run-logs": one("actions", READ),
    "actions/list-jobs-for-workflow-run-attempt": one("actions", READ),
    "actions/get-job-for-workflow-run": one("actions", READ),
    "actions/get-workflow-run": one("actions", READ),
    "actions/re-run-job-for-workflow-run": one("actions", WRITE),
    "actions/re-run-workflow": one("actions", WRITE),
    "actions/re-run-workflow-failed-jobs": one("actions", WRITE),
    "checks/create": one("checks", WRITE),
    "checks/update": one("checks", WRITE),
    "checks/get": one("checks", READ),
    "checks/list-for-ref": one("checks", READ),
    "git/create-blob": one("contents", WRITE),
    "git/create-commit": one("contents", WRITE),
    "git/create-ref": one("contents", WRITE),
    "git/create-tree": one("contents", WRITE),
    "git/delete-ref": one("contents", WRITE),
    "git/update-ref": one("contents", WRITE),
    "git/get-blob": one("contents", READ),
    "git/get-commit": one("contents", READ),
    "git/get-ref": one("contents", READ),
    "git/get-tree": one("contents", READ),
    "issues/create": one("issues", WRITE),
    "issues/list-for-repo": one("issues", READ),
    "issues/create-label": either(("issues", WRITE), ("pull_requests", WRITE)),
    "issues/update-label": either(("issues", WRITE), ("pull_requests", WRITE)),
    "issues/delete-label": either(("issues", WRITE), ("pull_requests", WRITE)),
    "issues/get-label": either(("issues", READ), ("pull_requests", READ)),
    "issues/list-labels-for-repo": either(("issues", READ), ("pull_requests", READ)),
    "reactions/create-for-issue-comment": one("issues", WRITE),
    "pulls/create": one("pull_requests", WRITE),
    "pulls/update": one("pull_requests", WRITE),
    "pulls/request-reviewers": one("pull_requests", WRITE),
    "pulls/remove-requested-reviewers": one("pull_requests", WRITE),
    "pulls/create-review": one("pull_requests", WRITE),
    "pulls/update-branch": one("pull_requests", WRITE),
    "pulls/get": one("pull_requests", READ),
    "pulls/list": one("pull_requests", READ),
    "pulls/list-reviews": one("pull_requests", READ),
    "pulls/merge": one("contents", WRITE),
    "repos/merge": one("contents", WRITE),
    "repos/compare-commits": one("contents", READ),
    "repos/get-content": one("contents", READ),
    "repos/create-commit-status": one("statuses", WRITE),
    "repos/list-commit-statuses-for-ref": one("statuses", READ),
    "repos/get-combined-status-for-ref": one("statuses", READ),
    "repos/get": one("metadata", READ),
    "repos/get-collaborator-permission-level": one("metadata", READ),
}
"""Operations an installation token may call (the JWT-only ``apps/*`` ones are not here)."""

THREAD: dict[str, str] = {
    "issues/create-comment": WRITE,
    "issues/update-comment": WRITE,
    "issues/list-comments": READ,
    "issues/update": WRITE,
    "issues/add-labels": WRITE,
    "issues/remove-label": WRITE,
    "issues/add-assignees": WRITE,
    "issues/remove-assignees": WRITE,
    "issues/lock": WRITE,
    "issues/unlock": WRITE,
}
"""Issue-thread operations: ``issues`` on any thread, or ``pull_requests`` on a pull
request's (a pull request is an issue; perm-data lists these under both)."""

GRAPHQL: dict[str, Need] = {
    "node": NOTHING,
    "repository": NOTHING,
    "markPullRequestReadyForReview": one("pull_requests", WRITE),
    "convertPullRequestToDraft": one("pull_requests", WRITE),
    # (unconfirmed) no source says which permission these check; the fake asks for either
    "enablePullRequestAutoMerge": either(("pull_requests", WRITE), ("contents", WRITE)),
    "disablePullRequestAutoMerge": either(("pull_requests", WRITE), ("contents", WRITE)),
    "enqueuePullRequest": either(("merge_queues", WRITE), ("contents", WRITE)),
    "dequeuePullRequest": either(("merge_queues", WRITE), ("contents", WRITE)),
    "revertPullRequest": (((("contents", WRITE),), (("pull_requests", WRITE),))),
    "pinIssue": one("issues", WRITE),  # BEHAVIOUR §8: pinning needs write access
    # the same permissions as the REST operations they stand for (perm-data: checks/create and
    # checks/update need checks: write; issues/update issues: write; pulls/update
    # pull_requests: write; a comment's edit issues: write, or pull_requests: write on a pull
    # request's thread — the fake accepts either, not knowing the thread from the id alone)
    "createCheckRun": one("checks", WRITE),
    "updateCheckRun": one("checks", WRITE),
    "updateIssue": one("issues", WRITE),
    "updatePullRequest": one("pull_requests", WRITE),
    "updateIssueComment": either(("issues", WRITE), ("pull_requests", WRITE)),
}
"""GraphQL root fields; what a query reads inside ``node``/``repository`` is not checked."""

EVENTS: dict[str, str] = {
    "check_run": "checks",
    "check_suite": "checks",
    "workflow_run": "actions",
    "workflow_job": "actions",
    "issues": "issues",
    "issue_comment": "issues",
    "pull_request": "pull_requests",
    "pull_request_review": "pull_requests",
    "pull_request_review_comment": "pull_requests",
    "push": "contents",
    "status": "statuses",
    "merge_group": "merge_queues",
    "repository": "metadata",
}
"""The permission (read or more) an App needs to subscribe to each event."""

ALWAYS_SENT = frozenset({"installation", "installation_repositories", "ping"})
"""Events about the App's own installation: every App gets them, unsubscribed."""

EVERYTHING: dict[str, str] = {
    **{p: WRITE for need in [*OPERATIONS.values(), *GRAPHQL.values()]
       for clause in need for p, _level in clause},
    **{p: WRITE for p in (*EVENTS.values(), "issues", "pull_requests")},
    "metadata": READ,
}
"""An App with every permission the fake knows: the default, for tests not about them."""


def thread_need(operation: str, pull_request: bool) -> Need:
    level = THREAD[operation]
    if pull_request:
        return either(("issues", level), ("pull_requests", level))
    return one("issues", level)


def covers(granted: Mapping[str, str], permission: str, level: str) -> bool:
    if permission == "metadata":
        return True
    have = granted.get(permission)
    return have is not None and LEVELS.get(have, 0) >= LEVELS[level]


def used(granted: Mapping[str, str], need: Need) -> list[tuple[str, str]] | None:
    """The permission each clause of ``need`` was met by (its first alternative the token
    has), or ``None`` when some clause is not met: the request is refused."""
    met = []
    for clause in need:
        found = next(((p, lvl) for p, lvl in clause if covers(granted, p, lvl)), None)
        if found is None:
            return None
        met.append(found)
    return met


def not_granted(requested: Mapping[str, str], granted: Mapping[str, str]) -> list[str]:
    """Permissions a token request asks for beyond the installation's (§13: 422)."""
    return sorted(p for p, lvl in requested.items() if not covers(granted, p, lvl)
                  or (p == "metadata" and lvl != READ))
