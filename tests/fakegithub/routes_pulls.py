"""Handlers for pull requests: create, get, merge (pinned to a head SHA), reviewers, reviews and
update-branch.

Merging honours ``sha`` as GitHub does: a head that moved since the caller looked answers 409
"Head branch was modified", so an approval bound to one SHA can never land another.
"""

from __future__ import annotations

from tests.fakegithub.calls import Call, GitHubError, Handler, Reply, not_found
from tests.fakegithub.routes_issues import bot_login, paged, unsupported, with_link
from tests.fakegithub.state import PullRequest, Repository, Review, iso


def find_pull(repo: Repository, number: int) -> PullRequest:
    pr = repo.pulls.get(number)
    if pr is None:
        raise not_found()
    return pr


async def create_pull(call: Call) -> Reply:
    repo, body = call.repository, call.body
    head = body["head"].split(":", 1)[-1]
    if repo.branch_sha(head) is None or repo.branch_sha(body["base"]) is None:
        raise GitHubError(
            422,
            "Validation Failed",
            errors=[
                {
                    "resource": "PullRequest",
                    "field": "head" if repo.branch_sha(head) is None else "base",
                    "code": "invalid",
                }
            ],
        )
    for pr in repo.pulls.values():
        if pr.head_ref == head and repo.issues[pr.number].state == "open":
            raise GitHubError(
                422,
                "Validation Failed",
                errors=[
                    {
                        "resource": "PullRequest",
                        "code": "custom",
                        "message": f"A pull request already exists for {repo.owner}:{head}.",
                    }
                ],
            )
    pr = call.fake.add_pull(
        repo,
        head,
        body["base"],
        body.get("title", head),
        body.get("body"),
        bot_login(call),
        draft=bool(body.get("draft", False)),
    )
    return Reply(201, call.render.pull_request(repo, pr))


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
    if colon:
        pulls = [pr for pr in pulls
                 if owner.lower() == repo.owner.lower() and pr.head_ref == branch]
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
    repo, body = call.repository, call.body or {}
    pr = find_pull(repo, call.int_param("pull_number"))
    if pr.merged or repo.issues[pr.number].state != "open":
        raise GitHubError(405, "Pull Request is not mergeable")
    if pr.draft:
        raise GitHubError(405, "Pull Request is still a draft")
    if body.get("sha") is not None and body["sha"] != pr.head_sha:
        raise GitHubError(409, "Head branch was modified. Review and try the merge again.")
    sha = await call.fake.merge_pull(
        repo, pr, bot_login(call), body.get("merge_method", "merge"), body.get("commit_title")
    )
    return Reply(200, {"sha": sha, "merged": True, "message": "Pull Request successfully merged"})


async def request_reviewers(call: Call) -> Reply:
    repo, body = call.repository, call.body
    pr = find_pull(repo, call.int_param("pull_number"))
    author = repo.issues[pr.number].user
    for login in body.get("reviewers", []):
        if login == author:
            raise GitHubError(422, "Review cannot be requested from pull request author.")
        if repo.permission(login) == "none":
            raise GitHubError(
                422,
                "Reviews may only be requested from collaborators. "
                f"One or more of the users or teams you specified is not a "
                f"collaborator of the {repo.full_name} repository.",
            )
        if login not in pr.requested_reviewers:
            pr.requested_reviewers.append(login)
    return Reply(201, call.render.pull_simple(repo, pr))


async def remove_reviewers(call: Call) -> Reply:
    repo, body = call.repository, call.body
    pr = find_pull(repo, call.int_param("pull_number"))
    pr.requested_reviewers = [r for r in pr.requested_reviewers if r not in body["reviewers"]]
    return Reply(200, call.render.pull_simple(repo, pr))


async def create_review(call: Call) -> Reply:
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
    review = Review(
        call.world.new_id(),
        bot_login(call),
        state,
        body.get("body", ""),
        body.get("commit_id", pr.head_sha),
        iso(),
    )
    pr.reviews.append(review)
    return Reply(200, call.render.review(repo, pr.number, review))


async def update_branch(call: Call) -> Reply:
    repo, body = call.repository, call.body or {}
    pr = find_pull(repo, call.int_param("pull_number"))
    expected = body.get("expected_head_sha")
    if expected is not None and expected != pr.head_sha:
        raise GitHubError(422, "expected_head_sha does not match the pull request's head sha")
    if not await call.fake.update_pull_branch(repo, pr, bot_login(call)):
        raise GitHubError(422, "merge conflict between base and head")
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
    "pulls/merge": merge_pull,
    "pulls/request-reviewers": request_reviewers,
    "pulls/remove-requested-reviewers": remove_reviewers,
    "pulls/create-review": create_review,
    "pulls/update-branch": update_branch,
}
