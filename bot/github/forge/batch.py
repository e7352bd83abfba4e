"""Several of a quest's edits in one GraphQL request: fewer, richer writes.

A quest's transition changes what several views show at once — its check run, its pull
request's description, its status comment, the inbox, the draft state. Through REST that is
one request each. GitHub's GraphQL API takes several mutations in one document and runs them
one after the other, each under its alias (the GraphQL spec, "Mutation": a mutation's top-level
fields are executed serially), and GitHub charges a request with mutations 5 points of the
secondary limit, the same as one REST write (docs: graphql/overview/rate-limits-and-query-
limits-for-the-graphql-api, "Secondary rate limits"; BEHAVIOUR §15: "GraphQL query 1, mutation
5"). So a transition's edits sent together are one request, not five.

A mutation that fails answers ``null`` under its alias and an error whose ``path`` names it;
the others still run (BEHAVIOUR §16: errors alongside partial ``data``). ``MutationBatch.send``
hands each write its own answer — the payload, or ``GraphQLRefused`` for its error — so the
caller records what succeeded and leaves the rest owed. A request that fails as a whole (a 502,
a timeout) raises as any request does: nothing is recorded, and the edits are sent again
(each is an edit by id, so sending it twice shows the same; a create is reserved first by its
caller, as every create is).

The inputs are GitHub's GraphQL input objects (``UpdateCheckRunInput``, …); ``check_run_input``
turns the REST body questbot renders a check run into (``bot.words.check_run``) into one. The
global ids they take are the ``node_id`` of the REST answers (a repository's, a check run's,
a comment's, an issue's, a pull request's).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from gidgethub import QueryError

from bot.github.forge.graphql import PERMANENT_TYPES, GraphQLRefused, PullRequestGraphQL
from bot.github.ratelimit import carrying
from bot.words.github_limits import fit, fit_check_run

CHECK_FIELDS = "checkRun { id databaseId url }"
COMMENT_FIELDS = "issueComment { id databaseId url }"
PULL_FIELDS = "pullRequest { id number isDraft }"
ISSUE_FIELDS = "issue { id number }"


@dataclass(frozen=True, slots=True)
class Mutation:
    """One mutation of a batch: the root field, its input type and input, what to select."""

    field: str
    input_type: str
    input: dict[str, Any]
    select: str
    what: str
    """What it does, in a refusal's message (``update check run 12 in octo/demo``)."""


def _enum(value: object) -> str:
    return str(value).upper()


def check_run_input(repository_id: str, body: dict[str, Any], *,
                    run_id: str | None = None) -> dict[str, Any]:
    """A REST ``checks/create``/``checks/update`` body as ``CreateCheckRunInput`` (no
    ``run_id``) or ``UpdateCheckRunInput``: GitHub's enums in capitals (``in_progress`` →
    ``IN_PROGRESS``), the output within GitHub's limit as on the REST path."""
    body = fit_check_run(body)
    out: dict[str, Any] = {"repositoryId": repository_id}
    if run_id is not None:
        out["checkRunId"] = run_id
    names = {"name": "name", "head_sha": "headSha", "external_id": "externalId",
             "details_url": "detailsUrl", "started_at": "startedAt",
             "completed_at": "completedAt"}
    for rest, gql in names.items():
        if body.get(rest) is not None:
            out[gql] = body[rest]
    if run_id is not None:
        out.pop("headSha", None)  # UpdateCheckRunInput has no headSha
    if body.get("status") is not None:
        out["status"] = _enum(body["status"])
    if body.get("conclusion") is not None:
        out["conclusion"] = _enum(body["conclusion"])
    output = body.get("output")
    if isinstance(output, dict):
        out["output"] = {k: output[k] for k in ("title", "summary", "text")
                         if output.get(k) is not None}
    if body.get("actions") is not None:
        out["actions"] = [{k: a[k] for k in ("label", "description", "identifier")}
                          for a in body["actions"]]
    return out


def create_check_run(repository_id: str, body: dict[str, Any], what: str) -> Mutation:
    return Mutation("createCheckRun", "CreateCheckRunInput",
                    check_run_input(repository_id, body), CHECK_FIELDS, what)


def update_check_run(repository_id: str, run_id: str, body: dict[str, Any],
                     what: str) -> Mutation:
    return Mutation("updateCheckRun", "UpdateCheckRunInput",
                    check_run_input(repository_id, body, run_id=run_id), CHECK_FIELDS, what)


def edit_comment(comment_id: str, body: str, what: str) -> Mutation:
    return Mutation("updateIssueComment", "UpdateIssueCommentInput",
                    {"id": comment_id, "body": fit(body)}, COMMENT_FIELDS, what)


def edit_pull(pull_id: str, title: str, body: str, what: str) -> Mutation:
    return Mutation("updatePullRequest", "UpdatePullRequestInput",
                    {"pullRequestId": pull_id, "title": title, "body": fit(body)},
                    PULL_FIELDS, what)


def edit_issue(issue_id: str, body: str, what: str, *, reopen: bool = False) -> Mutation:
    change: dict[str, Any] = {"id": issue_id, "body": fit(body)}
    if reopen:
        change["state"] = "OPEN"
    return Mutation("updateIssue", "UpdateIssueInput", change, ISSUE_FIELDS, what)


def mark_ready(pull_id: str, what: str) -> Mutation:
    return Mutation("markPullRequestReadyForReview", "MarkPullRequestReadyForReviewInput",
                    {"pullRequestId": pull_id}, PULL_FIELDS, what)


def document(mutations: list[Mutation]) -> tuple[str, dict[str, Any]]:
    """The one GraphQL document and its variables: ``m0: updateCheckRun(input: $i0) {…}``."""
    params = ", ".join(f"$i{n}: {m.input_type}!" for n, m in enumerate(mutations))
    fields = " ".join(f"m{n}: {m.field}(input: $i{n}) {{ {m.select} }}"
                      for n, m in enumerate(mutations))
    return (f"mutation({params}) {{ {fields} }}",
            {f"i{n}": m.input for n, m in enumerate(mutations)})


Answer = dict[str, Any] | GraphQLRefused
"""A mutation's payload, or why GitHub refused it."""
Recording = Callable[[Sequence[Answer]], Awaitable[None]]
"""What a planned write records once the batch is answered: given every answer of the batch,
it records its own if GitHub made it, and leaves it owed (for the REST path) if not."""


class MutationBatch:
    """Mutations gathered for one request to one repository."""

    def __init__(self, graphql: PullRequestGraphQL) -> None:
        self.graphql = graphql
        self.mutations: list[Mutation] = []

    def add(self, mutation: Mutation) -> int:
        """Queue ``mutation``; its index in ``send``'s answers."""
        self.mutations.append(mutation)
        return len(self.mutations) - 1

    def __len__(self) -> int:
        return len(self.mutations)

    async def send(self) -> list[Answer]:
        """One request for every queued mutation: each one's payload, or ``GraphQLRefused``
        with GitHub's error for it. An error that names no alias (the document refused as a
        whole) refuses every mutation; a failed request raises, recording nothing."""
        if not self.mutations:
            return []
        query, variables = document(self.mutations)
        gh = self.graphql.gh
        try:
            with carrying(len(self.mutations)):  # a write slot per mutation
                data = await gh.graphql(query, endpoint=self.graphql.endpoint, **variables)
            errors: list[Any] = []
        except QueryError as exc:
            response = exc.response or {}
            data = response.get("data") or {}
            errors = list(response.get("errors") or [{}])
        by_alias: dict[str, dict[str, Any]] = {}
        general: dict[str, Any] | None = None
        for error in errors:
            error = error if isinstance(error, dict) else {}
            path = error.get("path") or []
            if path and isinstance(path[0], str):
                by_alias.setdefault(path[0], error)
            elif general is None:
                general = error
        answers: list[Answer] = []
        for n, mutation in enumerate(self.mutations):
            payload = data.get(f"m{n}") if isinstance(data, dict) else None
            error = by_alias.get(f"m{n}") or (general if payload is None else None)
            if isinstance(payload, dict) and error is None:
                answers.append(payload)
                continue
            error = error or {}
            kind = str(error.get("type") or "EMPTY")
            reason = str(error.get("message") or "no payload")
            answers.append(GraphQLRefused(
                f"github refused to {mutation.what} in {self.graphql.repo} ({kind}: {reason})",
                kind=kind, reason=reason))
        return answers


def permanent(answer: Answer) -> bool:
    """Whether a refusal will be answered the same however often it is asked."""
    return isinstance(answer, GraphQLRefused) and answer.kind in PERMANENT_TYPES
