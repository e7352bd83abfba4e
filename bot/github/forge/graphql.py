"""What only GitHub's GraphQL API can do for a pull request, as typed calls.

REST cannot mark a draft ready for review or turn it back into a draft, enable auto-merge,
put a pull request in the merge queue, or revert one (BEHAVIOUR §2, §6); GraphQL can, each a
mutation that takes the pull request's global id — the ``node_id`` of its REST answer
(``Pull.node_id``). Each method here sends one fixed mutation through gidgethub's
``graphql()`` (so it is paced and rate-limited like every other write) and returns a frozen
record of the fields it asked for.

GraphQL answers its refusals with HTTP 200 and an ``errors`` list (gidgethub raises
``QueryError``): a ``NOT_FOUND`` or ``UNPROCESSABLE`` one, a ``FORBIDDEN`` one ("Resource not
accessible by integration") will be answered the same way however often it is asked, so it
becomes ``GraphQLRefused`` — a ``PermanentError`` that says what GitHub said and what to do.
Anything else (a 502, a timeout) propagates for a retry.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from gidgethub import QueryError
from gidgethub.abc import GitHubAPI

from bot.errors import PermanentError
from bot.github.errors import GitHubAdapterError

PULL_FIELDS = "id number isDraft state headRefOid autoMergeRequest { mergeMethod }"
READY = ("mutation($id: ID!) { markPullRequestReadyForReview(input: {pullRequestId: $id}) "
         f"{{ pullRequest {{ {PULL_FIELDS} }} }} }}")
TO_DRAFT = ("mutation($id: ID!) { convertPullRequestToDraft(input: {pullRequestId: $id}) "
            f"{{ pullRequest {{ {PULL_FIELDS} }} }} }}")
AUTO_MERGE = ("mutation($id: ID!, $head: GitObjectID!, $method: PullRequestMergeMethod!) { "
              "enablePullRequestAutoMerge(input: {pullRequestId: $id, expectedHeadOid: $head, "
              f"mergeMethod: $method}}) {{ pullRequest {{ {PULL_FIELDS} }} }} }}")
ENQUEUE = ("mutation($id: ID!, $head: GitObjectID!) { enqueuePullRequest(input: "
           "{pullRequestId: $id, expectedHeadOid: $head}) { mergeQueueEntry { id state "
           "position } } }")
REVERT = ("mutation($id: ID!, $title: String, $body: String, $draft: Boolean) { "
          "revertPullRequest(input: {pullRequestId: $id, title: $title, body: $body, "
          f"draft: $draft}}) {{ revertPullRequest {{ {PULL_FIELDS} }} }} }}")
PIN = ("mutation($id: ID!) { pinIssue(input: {issueId: $id}) "
       "{ issue { id number isPinned } } }")
PERMANENT_TYPES = frozenset({"NOT_FOUND", "UNPROCESSABLE", "FORBIDDEN"})


def graphql_endpoint(base_url: str) -> str:
    """GitHub's GraphQL endpoint for a REST base URL: ``https://api.github.com/graphql``, and
    ``https://<host>/api/graphql`` for a GitHub Enterprise Server's ``https://<host>/api/v3``."""
    base = base_url.rstrip("/")
    if base.endswith("/api/v3"):
        return base.removesuffix("/v3") + "/graphql"
    return base + "/graphql"


class GraphQLRefused(GitHubAdapterError, PermanentError):
    """GitHub's GraphQL API refused a mutation for good (``NOT_FOUND``, ``UNPROCESSABLE``,
    ``FORBIDDEN``); ``kind`` is its error ``type`` and ``reason`` its message."""

    def __init__(self, message: str, *, kind: str, reason: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.reason = reason


@dataclass(frozen=True, slots=True)
class PullState:
    """A pull request as a mutation left it."""

    node_id: str
    number: int
    draft: bool
    state: str
    """``OPEN``, ``CLOSED`` or ``MERGED``."""
    head_sha: str
    auto_merge: str | None = None
    """The merge method auto-merge will use, while it is enabled."""

    @classmethod
    def of(cls, data: dict[str, Any]) -> PullState:
        auto = data.get("autoMergeRequest") or {}
        return cls(str(data["id"]), int(data["number"]), bool(data["isDraft"]),
                   str(data["state"]), str(data["headRefOid"]),
                   str(auto["mergeMethod"]) if auto.get("mergeMethod") else None)


@dataclass(frozen=True, slots=True)
class QueueEntry:
    id: str
    state: str
    """``QUEUED``, ``AWAITING_CHECKS``, ``MERGEABLE``, ``UNMERGEABLE`` or ``LOCKED``."""
    position: int


class PullRequestGraphQL:
    """One repository's pull-request mutations, through one installation client."""

    def __init__(self, gh: GitHubAPI, repo: str, *, endpoint: str | None = None) -> None:
        self.gh = gh
        self.repo = repo
        self.endpoint = endpoint or graphql_endpoint(str(getattr(gh, "base_url", "")))

    async def _mutate(self, query: str, field: str, what: str, todo: str,
                      **variables: Any) -> dict[str, Any]:
        try:
            data = await self.gh.graphql(query, endpoint=self.endpoint, **variables)
        except QueryError as exc:
            errors = (exc.response or {}).get("errors") or [{}]
            first = errors[0] if isinstance(errors[0], dict) else {}
            kind, reason = str(first.get("type") or ""), str(first.get("message") or exc)
            if kind in PERMANENT_TYPES:
                raise GraphQLRefused(f"github refused to {what} in {self.repo} ({kind}: "
                                     f"{reason}); {todo}", kind=kind, reason=reason) from exc
            raise
        payload = data.get(field) if isinstance(data, dict) else None
        if not isinstance(payload, dict):
            raise GraphQLRefused(f"github answered {field} with nothing for {what} in "
                                 f"{self.repo}; {todo}", kind="EMPTY", reason="no payload")
        return payload

    async def mark_ready(self, pull_id: str) -> PullState:
        """``markPullRequestReadyForReview``: a draft becomes reviewable (and mergeable)."""
        out = await self._mutate(READY, "markPullRequestReadyForReview",
                                 f"mark pull request {pull_id} ready for review",
                                 "mark it ready for review on GitHub by hand", id=pull_id)
        return PullState.of(out["pullRequest"])

    async def convert_to_draft(self, pull_id: str) -> PullState:
        """``convertPullRequestToDraft``."""
        out = await self._mutate(TO_DRAFT, "convertPullRequestToDraft",
                                 f"convert pull request {pull_id} to a draft",
                                 "the repository's plan may not have drafts", id=pull_id)
        return PullState.of(out["pullRequest"])

    async def enable_auto_merge(self, pull_id: str, *, head: str,
                                method: str = "MERGE") -> PullState:
        """``enablePullRequestAutoMerge`` pinned to ``head``: GitHub merges once the branch
        rules are met, and never another head."""
        out = await self._mutate(AUTO_MERGE, "enablePullRequestAutoMerge",
                                 f"enable auto-merge of {pull_id} at {head[:12]}",
                                 "allow auto-merge in the repository's settings, or merge it "
                                 "by hand", id=pull_id, head=head, method=method)
        return PullState.of(out["pullRequest"])

    async def enqueue(self, pull_id: str, *, head: str) -> QueueEntry:
        """``enqueuePullRequest`` pinned to ``head``."""
        out = await self._mutate(ENQUEUE, "enqueuePullRequest",
                                 f"add {pull_id} at {head[:12]} to the merge queue",
                                 "check the branch's merge queue rule", id=pull_id, head=head)
        entry = out.get("mergeQueueEntry") or {}
        return QueueEntry(str(entry["id"]), str(entry["state"]), int(entry["position"]))

    async def revert(self, pull_id: str, *, title: str | None = None, body: str | None = None,
                     draft: bool = False) -> PullState:
        """``revertPullRequest``: GitHub's own revert branch and pull request of a merged one."""
        out = await self._mutate(REVERT, "revertPullRequest", f"revert {pull_id}",
                                 "revert the merge by hand", id=pull_id, title=title,
                                 body=body, draft=draft)
        return PullState.of(out["revertPullRequest"])

    async def pin_issue(self, issue_id: str) -> bool:
        """``pinIssue``: pin an issue to the repository's issue list (an issue, not a pull
        request, but the same mutation path); whether it is pinned now. GitHub allows three
        pinned issues per repository and refuses a fourth (``GraphQLRefused``)."""
        out = await self._mutate(PIN, "pinIssue", f"pin issue {issue_id}",
                                 "unpin another issue (a repository has at most three) and "
                                 "pin it by hand", id=issue_id)
        return bool((out.get("issue") or {}).get("isPinned"))
