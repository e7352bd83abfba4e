"""GitHub's refusals that the REST description does not spell out, as the fake enforces them.

The description says which fields a request may carry; ``../shared/github/BEHAVIOUR.md`` says
what GitHub refuses beyond that — a pull request with nothing in it, a second one from the same
branch, a body past 65,536 characters, a merge of a draft. Each rule here is one line of that
file (its section in the docstring), raising the status and body GitHub answers with; the
handlers call them before they change anything, so a refused request leaves the world as it
was. ``tests/test_fake_rules.py`` has a test per rule.

Messages quoted in BEHAVIOUR.md are reproduced exactly (questbot matches on some of them);
the few it marks **(unconfirmed)** are GitHub's likely wording and no test depends on them.
"""

from __future__ import annotations

from typing import Any

from tests.fakegithub.calls import GitHubError

BODY_LIMIT = 65_536
"""Characters in an issue, pull request or comment body (§7)."""
OUTPUT_LIMIT = 65_535
"""Characters in a check run's ``output.summary`` and ``output.text`` (§9); the description
says so too, as ``maxLength``."""


def validation_failed(resource: str, code: str, *, field: str | None = None,
                      message: str | None = None) -> GitHubError:
    """422 ``Validation Failed`` with one ``errors`` entry (OA schema ``validation-error``)."""
    error: dict[str, Any] = {"resource": resource, "code": code}
    if field is not None:
        error["field"] = field
    if message is not None:
        error["message"] = message
    return GitHubError(422, "Validation Failed", errors=[error])


def invalid_request(detail: str) -> GitHubError:
    """422 for a body that breaks the request schema: ``Invalid request.`` and what broke (§0)."""
    return GitHubError(422, f"Invalid request.\n\n{detail}")


def body_within_limit(resource: str, body: object) -> None:
    """§7: a body over 65,536 characters is refused (issue comments quoted; issues and pull
    requests share the limit)."""
    if isinstance(body, str) and len(body) > BODY_LIMIT:
        raise validation_failed(resource, "custom", field="body",
                                message=f"body is too long (maximum is {BODY_LIMIT} characters)")


# -- pull requests (§1, §2, §5) ---------------------------------------------------------------


def no_commits_between(base: str, head: str) -> GitHubError:
    return validation_failed("PullRequest", "custom", message=f"No commits between {base} and "
                             f"{head}")


def pull_already_exists(owner: str, head: str) -> GitHubError:
    return validation_failed("PullRequest", "custom",
                             message=f"A pull request already exists for {owner}:{head}.")


def drafts_not_supported() -> GitHubError:
    return validation_failed("PullRequest", "custom",
                             message="Draft pull requests are not supported in this repository.")


def title_missing() -> GitHubError:
    """A pull request needs a title unless it is made from an issue (wording unconfirmed)."""
    return validation_failed("PullRequest", "missing_field", field="title")


METHOD_NOT_ALLOWED = {
    "merge": "Merge commits are not allowed on this repository.",
    "squash": "Squash merges are not allowed on this repository.",  # (unconfirmed)
    "rebase": "Rebase merges are not allowed on this repository.",  # (unconfirmed)
}
NOT_MERGEABLE = "Pull Request is not mergeable"
NO_MERGE_COMMITS = "This branch must not contain merge commits."
STILL_A_DRAFT = "Pull Request is still a draft"
HEAD_MODIFIED = "Head branch was modified. Review and try the merge again."
THROUGH_THE_QUEUE = "Changes must be made through the merge queue"
NO_NEW_COMMITS = "There are no new commits on the base branch."


def required_check_expected(name: str) -> GitHubError:
    return GitHubError(405, f'Required status check "{name}" is expected.')


def approvals_required(count: int) -> GitHubError:
    """§4, §5: approvals missing; GitHub's wording for one is quoted, for more it is
    (unconfirmed)."""
    if count == 1:
        return GitHubError(405, "At least 1 approving review is required by reviewers with "
                           "write access.")
    return GitHubError(405, f"At least {count} approving reviews are required by reviewers "
                       "with write access.")


# -- reviews (§3, §4) -------------------------------------------------------------------------

AUTHOR_REVIEW_REQUEST = "Review cannot be requested from pull request author."


def not_a_collaborator(full_name: str) -> GitHubError:
    return GitHubError(422, "Reviews may only be requested from collaborators. One or more of "
                       "the users or teams you specified is not a collaborator of the "
                       f"{full_name} repository.")


def own_review(event: str) -> GitHubError:
    """The author approving (quoted) or requesting changes (wording unconfirmed) on their own
    pull request; reviews answer ``errors`` as plain strings (``validation-error-simple``)."""
    what = "approve" if event == "APPROVE" else "request changes on"
    return GitHubError(422, "Unprocessable Entity", errors=[f"Can not {what} your own pull "
                                                            "request"])


ONE_PENDING_REVIEW = "User can only have one pending review per pull request"

# -- issues (§8) ------------------------------------------------------------------------------

ISSUE_LOCKED = "Unable to create comment because issue is locked."

# -- check runs (§9) --------------------------------------------------------------------------


def conclusion_required(body: dict[str, Any]) -> None:
    """§9: ``conclusion`` is required with ``status: completed`` or a ``completed_at``. The
    upstream description says so with a ``oneOf`` that ``@octokit/openapi`` leaves out of
    ``checks/create`` (and keeps, as ``anyOf``, in ``checks/update``)."""
    if (body.get("status") == "completed" or "completed_at" in body) and not body.get(
            "conclusion"):
        raise invalid_request("`conclusion` is required when `status` is `completed` or "
                              "`completed_at` is given.")


# -- git data (§11) ---------------------------------------------------------------------------

CONTENTS_LIMIT = 1024 * 1024
"""Bytes the contents API returns as JSON; beyond it only the raw and object media types."""
DIRECTORY_LIMIT = 1000
"""Entries a contents directory listing returns at most (the rest are silently left out)."""


def blob_too_large() -> GitHubError:
    return GitHubError(403, "This API returns blobs up to 1 MB in size. The requested blob is "
                       "too large to fetch via the API, but you can use the Git Data API to "
                       "request blobs up to 100 MB in size.",
                       errors=[{"resource": "Blob", "field": "data", "code": "too_large"}])
