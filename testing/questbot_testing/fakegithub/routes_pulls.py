"""Handlers for pull requests: create, list, get, update, merge (pinned to a head SHA),
reviewers, reviews and update-branch, each with GitHub's refusals (``fakegithub.rules``).

Merging honours ``sha`` as GitHub does: a head that moved since the caller looked answers 409
"Head branch was modified", so an approval bound to one SHA can never land another; a draft,
a disabled merge method, a merge queue, missing approvals or a required check that has not
passed answer 405.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from questbot_testing.fakegithub import rules
from questbot_testing.fakegithub.calls import Call, GitHubError, Handler, Reply, not_found
from questbot_testing.fakegithub.routes_issues import bot_login, paged, unsupported, with_link
from questbot_testing.fakegithub.state import PullRequest, Repository, Review, iso

if TYPE_CHECKING:
    from questbot_testing.fakegithub.server import FakeGitHub


def find_pull(repo: Repository, number: int) -> PullRequest:
    pr = repo.pulls.get(number)
    if pr is None:
        raise not_found()
    return pr


async def create_pull(call: Call) -> Reply:
    """``pulls/create`` with GitHub's refusals, in the order it checks them (BEHAVIOUR §1)."""
    repo, body = call.repository, call.body
    head = body["head"].split(":", 1)[-1]
    head_sha, base_sha = repo.branch_sha(head), repo.branch_sha(body["base"])
    if head_sha is None or base_sha is None:
        raise rules.validation_failed("PullRequest", "invalid",
                                      field="head" if head_sha is None else "base")
    if "title" not in body and "issue" not in body:
        raise rules.title_missing()
    rules.body_within_limit("PullRequest", body.get("body"))
    for pr in repo.pulls.values():
        if (pr.head_ref == head and not pr.head_repo and pr.base_ref == body["base"]
                and pull_state(repo, pr) == "open"):
            raise rules.pull_already_exists(repo.owner, head)
    if repo.git.is_ancestor(head_sha, base_sha):
        raise rules.no_commits_between(body["base"], head)
    draft = bool(body.get("draft", False))
    if draft and not repo.drafts_supported:
        raise rules.drafts_not_supported()
    pr = call.fake.add_pull(repo, head, body["base"], body.get("title", head), body.get("body"),
                            bot_login(call), draft=draft)
    return Reply(201, call.render.pull_request(repo, pr))


async def update_pull(call: Call) -> Reply:
    """``pulls/update``: title, body and state (it has no ``draft``: that is GraphQL's)."""
    repo = call.repository
    pr = find_pull(repo, call.int_param("pull_number"))
    await change_pull(call.fake, repo, pr, call.body or {}, bot_login(call))
    return Reply(200, call.render.pull_request(repo, pr))


async def change_pull(fake: FakeGitHub, repo: Repository, pr: PullRequest,
                      body: dict[str, Any], login: str) -> None:
    """A ``pulls/update`` body applied (REST's, or GraphQL's ``updatePullRequest`` read into
    it). A closed pull request whose branch is gone cannot be reopened (BEHAVIOUR §2); closing
    or reopening sends its webhook."""
    issue = repo.issues[pr.number]
    rules.body_within_limit("PullRequest", body.get("body"))
    if "state" in body and pr.merged:
        raise rules.validation_failed("PullRequest", "custom", field="state",
                                      message="state cannot be changed. The pull request has "
                                      "been merged.")  # wording unconfirmed
    if body.get("state") == "open" and issue.state == "closed" and (
            repo.branch_sha(pr.head_ref) is None):
        raise rules.validation_failed("PullRequest", "custom", field="state",
                                      message="state cannot be changed. The "
                                      f"{pr.head_ref} branch has been deleted.")
    if "title" in body:
        issue.title = str(body["title"])
    if "body" in body:
        issue.body = body["body"]
    if "state" in body:
        await fake.set_pull_state(repo, pr, body["state"], user=login)


def pull_state(repo: Repository, pr: PullRequest) -> str:
    return "closed" if pr.merged else repo.issues[pr.number].state


async def list_pulls(call: Call) -> Reply:
    """``pulls/list`` by ``state`` (default open; merged ones are closed), ``head`` and
    ``base``, newest first unless ``direction=asc``, paged. ``head`` filters only in GitHub's
    ``owner:branch`` form; a bare branch name is silently ignored, as on GitHub
    (https://github.com/orgs/community/discussions/24354)."""
    unsupported(call, "pulls/list", ("state", "head", "base", "sort", "direction"))
    repo = call.repository
    state = call.query.get("state", "open")
    pulls = [pr for pr in repo.pulls.values()
             if state == "all" or pull_state(repo, pr) == state]
    owner, colon, branch = call.query.get("head", "").partition(":")
    if colon:  # the owner of the head's repository: a fork's owner for a fork's head
        pulls = [pr for pr in pulls if pr.head_ref == branch and owner.lower() == (
            pr.head_repo.split("/")[0] if pr.head_repo else repo.owner).lower()]
    if "base" in call.query:
        pulls = [pr for pr in pulls if pr.base_ref == call.query["base"]]
    sort = call.query.get("sort", "created")
    if sort not in ("created", "updated"):
        call.fake.violations.append(f"pulls/list: the fake does not implement sort={sort}")
    pulls.sort(key=lambda pr: pr.number)
    default = "desc" if sort == "created" else "asc"
    if call.query.get("direction", default) == "desc":
        pulls.reverse()
    shown, link = paged(call, pulls, "pulls", ("state", "head", "base", "sort", "direction"))
    return with_link(Reply(200, [call.render.pull_simple(repo, pr) for pr in shown]), link)


async def get_pull(call: Call) -> Reply:
    repo = call.repository
    pr = find_pull(repo, call.int_param("pull_number"))
    return Reply(200, call.render.pull_request(repo, pr))


async def merge_pull(call: Call) -> Reply:
    """``pulls/merge`` with GitHub's refusals (BEHAVIOUR §5): closed or merged 405, a draft
    405, a moved head 409, a disabled method 405, a merge queue 405, too few approvals 405, a
    required check that has not passed 405."""
    repo, body = call.repository, call.body or {}
    pr = find_pull(repo, call.int_param("pull_number"))
    if pull_state(repo, pr) != "open":
        raise GitHubError(405, rules.NOT_MERGEABLE)
    if pr.draft:
        raise GitHubError(405, rules.STILL_A_DRAFT)
    if body.get("sha") is not None and body["sha"] != pr.head_sha:
        raise GitHubError(409, rules.HEAD_MODIFIED)
    method = body.get("merge_method", "merge")
    if not merge_allowed(repo, method):
        raise GitHubError(405, rules.METHOD_NOT_ALLOWED[method])
    if repo.linear_history and method == "merge" and pr.base_ref == repo.default_branch:
        raise GitHubError(405, rules.NO_MERGE_COMMITS)
    if repo.merge_queue and pr.base_ref == repo.default_branch:
        raise GitHubError(405, rules.THROUGH_THE_QUEUE)
    if repo.required_reviews and repo.missing_approvals(pr):
        raise rules.approvals_required(repo.required_reviews)
    missing = repo.missing_checks(pr)
    if missing:
        raise rules.required_check_expected(missing[0])
    sha = await call.fake.merge_pull(repo, pr, bot_login(call), method, body.get("commit_title"))
    return Reply(200, {"sha": sha, "merged": True, "message": "Pull Request successfully merged"})


def merge_allowed(repo: Repository, method: str) -> bool:
    return {"merge": repo.allow_merge_commit, "squash": repo.allow_squash_merge,
            "rebase": repo.allow_rebase_merge}[method]


async def request_reviewers(call: Call) -> Reply:
    """BEHAVIOUR §3: never the author; only collaborators."""
    repo, body = call.repository, call.body or {}
    pr = find_pull(repo, call.int_param("pull_number"))
    author = repo.issues[pr.number].user
    logins = list(body.get("reviewers", []))
    for login in logins:
        if login.lower() == author.lower():
            raise GitHubError(422, rules.AUTHOR_REVIEW_REQUEST)
        if repo.permission(login) == "none":
            raise rules.not_a_collaborator(repo.full_name)
    for login in logins:
        if login not in pr.requested_reviewers:
            pr.requested_reviewers.append(login)
    return Reply(201, call.render.pull_simple(repo, pr))


async def remove_reviewers(call: Call) -> Reply:
    repo, body = call.repository, call.body
    pr = find_pull(repo, call.int_param("pull_number"))
    pr.requested_reviewers = [r for r in pr.requested_reviewers if r not in body["reviewers"]]
    return Reply(200, call.render.pull_simple(repo, pr))


async def create_review(call: Call) -> Reply:
    """BEHAVIOUR §4: a body for REQUEST_CHANGES and COMMENT; the author may not approve or
    request changes; one pending review per account."""
    repo, body = call.repository, call.body or {}
    pr = find_pull(repo, call.int_param("pull_number"))
    event = body.get("event")
    state = {
        "APPROVE": "APPROVED",
        "REQUEST_CHANGES": "CHANGES_REQUESTED",
        "COMMENT": "COMMENTED",
    }.get(event or "", "PENDING")
    if event in ("REQUEST_CHANGES", "COMMENT") and not body.get("body"):
        raise GitHubError(
            422, "Unprocessable Entity", errors=[f"Review body is required when event is {event}"]
        )
    reviewer = bot_login(call)
    if event in ("APPROVE", "REQUEST_CHANGES") and reviewer == repo.issues[pr.number].user:
        raise rules.own_review(event)
    if state == "PENDING" and any(r.user == reviewer and r.state == "PENDING"
                                  for r in pr.reviews):
        raise GitHubError(422, "Unprocessable Entity", errors=[rules.ONE_PENDING_REVIEW])
    review = Review(
        call.world.new_id(),
        reviewer,
        state,
        body.get("body", ""),
        body.get("commit_id", pr.head_sha),
        iso(),
    )
    pr.reviews.append(review)
    return Reply(200, call.render.review(repo, pr.number, review))


async def list_reviews(call: Call) -> Reply:
    """``pulls/list-reviews``: oldest first, paged."""
    repo = call.repository
    pr = find_pull(repo, call.int_param("pull_number"))
    shown, link = paged(call, pr.reviews, f"pulls/{pr.number}/reviews", ())
    return with_link(Reply(200, [call.render.review(repo, pr.number, r) for r in shown]), link)


async def update_branch(call: Call) -> Reply:
    repo, body = call.repository, call.body or {}
    pr = find_pull(repo, call.int_param("pull_number"))
    expected = body.get("expected_head_sha")
    if expected is not None and expected != pr.head_sha:
        raise GitHubError(422, "expected_head_sha does not match the pull request's head sha")
    if repo.git.is_ancestor(repo.refs[f"refs/heads/{pr.base_ref}"], pr.head_sha):
        raise GitHubError(422, rules.NO_NEW_COMMITS)
    if not await call.fake.update_pull_branch(repo, pr, bot_login(call)):
        raise GitHubError(422, "merge conflict between base and head")  # (unconfirmed)
    return Reply(
        202,
        {
            "message": "Updating pull request branch.",
            "url": f"https://github.com/repos/{repo.full_name}/pulls/{pr.number}",
        },
    )


HANDLERS: dict[str, Handler] = {
    "pulls/create": create_pull,
    "pulls/list": list_pulls,
    "pulls/get": get_pull,
    "pulls/update": update_pull,
    "pulls/merge": merge_pull,
    "pulls/request-reviewers": request_reviewers,
    "pulls/remove-requested-reviewers": remove_reviewers,
    "pulls/create-review": create_review,
    "pulls/list-reviews": list_reviews,
    "pulls/update-branch": update_branch,
}
