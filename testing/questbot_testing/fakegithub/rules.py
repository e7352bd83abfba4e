"""GitHub's refusals that the REST description does not spell out, as the fake enforces them.

The description says which fields a request may carry; ``docs/BEHAVIOUR.md`` says
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

from questbot_testing.fakegithub.calls import GitHubError

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


# -- git over HTTPS (§11, §12; served by ``fakegithub.smarthttp``) ------------------------
#
# The smart-HTTP endpoints answer as github.com's do: HTTP basic with the installation token
# as the password (user ``x-access-token``; GitHub takes the token as the user name too),
# needing the Contents permission (§12). What GitHub answers is text for git, not JSON.

GIT_REALM = 'Basic realm="GitHub"'
GIT_BAD_CREDENTIALS = ("Invalid username or token. Password authentication is not supported "
                       "for Git operations.\n")
"""401: no credentials where they are needed, an unknown token, or an expired one (the token
dies after an hour, §12)."""
GIT_NOT_FOUND = "Repository not found.\n"
"""404: a private repository the token cannot see (another installation's)."""


def git_push_denied(full_name: str, login: str) -> str:
    """403 text for a push with a token that may read and not write the repository."""
    return f"Permission to {full_name}.git denied to {login}.\n"


def workflow_refused(path: str) -> str:
    """§11: a push creating or updating a workflow file with a token that has no
    ``workflows`` permission (quoted from GitHub's answer to git)."""
    return (f"refusing to allow a GitHub App to create or update workflow `{path}` without "
            "`workflows` permission")


def protected_branch_refused(ref: str, reason: str) -> str:
    """A direct push to a protected branch. GitHub's ``GH006`` answer is not quoted in
    BEHAVIOUR.md (wording unconfirmed); the reason is §5's for a merge that the same
    protection refuses."""
    return f"GH006: Protected branch update failed for {ref}.\n{reason}"


def push_refusal(ref: str, old: str, new: str, changed: list[str], *, default_ref: str,
                 protection: list[str], merge_queue: bool,
                 workflows: bool) -> str | None:
    """Why GitHub refuses one ref update of a push, or ``None``: the rules the pre-receive
    hook of ``fakegithub.smarthttp`` applies, with the paths the pushed commits change.

    * the default branch cannot be deleted (wording unconfirmed);
    * a protected default branch (required checks, or a merge queue: §5, §6) takes no direct
      push;
    * a workflow file changes only with the ``workflows`` permission (§11, §17)."""
    if set(new) == {"0"}:
        if ref == default_ref:
            return f"refusing to delete the current branch: {ref}"
        return None
    if ref == default_ref and merge_queue:
        return protected_branch_refused(ref, THROUGH_THE_QUEUE)
    if ref == default_ref and protection:
        return protected_branch_refused(ref, f'Required status check "{protection[0]}" is '
                                        "expected.")
    if not workflows:
        for path in changed:
            if path.startswith(".github/workflows/"):
                return workflow_refused(path)
    return None
