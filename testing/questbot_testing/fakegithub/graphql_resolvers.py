"""The fake's GraphQL resolvers: what REST cannot do for a pull request, over the same world.

Queries: ``node(id:)`` and ``repository(owner:, name:) { pullRequest(number:) }``. Mutations
(GQL names; BEHAVIOUR §2, §6, §10): ``markPullRequestReadyForReview`` and
``convertPullRequestToDraft`` (with the ``pull_request`` ``ready_for_review`` /
``converted_to_draft`` webhooks), ``enablePullRequestAutoMerge`` / ``disable…``,
``enqueuePullRequest`` / ``dequeuePullRequest``, ``revertPullRequest``, and ``pinIssue``
(BEHAVIOUR §8: at most ``MAX_PINNED`` pinned issues per repository; a fourth
is refused, wording unconfirmed). Each takes the pull request's (or issue's) ``node_id`` as
REST gives it (``fakegithub.nodes``) and refuses what
GitHub refuses: an id it cannot resolve (``NOT_FOUND``), a head that moved from
``expectedHeadOid``, auto-merge where the repository does not allow it or the pull request is
already mergeable ("Pull request Pull request is in clean status"), a queue where there is none.
Wording BEHAVIOUR.md does not quote is marked (unconfirmed).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from questbot_testing.fakegithub import nodes
from questbot_testing.fakegithub.calls import GitHubError
from questbot_testing.fakegithub.graphql import Model, Refused, not_found
from questbot_testing.fakegithub.render import mergeable_state
from questbot_testing.fakegithub.state import (
    AutoMerge,
    Issue,
    PullRequest,
    QueueEntry,
    Repository,
    iso,
)

if TYPE_CHECKING:
    from questbot_testing.fakegithub.server import FakeGitHub

ROOT_FIELDS = ("node", "repository", "markPullRequestReadyForReview",
               "convertPullRequestToDraft", "enablePullRequestAutoMerge",
               "disablePullRequestAutoMerge", "enqueuePullRequest", "dequeuePullRequest",
               "revertPullRequest", "pinIssue", "createCheckRun", "updateCheckRun",
               "updateIssueComment", "updateIssue", "updatePullRequest")
MAX_PINNED = 3
"""Pinned issues a repository may have at once (BEHAVIOUR §8)."""


def _actor(login: str) -> Model:
    kind = "Bot" if login.endswith("[bot]") else "User"
    return Model(__typename=kind, login=login.removesuffix("[bot]") if kind == "Bot" else login,
                 url=f"https://github.com/{login}")


class PullRoots:
    """``Query`` and ``Mutation`` fields, for one installation's token: the pull request's
    own (``Roots`` adds REST's edits)."""

    def __init__(self, fake: FakeGitHub, installation_id: int) -> None:
        self.fake = fake
        self.world = fake.world
        self.installation_id = installation_id
        self.login = f"{fake.world.app_slug}[bot]"

    def model(self) -> Model:
        """The root value: the fields below, and no other (one the fake lacks is a
        violation, like any field it does not model)."""
        return Model({name: getattr(self, name) for name in ROOT_FIELDS})

    # -- lookups ---------------------------------------------------------------------------

    def _visible(self, repo: Repository | None) -> Repository | None:
        return repo if repo is not None and repo.installation_id == self.installation_id else None

    def _pull(self, node_id: object) -> tuple[Repository, PullRequest]:
        decoded = nodes.decode(str(node_id))
        if decoded is None or decoded[0] != nodes.PULL_REQUEST:
            raise not_found(node_id)
        repo = self._visible(self.world.repository_by_id(decoded[1]))
        pr = repo.pulls.get(decoded[2]) if repo else None
        if repo is None or pr is None:
            raise not_found(node_id)
        return repo, pr

    def _issue(self, node_id: object) -> tuple[Repository, Issue]:
        decoded = nodes.decode(str(node_id))
        if decoded is None or decoded[0] != nodes.ISSUE:
            raise not_found(node_id)
        repo = self._visible(self.world.repository_by_id(decoded[1]))
        issue = repo.issues.get(decoded[2]) if repo else None
        if repo is None or issue is None or issue.is_pull_request:
            raise not_found(node_id)
        return repo, issue

    def issue_model(self, repo: Repository, issue: Issue) -> Model:
        return Model(__typename="Issue", id=nodes.node_id(nodes.ISSUE, repo.id, issue.number),
                     databaseId=repo.id * 100000 + issue.number, number=issue.number,
                     title=issue.title, state=issue.state.upper(),
                     isPinned=bool(issue.pinned_at), closed=issue.state == "closed",
                     url=f"https://github.com/{repo.full_name}/issues/{issue.number}")

    def _expect_head(self, pr: PullRequest, expected: object) -> None:
        if expected is not None and expected != pr.head_sha:
            # (unconfirmed wording)
            raise Refused("UNPROCESSABLE", "Head sha didn't match expected head sha")

    def pull_model(self, repo: Repository, pr: PullRequest) -> Model:
        issue = repo.issues[pr.number]
        state = "MERGED" if pr.merged else ("OPEN" if issue.state == "open" else "CLOSED")
        auto = pr.auto_merge
        return Model(
            __typename="PullRequest",
            id=nodes.node_id(nodes.PULL_REQUEST, repo.id, pr.number),
            databaseId=repo.id * 100000 + pr.number, number=pr.number, title=issue.title,
            body=issue.body or "", url=f"https://github.com/{repo.full_name}/pull/{pr.number}",
            isDraft=pr.draft, state=state, merged=pr.merged, closed=state != "OPEN",
            mergedAt=pr.merged_at, headRefName=pr.head_ref, headRefOid=pr.head_sha,
            baseRefName=pr.base_ref, baseRefOid=pr.base_sha, createdAt=issue.created_at,
            mergeable="UNKNOWN" if pr.merged else "MERGEABLE",
            mergeStateStatus=mergeable_state(repo, pr).upper(),
            author=_actor(issue.user),
            autoMergeRequest=None if auto is None else Model(
                __typename="AutoMergeRequest", mergeMethod=auto.method, enabledAt=auto.enabled_at,
                enabledBy=_actor(auto.enabled_by)),
            mergeQueueEntry=None if pr.queued is None else self.queue_model(repo, pr),
            repository=self.repo_model(repo))

    def queue_model(self, repo: Repository, pr: PullRequest) -> Model:
        entry = pr.queued
        assert entry is not None
        queue = [p for p in repo.pulls.values() if p.queued is not None]
        queue.sort(key=lambda p: p.queued.id if p.queued else 0)
        return Model(__typename="MergeQueueEntry", id=f"MQE_kw{entry.id}", state=entry.state,
                     position=queue.index(pr) + 1, enqueuedAt=entry.enqueued_at, jump=False,
                     solo=False, enqueuer=_actor(entry.enqueued_by),
                     pullRequest=lambda: self.pull_model(repo, pr))

    def repo_model(self, repo: Repository) -> Model:
        def pull_request(number: int) -> Model:
            pr = repo.pulls.get(number)
            if pr is None:
                raise Refused("NOT_FOUND", f"Could not resolve to a PullRequest with the number "
                                           f"of {number}.")
            return self.pull_model(repo, pr)

        return Model(__typename="Repository", id=f"R_{repo.id}", databaseId=repo.id,
                     name=repo.name, nameWithOwner=repo.full_name,
                     url=f"https://github.com/{repo.full_name}",
                     autoMergeAllowed=repo.allow_auto_merge,
                     mergeCommitAllowed=repo.allow_merge_commit,
                     squashMergeAllowed=repo.allow_squash_merge,
                     rebaseMergeAllowed=repo.allow_rebase_merge, pullRequest=pull_request)

    # -- Query -----------------------------------------------------------------------------

    def node(self, id: str) -> Model:
        repo, pr = self._pull(id)
        return self.pull_model(repo, pr)

    def repository(self, owner: str, name: str, **_: Any) -> Model:
        repo = self._visible(self.world.repository(f"{owner}/{name}"))
        if repo is None:
            raise Refused("NOT_FOUND", f"Could not resolve to a Repository with the name "
                                       f"'{owner}/{name}'.")
        return self.repo_model(repo)

    # -- Mutation: draft state ---------------------------------------------------------------

    async def markPullRequestReadyForReview(self, input: dict[str, Any]) -> Model:
        repo, pr = self._pull(input["pullRequestId"])
        if repo.issues[pr.number].state != "open" or pr.merged:
            raise Refused("UNPROCESSABLE", "Pull request is closed")  # (unconfirmed)
        if pr.draft:
            await self.fake.set_draft(repo, pr, False, user=self.login)
        return Model(clientMutationId=input.get("clientMutationId"),
                     pullRequest=self.pull_model(repo, pr))

    async def convertPullRequestToDraft(self, input: dict[str, Any]) -> Model:
        repo, pr = self._pull(input["pullRequestId"])
        if repo.issues[pr.number].state != "open" or pr.merged:
            raise Refused("UNPROCESSABLE", "Pull request is closed")  # (unconfirmed)
        if not repo.drafts_supported:
            raise Refused("UNPROCESSABLE", "Draft pull requests are not supported in this "
                                           "repository.")
        if not pr.draft:
            await self.fake.set_draft(repo, pr, True, user=self.login)
        return Model(clientMutationId=input.get("clientMutationId"),
                     pullRequest=self.pull_model(repo, pr))

    # -- Mutation: auto-merge and the merge queue -------------------------------------------

    def enablePullRequestAutoMerge(self, input: dict[str, Any]) -> Model:
        repo, pr = self._pull(input["pullRequestId"])
        if not repo.allow_auto_merge:
            raise Refused("UNPROCESSABLE", "Auto merge is not allowed for this repository")
        self._expect_head(pr, input.get("expectedHeadOid"))
        status = mergeable_state(repo, pr)
        if status in ("clean", "unstable"):
            raise Refused("UNPROCESSABLE", f"Pull request Pull request is in {status} status")
        if status == "draft":
            # (unconfirmed wording)
            raise Refused("UNPROCESSABLE", "Pull request Pull request is in draft status")
        method = str(input.get("mergeMethod") or "MERGE")
        pr.auto_merge = AutoMerge(method, self.login, iso(), input.get("expectedHeadOid"))
        return Model(clientMutationId=input.get("clientMutationId"), actor=_actor(self.login),
                     pullRequest=self.pull_model(repo, pr))

    def disablePullRequestAutoMerge(self, input: dict[str, Any]) -> Model:
        repo, pr = self._pull(input["pullRequestId"])
        pr.auto_merge = None
        return Model(clientMutationId=input.get("clientMutationId"), actor=_actor(self.login),
                     pullRequest=self.pull_model(repo, pr))

    def enqueuePullRequest(self, input: dict[str, Any]) -> Model:
        repo, pr = self._pull(input["pullRequestId"])
        if not repo.merge_queue:
            # (unconfirmed wording)
            raise Refused("UNPROCESSABLE", "This repository does not have a merge queue")
        if pr.draft:
            raise Refused("UNPROCESSABLE", "Pull request is in draft state")  # (unconfirmed)
        self._expect_head(pr, input.get("expectedHeadOid"))
        if pr.queued is None:
            pr.queued = QueueEntry(self.world.new_id(), self.login, iso(),
                                   input.get("expectedHeadOid"))
        return Model(clientMutationId=input.get("clientMutationId"),
                     mergeQueueEntry=self.queue_model(repo, pr))

    def dequeuePullRequest(self, input: dict[str, Any]) -> Model:
        decoded = nodes.decode(str(input["id"]))
        if decoded is None:
            raise not_found(input["id"])
        repo, pr = self._pull(input["id"])
        entry = self.queue_model(repo, pr) if pr.queued else None
        pr.queued = None
        return Model(clientMutationId=input.get("clientMutationId"), mergeQueueEntry=entry)

    # -- Mutation: revert --------------------------------------------------------------------

    async def revertPullRequest(self, input: dict[str, Any]) -> Model:
        repo, pr = self._pull(input["pullRequestId"])
        if not pr.merged or pr.merge_commit_sha is None:
            # (unconfirmed wording)
            raise Refused("UNPROCESSABLE", "Pull request must be merged to be reverted")
        revert = await self.fake.revert_pull(repo, pr, user=self.login,
                                             title=input.get("title"), body=input.get("body"),
                                             draft=bool(input.get("draft")))
        return Model(clientMutationId=input.get("clientMutationId"),
                     pullRequest=self.pull_model(repo, pr),
                     revertPullRequest=self.pull_model(repo, revert))

    # -- Mutation: pinning issues (BEHAVIOUR §8) ---------------------------------------------

    def pinIssue(self, input: dict[str, Any]) -> Model:
        repo, issue = self._issue(input["issueId"])
        if not issue.pinned_at:
            pinned = [i for i in repo.issues.values() if i.pinned_at]
            if len(pinned) >= MAX_PINNED:
                # (unconfirmed wording)
                raise Refused("UNPROCESSABLE", f"Repository can't have more than {MAX_PINNED} "
                                               "pinned issues")
            issue.pinned_at = max((i.pinned_at for i in pinned), default=0) + 1
        return Model(clientMutationId=input.get("clientMutationId"),
                     issue=self.issue_model(repo, issue))


# -- Mutation: the edits REST makes too, batched (issue 24, item 8) -------------------------
#
# GitHub runs a document's mutations one after the other, each under its alias; one that
# fails answers ``null`` with an error whose ``path`` names it, and the others still run (the
# GraphQL spec, "Mutation"; BEHAVIOUR §16). graphql-core executes a mutation's root fields
# serially and nulls a failed one, so the fake does the same. Each resolver changes the world
# through the REST handler's own helper and sends the webhooks that handler sends; a REST
# refusal becomes GraphQL's (404 ``NOT_FOUND``, 403 ``FORBIDDEN``, 422 ``UNPROCESSABLE``).

_GRAPHQL_TYPES = {404: "NOT_FOUND", 403: "FORBIDDEN", 410: "NOT_FOUND"}


def _refused(exc: GitHubError) -> Refused:
    return Refused(_GRAPHQL_TYPES.get(exc.status, "UNPROCESSABLE"), exc.message)


def _plain_id(node_id: object, prefix: str) -> int:
    """The number in a REST-style node id the fake hands out (``CR_12``, ``IC_7``, ``R_3``)."""
    text = str(node_id)
    if not text.startswith(prefix) or not text[len(prefix):].isdigit():
        raise not_found(node_id)
    return int(text[len(prefix):])


def _rest_check_body(input: dict[str, Any]) -> dict[str, Any]:
    """``CreateCheckRunInput``/``UpdateCheckRunInput`` as the REST body the handlers take:
    GitHub's enums in REST's lower case (``IN_PROGRESS`` → ``in_progress``)."""
    names = {"name": "name", "headSha": "head_sha", "externalId": "external_id",
             "detailsUrl": "details_url", "startedAt": "started_at",
             "completedAt": "completed_at"}
    body: dict[str, Any] = {rest: input[gql] for gql, rest in names.items()
                            if input.get(gql) is not None}
    for key in ("status", "conclusion"):
        if input.get(key) is not None:
            body[key] = str(input[key]).lower()
    if input.get("output") is not None:
        body["output"] = {k: v for k, v in dict(input["output"]).items() if v is not None}
    if input.get("actions") is not None:
        body["actions"] = [dict(a) for a in input["actions"]]
    return body


class Roots(PullRoots):
    """Every root field: the pull request's own, and the mutations of REST's edits — check
    runs, comments, issues, pull requests."""

    def _repository(self, node_id: object) -> Repository:
        repo = self._visible(self.world.repository_by_id(_plain_id(node_id, "R_")))
        if repo is None:
            raise not_found(node_id)
        return repo

    def check_run_model(self, repo: Repository, run_id: int) -> Model:
        return Model(__typename="CheckRun", id=f"CR_{run_id}", databaseId=run_id,
                     url=f"https://github.com/{repo.full_name}/runs/{run_id}")

    async def createCheckRun(self, input: dict[str, Any]) -> Model:
        from questbot_testing.fakegithub.routes_checks import make_check_run

        repo = self._repository(input["repositoryId"])
        try:
            run = await make_check_run(self.fake, repo, _rest_check_body(input))
        except GitHubError as exc:
            raise _refused(exc) from exc
        return Model(clientMutationId=input.get("clientMutationId"),
                     checkRun=self.check_run_model(repo, run.id))

    async def updateCheckRun(self, input: dict[str, Any]) -> Model:
        from questbot_testing.fakegithub.routes_checks import change_check_run

        repo = self._repository(input["repositoryId"])
        run = repo.check_runs.get(_plain_id(input["checkRunId"], "CR_"))
        if run is None:
            raise not_found(input["checkRunId"])
        try:
            await change_check_run(self.fake, repo, run, _rest_check_body(input))
        except GitHubError as exc:
            raise _refused(exc) from exc
        return Model(clientMutationId=input.get("clientMutationId"),
                     checkRun=self.check_run_model(repo, run.id))

    async def updateIssueComment(self, input: dict[str, Any]) -> Model:
        from questbot_testing.fakegithub.routes_issues import change_comment

        comment_id = _plain_id(input["id"], "IC_")
        repo = next((r for r in self.world.repositories.values()
                     if self._visible(r) is not None and comment_id in r.comments), None)
        if repo is None:
            raise not_found(input["id"])
        try:
            comment = await change_comment(self.fake, repo, comment_id, input["body"],
                                           self.login)
        except GitHubError as exc:
            raise _refused(exc) from exc
        return Model(clientMutationId=input.get("clientMutationId"), issueComment=Model(
            __typename="IssueComment", id=f"IC_{comment.id}", databaseId=comment.id,
            url=f"https://github.com/{repo.full_name}/issues/{comment.issue_number}"
                f"#issuecomment-{comment.id}"))

    def updateIssue(self, input: dict[str, Any]) -> Model:
        from questbot_testing.fakegithub.routes_issues import change_issue

        repo, issue = self._issue(input["id"])
        body = {k: input[k] for k in ("title", "body") if input.get(k) is not None}
        if input.get("state") is not None:
            body["state"] = str(input["state"]).lower()
        try:
            change_issue(repo, issue, body)
        except GitHubError as exc:
            raise _refused(exc) from exc
        return Model(clientMutationId=input.get("clientMutationId"),
                     issue=self.issue_model(repo, issue))

    async def updatePullRequest(self, input: dict[str, Any]) -> Model:
        from questbot_testing.fakegithub.routes_pulls import change_pull

        repo, pr = self._pull(input["pullRequestId"])
        body = {k: input[k] for k in ("title", "body") if input.get(k) is not None}
        if input.get("state") is not None:
            body["state"] = str(input["state"]).lower()
        try:
            await change_pull(self.fake, repo, pr, body, self.login)
        except GitHubError as exc:
            raise _refused(exc) from exc
        return Model(clientMutationId=input.get("clientMutationId"),
                     pullRequest=self.pull_model(repo, pr))
