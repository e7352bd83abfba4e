"""Check HTTP exchanges against GitHub's own REST description, the whole of it.

The fake matches every request against ``rest/api.github.com.json`` (811 paths, the
description GitHub publishes, as ``@octokit/openapi`` ships it), so a request the bot makes
that GitHub would not understand fails here first, in a test, rather than in production.

The document is 13 MB, and a test touches a dozen of its 1,200 operations, so it is read once
per process (``shared_api``) and compiled lazily: every operation's path template becomes a
regular expression up front (cheap), but a schema is translated and its validator built only
when an exchange first needs it, and then cached. The description is OpenAPI 3.0, whose
schemas are almost JSON Schema: the one difference that matters is ``nullable: true``,
translated into a ``"null"`` alternative. Each schema is translated with the components it
references (directly or through others), once, into one growing document registered under
``_BASE``, and its local ``$ref``s are rewritten to point there.

Problems come back as readable strings ("POST /repos/o/r/pulls: body: 'head' is a required
property") for the server to record as violations; nothing here raises on bad input.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from jsonschema import Draft7Validator  # type: ignore[import-untyped]
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT7

from questbot_testing import published

_BASE = "urn:github-rest"
_METHODS = ("get", "put", "post", "patch", "delete")


def _refs(node: Any) -> list[str]:
    """Every local ``$ref`` inside ``node``."""
    if isinstance(node, list):
        return [ref for item in node for ref in _refs(item)]
    if not isinstance(node, dict):
        return []
    found = [node["$ref"]] if isinstance(node.get("$ref"), str) else []
    return found + [ref for value in node.values() for ref in _refs(value)]


def translate_nullable(node: Any, *, base: str = "") -> Any:
    """Return ``node`` with OpenAPI 3.0 ``nullable: true`` rewritten as JSON Schema.

    ``{"type": "string", "nullable": true}`` becomes ``{"type": ["string", "null"]}``; a nullable
    schema without ``type`` (a ``$ref`` or ``allOf``) becomes ``anyOf`` of itself and null.
    Local ``$ref``s (``#/components/…``) are prefixed with ``base``.
    """
    if isinstance(node, list):
        return [translate_nullable(item, base=base) for item in node]
    if not isinstance(node, dict):
        return node
    out = {key: translate_nullable(value, base=base) for key, value in node.items()}
    if base and isinstance(out.get("$ref"), str) and out["$ref"].startswith("#"):
        out["$ref"] = base + out["$ref"]
    if out.pop("nullable", False) is True:
        if "enum" in out and None not in out["enum"]:
            out["enum"] = [*out["enum"], None]
        if isinstance(out.get("type"), str):
            out["type"] = [out["type"], "null"]
        elif "type" not in out:
            out = {"anyOf": [out, {"type": "null"}]}
    return out


@dataclass(frozen=True)
class Operation:
    """One documented method + path template, with what is needed to check an exchange."""

    method: str
    template: str
    operation_id: str
    spec: Mapping[str, Any] = field(repr=False)
    parameters: tuple[Mapping[str, Any], ...] = field(repr=False)
    """Path-level and operation-level parameters, ``$ref``s resolved."""
    regex: re.Pattern[str] = field(repr=False)
    specificity: int = 0


@dataclass(frozen=True)
class Match:
    """A request matched to an operation; path parameters are URL-decoded strings."""

    operation: Operation
    path_params: dict[str, str]


def _template_regex(template: str, multi_segment: set[str]) -> tuple[re.Pattern[str], int]:
    pattern = ""
    literal = 0
    for piece in re.split(r"(\{[^}]+\})", template):
        if piece.startswith("{"):
            name = piece[1:-1]
            # a trailing multi-segment parameter may also be empty: GitHub answers
            # `GET /repos/{owner}/{repo}/contents/` with the repository root's listing
            span = ".*" if name in multi_segment else "[^/]+"
            pattern += f"(?P<{name.replace('-', '_')}>{span})"
        else:
            pattern += re.escape(piece)
            literal += len(piece)
    return re.compile(f"^{pattern}$"), literal


def _pointer_token(text: str) -> str:
    return text.replace("~", "~0").replace("/", "~1")


class OpenAPI:
    """The REST description: match requests to operations and validate both directions."""

    def __init__(self, path: Path | None = None) -> None:
        source = published.rest_description_path() if path is None else path
        self.document: dict[str, Any] = json.loads(source.read_bytes())
        """The description as published (OpenAPI 3.0, untranslated)."""
        self._compiled: dict[str, Any] = {"components": {}}
        """The JSON-Schema view of the components translated so far (``_BASE``)."""
        resource: Resource[Any] = DRAFT7.create_resource(self._compiled)
        self._registry: Registry[Any] = Registry().with_resource(_BASE, resource)
        self._validators: dict[str, Draft7Validator] = {}
        self._parameter_validators: dict[tuple[str, str, str], Draft7Validator] = {}
        self.operations: list[Operation] = []
        for template, item in self.document["paths"].items():
            shared = item.get("parameters", [])
            for method in _METHODS:
                spec = item.get(method)
                if not isinstance(spec, dict):
                    continue
                params = tuple(self.resolve(p) for p in [*shared, *spec.get("parameters", [])])
                multi = {p["name"] for p in params if p.get("x-multi-segment")}
                # Only a trailing parameter may swallow slashes (contents/{path}, git/ref/{ref});
                # elsewhere GitHub expects the client to percent-encode them.
                multi = {name for name in multi if template.endswith("{" + name + "}")}
                regex, literal = _template_regex(template, multi)
                self.operations.append(Operation(method.upper(), template, spec["operationId"],
                                                 spec, params, regex, literal))
        # Prefer the template with the most literal text: issues/comments/{id} over issues/{n}.
        self.operations.sort(key=lambda op: -op.specificity)
        self.by_id = {op.operation_id: op for op in self.operations}

    def resolve(self, node: Mapping[str, Any]) -> dict[str, Any]:
        """Follow a local ``$ref`` (one level at a time) to the object it names."""
        while "$ref" in node:
            node = self._at(node["$ref"].removeprefix("#"))
        return dict(node)

    def _at(self, pointer: str) -> Any:
        target: Any = self.document
        for part in pointer.removeprefix("/").split("/"):
            target = target[part.replace("~1", "/").replace("~0", "~")]
        return target

    def _compile_components(self, node: Any) -> None:
        """Translate every component ``node`` references, transitively, once each."""
        pending = _refs(node)
        while pending:
            ref = pending.pop()
            kind, name = ref.removeprefix("#/components/").split("/", 1)
            have = self._compiled["components"].setdefault(kind, {})
            if name in have:
                continue
            raw = self.document["components"][kind][name]
            have[name] = translate_nullable(raw, base=_BASE)
            pending.extend(_refs(raw))

    def validator(self, pointer: str) -> Draft7Validator:
        """A validator for the schema at a JSON pointer into the document, cached."""
        found = self._validators.get(pointer)
        if found is None:
            raw = self._at(pointer)
            self._compile_components(raw)
            schema = translate_nullable(raw, base=_BASE)
            found = Draft7Validator(schema, registry=self._registry)
            self._validators[pointer] = found
        return found

    def match(self, method: str, raw_path: str) -> Match | Operation | None:
        """The operation for ``method raw_path``.

        Returns a :class:`Match`, or the :class:`Operation` whose path matched under another
        method (so the caller can answer 404 naming the method), or ``None``.
        """
        other: Operation | None = None
        for op in self.operations:
            found = op.regex.match(raw_path)
            if found is None:
                continue
            if op.method != method:
                other = other or op
                continue
            params = {}
            for param in op.parameters:
                if param["in"] == "path":
                    params[param["name"]] = unquote(found.group(param["name"].replace("-", "_")))
            return Match(op, params)
        return other

    def _pointer_of(self, op: Operation, *parts: str) -> str:
        return "/".join(["", "paths", _pointer_token(op.template), op.method.lower(), *parts])

    def _parameter_validator(self, op: Operation, param: Mapping[str, Any]) -> Draft7Validator:
        key = (op.operation_id, str(param["in"]), str(param["name"]))
        found = self._parameter_validators.get(key)
        if found is None:
            schema = param.get("schema", {})
            self._compile_components(schema)
            found = Draft7Validator(translate_nullable(schema, base=_BASE),
                                    registry=self._registry)
            self._parameter_validators[key] = found
        return found

    def unknown_query(self, match: Match, query: Mapping[str, str]) -> list[str]:
        """Query parameters the operation does not have."""
        known = {p["name"] for p in match.operation.parameters if p["in"] == "query"}
        return sorted(name for name in query if name not in known)

    def check_request(
        self,
        match: Match,
        query: Mapping[str, str],
        body: Any,
        has_body: bool,
    ) -> list[str]:
        """Problems with the parameters and JSON body of a matched request."""
        op = match.operation
        problems: list[str] = []
        known = set()
        for param in op.parameters:
            name, where = param["name"], param["in"]
            if where == "path":
                value: Any = match.path_params[name]
            elif where == "query":
                known.add(name)
                if name not in query:
                    if param.get("required"):
                        problems.append(f"query parameter {name!r} is required")
                    continue
                value = query[name]
            else:
                continue
            value = _coerce(value, param.get("schema", {}))
            for error in self._parameter_validator(op, param).iter_errors(value):
                problems.append(f"{where} parameter {name!r}: {error.message}")
        for name in query:
            if name not in known:
                problems.append(f"unknown query parameter {name!r}")
        request_body = op.spec.get("requestBody")
        if request_body is None:
            return problems
        request_body = self.resolve(request_body)
        if not has_body:
            if request_body.get("required"):
                problems.append("a JSON body is required")
            return problems
        content = request_body.get("content", {})
        if "application/json" not in content:
            return problems  # a raw upload (release assets, markdown/raw): nothing to check
        pointer = self._pointer_of(op, "requestBody", "content", "application~1json", "schema")
        for error in self.validator(pointer).iter_errors(body):
            where = "/".join(str(p) for p in error.absolute_path) or "(root)"
            problems.append(f"body at {where}: {error.message}")
        return problems

    def documents_status(self, op: Operation, status: int) -> bool:
        """Whether GitHub's description lists ``status`` among the operation's answers."""
        return str(status) in op.spec["responses"]

    def check_response(self, op: Operation, status: int, body: Any) -> list[str]:
        """Problems with the fake's own JSON answer, if the description documents the status."""
        response = op.spec["responses"].get(str(status))
        if response is None:
            return []
        resolved = self.resolve(response)
        content = resolved.get("content", {})
        if "application/json" not in content or "schema" not in content["application/json"]:
            return []
        if "$ref" in response:
            base = response["$ref"].removeprefix("#")
        else:
            base = self._pointer_of(op, "responses", str(status))
        pointer = base + "/content/application~1json/schema"
        problems = []
        for error in self.validator(pointer).iter_errors(body):
            where = "/".join(str(p) for p in error.absolute_path) or "(root)"
            problems.append(f"response {status} at {where}: {error.message[:300]}")
        return problems

    def example(self, name: str) -> Any:
        """A deep copy of ``components/examples/<name>``'s value, the template for answers."""
        return copy.deepcopy(self.document["components"]["examples"][name]["value"])


@cache
def shared_api() -> OpenAPI:
    """One parsed description per process; validators are compiled as exchanges need them."""
    return OpenAPI(published.rest_description_path())


def _coerce(value: str, schema: Mapping[str, Any]) -> Any:
    """Turn a path or query string into the JSON type its schema names, when it looks like one."""
    kind = schema.get("type")
    if kind == "integer" and re.fullmatch(r"-?\d+", value):
        return int(value)
    if kind == "boolean" and value in ("true", "false"):
        return value == "true"
    return value
