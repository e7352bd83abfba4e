"""``POST /graphql``: GitHub's GraphQL endpoint, validated against GitHub's own schema.

A query is parsed and validated with ``graphql-core`` against ``graphql/schema.graphql`` (the
schema GitHub publishes, as ``@octokit/graphql-schema`` ships it) plus the one rule the schema
cannot state: every connection needs ``first`` or ``last``, at most 100 (docs:
graphql/overview/rate-limits-and-query-limits-for-the-graphql-api). Then it is executed with the
fake's resolvers (``fakegithub.graphql_resolvers``) over the same world the REST handlers
change, so a pull request marked ready here is ``draft: false`` in ``pulls/get``.

Answers have GitHub's shapes (BEHAVIOUR §16), which are graphql-ruby's rather than
graphql-core's:

* HTTP 200 for every query that reached the executor or failed to parse or validate, with
  ``errors: [{message, locations, …}]`` and no ``data`` for the latter; a parse error reads
  ``Parse error on …``; an unknown field ``Field 'x' doesn't exist on type 'Y'`` with
  ``extensions: {code: undefinedField, typeName, fieldName}``;
* a resolver's refusal is ``data: {field: null}`` plus an error with ``type`` (``NOT_FOUND``
  "Could not resolve to a node with the global id of '…'", ``UNPROCESSABLE`` …) and ``path``
  (https://github.com/octokit/graphql.js/pull/314, https://github.com/pl-strflt/projects-migration/issues/1);
* 401 ``Bad credentials`` without a valid installation token.

The schema takes about a second to build, so it is built once per process, on first use.
A field the fake does not model answers ``null`` and is recorded as a violation, so a test
that relies on it fails instead of passing on a blank.
"""

from __future__ import annotations

import inspect
import json
import re
from collections.abc import Callable, Mapping
from functools import cache
from typing import TYPE_CHECKING, Any

from graphql import (
    ASTValidationRule,
    ExecutionResult,
    FieldNode,
    GraphQLError,
    GraphQLSchema,
    GraphQLSyntaxError,
    ValidationContext,
    build_schema,
    default_field_resolver,
    execute,
    get_named_type,
    parse,
    specified_rules,
    validate,
)
from graphql.language import IntValueNode, OperationDefinitionNode

from questbot_testing import published
from questbot_testing.fakegithub import permissions
from questbot_testing.fakegithub.calls import Reply

if TYPE_CHECKING:
    from questbot_testing.fakegithub.server import FakeGitHub

DOCS = "https://docs.github.com/graphql"
MAX_PAGE = 100


@cache
def github_schema() -> GraphQLSchema:
    """GitHub's schema. graphql-core refuses to build it as published (two repeated fields,
    interface fields deprecated on some implementations only — SOURCES.md), neither of which
    bears on validating a query, so it is built trusting the SDL and marked validated."""
    schema = build_schema(published.graphql_schema_path().read_text(), assume_valid_sdl=True)
    schema._validation_errors = []  # type: ignore[attr-defined]  # trusted: see above
    return schema


class Model(dict[str, Any]):
    """An object the fake models, as GraphQL fields: a value, or a callable taking the field's
    arguments. A field missing from it is one the fake does not model."""


class Refused(Exception):
    """A resolver's refusal, answered as GitHub answers it: the field ``null``, and an error
    with this ``type`` and message."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


def not_found(node_id: object) -> Refused:
    return Refused("NOT_FOUND", f"Could not resolve to a node with the global id of "
                                f"'{node_id}'")


class Pagination(ASTValidationRule):
    """GitHub's rule on connections: ``first`` or ``last`` on each, between 1 and 100."""

    def __init__(self, context: ValidationContext) -> None:
        super().__init__(context)

    def enter_field(self, node: FieldNode, *_args: object) -> None:
        definition = self.context.get_field_def()
        if definition is None:
            return
        named = get_named_type(definition.type)
        if named is None or not named.name.endswith("Connection"):
            return
        args = {arg.name.value: arg.value for arg in node.arguments or ()}
        bounds = [args[name] for name in ("first", "last") if name in args]
        field = node.name.value
        if not bounds:
            self.report_error(GraphQLError(
                f"You must provide a `first` or `last` value to properly paginate the `{field}` "
                "connection.", node, extensions={"type": "MISSING_PAGINATION_BOUNDARIES"}))
            return
        for name in ("first", "last"):
            value = args.get(name)
            if isinstance(value, IntValueNode) and not 1 <= int(value.value) <= MAX_PAGE:
                self.report_error(GraphQLError(
                    f"Requesting {value.value} records on the `{field}` connection exceeds the "
                    f"`{name}` limit of {MAX_PAGE} records.", node,
                    extensions={"type": "EXCESSIVE_PAGINATION"}))


_UNDEFINED_FIELD = re.compile(r"^Cannot query field '([^']+)' on type '([^']+)'\.")
_UNKNOWN_ARGUMENT = re.compile(r"^Unknown argument '([^']+)' on field '[^.']+\.([^']+)'\.")
_MISSING_ARGUMENT = re.compile(r"^Argument '[^.']+\.([^(']+)\(([^:]+):\)' of type '[^']+' is "
                               r"required, but it was not provided\.")


def _ruby(error: GraphQLError) -> dict[str, Any]:
    """One validation error as graphql-ruby (GitHub) words and shapes it."""
    out: dict[str, Any] = {"message": error.message}
    if error.locations:
        out["locations"] = [{"line": loc.line, "column": loc.column} for loc in error.locations]
    message = error.message
    if found := _UNDEFINED_FIELD.match(message):
        field, kind = found.groups()
        out["message"] = f"Field '{field}' doesn't exist on type '{kind}'"
        out["extensions"] = {"code": "undefinedField", "typeName": kind, "fieldName": field}
    elif found := _UNKNOWN_ARGUMENT.match(message):
        argument, field = found.groups()
        out["message"] = f"Field '{field}' doesn't accept argument '{argument}'"
        out["extensions"] = {"code": "argumentNotAccepted", "name": field, "typeName": "Field",
                             "argumentName": argument}
    elif found := _MISSING_ARGUMENT.match(message):
        field, argument = found.groups()
        out["message"] = f"Field '{field}' is missing required arguments: {argument}"
        out["extensions"] = {"code": "missingRequiredArguments", "className": "Field",
                             "name": field, "arguments": argument}
    elif error.extensions and "type" in error.extensions:
        out["type"] = error.extensions["type"]
    return out


_BAD_VARIABLE = re.compile(r"^Variable '\$([^']+)' (?:of required type|got invalid value)"
                           r"[^']*'?([^']*)'?")


def _executed(error: GraphQLError) -> dict[str, Any]:
    """An execution error: a resolver's refusal with its ``type``, or graphql-core's own."""
    out: dict[str, Any] = {"message": error.message}
    original = error.original_error
    if isinstance(original, Refused):
        out["type"] = original.kind
    elif found := _BAD_VARIABLE.match(error.message):
        name = found.group(1)
        out["message"] = f"Variable ${name} of type {found.group(2) or 'its type'} was provided " \
                         "invalid value"
        out["extensions"] = {"value": None, "problems": [{"path": [],
                                                          "explanation": error.message}]}
    if error.path:
        out["path"] = list(error.path)
    if error.locations:
        out["locations"] = [{"line": loc.line, "column": loc.column} for loc in error.locations]
    return out


def _syntax(error: GraphQLSyntaxError) -> dict[str, Any]:
    where = error.locations[0] if error.locations else None
    found = error.message.rsplit("found ", 1)[-1].rstrip(".") if "found " in error.message \
        else error.message
    out: dict[str, Any] = {"message": f"Parse error on {found}"
                                      + (f" at [{where.line}, {where.column}]" if where else "")}
    if where is not None:
        out["locations"] = [{"line": where.line, "column": where.column}]
    return out


def root_fields(document: Any, operation_name: str | None) -> list[str]:
    """The root fields the operation asks for, to name the exchange in the fake's log."""
    for definition in document.definitions:
        if isinstance(definition, OperationDefinitionNode) and (
                operation_name is None or (definition.name and
                                           definition.name.value == operation_name)):
            return [s.name.value for s in definition.selection_set.selections
                    if isinstance(s, FieldNode)]
    return []


def _resolver(fake: FakeGitHub) -> Callable[..., Any]:
    def resolve(source: Any, info: Any, **args: Any) -> Any:
        if not isinstance(source, Model):
            return default_field_resolver(source, info, **args)
        if info.field_name not in source:
            fake.violations.append(f"GraphQL: the fake does not model "
                                   f"{info.parent_type.name}.{info.field_name}")
            return None
        value = source[info.field_name]
        return value(**args) if callable(value) else value
    return resolve


def _forbidden(fake: FakeGitHub, fields: list[str], granted: Mapping[str, str],
               met: list[tuple[str, str]]) -> list[dict[str, Any]]:
    """A ``FORBIDDEN`` error for each root field the token's permissions do not cover
    (BEHAVIOUR.md §16); what the others used is added to ``met``."""
    errors = []
    for name in fields:
        need = permissions.GRAPHQL.get(name)
        if need is None:
            fake.violations.append(f"GraphQL: the fake does not know which permission {name} "
                                   "needs")
            continue
        used = permissions.used(granted, need)
        if used is None:
            fake.denied.append(f"POST /graphql ({name}) needs a permission the App lacks")
            errors.append({"type": "FORBIDDEN", "path": [name],
                           "message": permissions.NOT_ACCESSIBLE})
        else:
            met.extend(used)
    return errors


async def answer(fake: FakeGitHub, installation_id: int, raw_body: bytes, *,
                 granted: Mapping[str, str] | None = None,
                 met: list[tuple[str, str]] | None = None) -> tuple[Reply, list[str]]:
    """The reply to one ``POST /graphql`` and the root fields it asked for. ``granted``: the
    token's permissions (all, when not given); the ones used are added to ``met``."""
    from questbot_testing.fakegithub.graphql_resolvers import Roots  # the resolvers need the world

    try:
        payload = json.loads(raw_body or b"null")
    except ValueError:
        return Reply(400, {"message": "Problems parsing JSON", "documentation_url": DOCS}), []
    if not isinstance(payload, dict) or not isinstance(payload.get("query"), str):
        return Reply(200, {"errors": [{"message": "A query attribute must be specified and must "
                                                  "be a string."}]}), []
    variables = payload.get("variables") or {}
    operation = payload.get("operationName")
    try:
        document = parse(payload["query"])
    except GraphQLSyntaxError as exc:
        return Reply(200, {"errors": [_syntax(exc)]}), []
    schema = github_schema()
    problems = validate(schema, document, [*specified_rules, Pagination])
    fields = root_fields(document, operation)
    if problems:
        return Reply(200, {"errors": [_ruby(p) for p in problems]}), fields
    if granted is not None:
        forbidden = _forbidden(fake, fields, granted, met if met is not None else [])
        if forbidden:  # nothing is executed: no field of a refused request has effects
            return Reply(200, {"data": dict.fromkeys(fields), "errors": forbidden}), fields
    roots = Roots(fake, installation_id).model()
    result = execute(schema, document, root_value=roots, variable_values=variables,
                     operation_name=operation, field_resolver=_resolver(fake))
    if inspect.isawaitable(result):
        result = await result
    assert isinstance(result, ExecutionResult)
    body: dict[str, Any] = {}
    if result.data is not None or not result.errors:
        body["data"] = result.data
    if result.errors:
        body["errors"] = [_executed(e) for e in result.errors]
    return Reply(200, body), fields


def mutations_in(query: str) -> int:
    """How many mutations a document carries (its mutation operations' top-level fields), for
    the secondary limit on content creation; 1 for a document that does not parse (it is
    answered with its parse error, and counted as GitHub counts a request)."""
    try:
        parsed = parse(query)
    except GraphQLSyntaxError:
        return 1
    return max(1, sum(len(d.selection_set.selections) for d in parsed.definitions
                      if isinstance(d, OperationDefinitionNode)
                      and d.operation.value == "mutation"))
