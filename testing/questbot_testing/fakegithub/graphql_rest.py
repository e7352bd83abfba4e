"""GraphQL mutations read as the REST writes they stand for, for tests.

questbot sends a transition's view edits as one GraphQL document (``bot.github.forge.batch``);
a test that asks "which descriptions did questbot write" or "is every body it wrote in plain
words" (``tests/words/surface.py``) should see those edits as it sees REST's. ``as_rest`` turns
one logged exchange into the REST exchanges it stands for: a REST one as it is, and each
mutation of a GraphQL one that has a REST twin as that twin's operation with a REST-shaped body,
answered 200 (201 for a create) if GitHub made it and 422 if it refused it. A mutation with no
REST twin (``markPullRequestReadyForReview``, ``pinIssue``) keeps its GraphQL name, alone, with
its input added to the body as ``input``.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

from graphql import FieldNode, OperationDefinitionNode, parse, value_from_ast_untyped
from graphql.error import GraphQLError

from questbot_testing.fakegithub.graphql_resolvers import _rest_check_body

if TYPE_CHECKING:
    from questbot_testing.fakegithub.server import Exchange

TWINS = {
    "createCheckRun": ("checks/create", 201),
    "updateCheckRun": ("checks/update", 200),
    "updateIssueComment": ("issues/update-comment", 200),
    "updateIssue": ("issues/update", 200),
    "updatePullRequest": ("pulls/update", 200),
}


def _rest_body(field: str, given: dict[str, Any]) -> dict[str, Any]:
    if field in ("createCheckRun", "updateCheckRun"):
        return _rest_check_body(given)
    body = {k: given[k] for k in ("title", "body") if given.get(k) is not None}
    if given.get("state") is not None:
        body["state"] = str(given["state"]).lower()
    return body


def mutations(exchange: Exchange) -> list[tuple[str, str, dict[str, Any]]]:
    """``(alias, field, input)`` of each root field of a logged GraphQL request."""
    payload = exchange.json if isinstance(exchange.json, dict) else {}
    try:
        document = parse(str(payload.get("query") or ""))
    except GraphQLError:
        return []
    variables = payload.get("variables") or {}
    out = []
    for definition in document.definitions:
        if not isinstance(definition, OperationDefinitionNode):
            continue
        for node in definition.selection_set.selections:
            if not isinstance(node, FieldNode):
                continue
            given: Any = {}
            for argument in node.arguments or ():
                if argument.name.value == "input":
                    given = value_from_ast_untyped(argument.value, variables)
            alias = node.alias.value if node.alias else node.name.value
            out.append((alias, node.name.value, given if isinstance(given, dict) else {}))
    return out


def as_rest(exchange: Exchange) -> list[Exchange]:
    """The REST exchanges ``exchange`` stands for (itself, unless it is GraphQL)."""
    if not (exchange.operation_id or "").startswith("graphql/") or exchange.status >= 300:
        return [exchange]
    data = (exchange.answer or {}).get("data") if isinstance(exchange.answer, dict) else None
    out = []
    for alias, field, given in mutations(exchange):
        made = isinstance(data, dict) and data.get(alias) is not None
        if field not in TWINS:
            out.append(dataclasses.replace(exchange, operation_id=f"graphql/{field}",
                                           json={**(exchange.json or {}), "input": given},
                                           status=exchange.status if made else 422))
            continue
        operation, status = TWINS[field]
        out.append(dataclasses.replace(exchange, operation_id=operation,
                                       json=_rest_body(field, given),
                                       status=status if made else 422))
    return out or [exchange]
