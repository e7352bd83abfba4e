"""Check HTTP exchanges against GitHub's own REST description.

The fake answers only what ``rest-subset.openapi.json`` documents, plus the few operations of
``BEYOND_SUBSET`` read from GitHub's full description (``rest/api.github.com.json``) with every
component they reference — the way the subset itself was made — so a request the bot makes
that GitHub would not understand fails here first, in a test, rather than in production. The
description is OpenAPI 3.0, whose schemas are almost JSON Schema: the one difference that
matters is ``nullable: true``, translated once at load time into a ``"null"`` alternative. The
whole translated document is registered as one resource so every ``$ref`` resolves inside it.

Problems come back as readable strings ("POST /repos/o/r/pulls: body: 'head' is a required
property") for the server to record as violations; nothing here raises on bad input.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache, cached_property
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from jsonschema import Draft7Validator  # type: ignore[import-untyped]
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT7

from tests.shared import GITHUB

SPEC_PATH = GITHUB / "rest-subset.openapi.json"
FULL_SPEC_PATH = GITHUB / "rest" / "api.github.com.json"
BEYOND_SUBSET = ("issues/list-comments", "issues/list-for-repo", "pulls/list")
"""Operations questbot uses that the subset lacks (until the fake moves to the full description)."""
_BASE = "urn:github-rest-subset"
_METHODS = ("get", "put", "post", "patch", "delete")


def _refs(node: Any) -> list[str]:
    """Every local ``$ref`` inside ``node``."""
    if isinstance(node, list):
        return [ref for item in node for ref in _refs(item)]
    if not isinstance(node, dict):
        return []
    found = [node["$ref"]] if isinstance(node.get("$ref"), str) else []
    return found + [ref for value in node.values() for ref in _refs(value)]


def with_operations(document: dict[str, Any], full: Mapping[str, Any],
                    operation_ids: tuple[str, ...]) -> dict[str, Any]:
    """``document`` with the operations ``operation_ids`` of ``full`` added (Octokit's
    ``x-octokit`` dropped, as in the subset), and every component they reference."""
    out = copy.deepcopy(document)
    wanted = set(operation_ids)
    for template, item in full["paths"].items():
        for method in _METHODS:
            spec = item.get(method)
            if not isinstance(spec, dict) or spec.get("operationId") not in wanted:
                continue
            wanted.discard(spec["operationId"])
            target = out["paths"].setdefault(template, {})
            if "parameters" in item:
                target.setdefault("parameters", copy.deepcopy(item["parameters"]))
            target[method] = {k: copy.deepcopy(v) for k, v in spec.items() if k != "x-octokit"}
    if wanted:
        raise KeyError(f"not in GitHub's REST description: {sorted(wanted)}")
    pending = _refs(out["paths"])
    while pending:
        kind, name = pending.pop().removeprefix("#/components/").split("/", 1)
        have = out.setdefault("components", {}).setdefault(kind, {})
        if name not in have:
            have[name] = copy.deepcopy(full["components"][kind][name])
            pending.extend(_refs(have[name]))
    return out


def translate_nullable(node: Any) -> Any:
    """Return ``node`` with OpenAPI 3.0 ``nullable: true`` rewritten as JSON Schema.

    ``{"type": "string", "nullable": true}`` becomes ``{"type": ["string", "null"]}``; a nullable
    schema without ``type`` (a ``$ref`` or ``allOf``) becomes ``anyOf`` of itself and null.
    """
    if isinstance(node, list):
        return [translate_nullable(item) for item in node]
    if not isinstance(node, dict):
        return node
    out = {key: translate_nullable(value) for key, value in node.items()}
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
    regex: re.Pattern[str]
    specificity: int

    @cached_property
    def parameters(self) -> list[Mapping[str, Any]]:
        return list(self.spec.get("parameters", []))


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


class OpenAPI:
    """The REST description: match requests to operations and validate both directions."""

    def __init__(self, path: Path = SPEC_PATH, *, beyond: tuple[str, ...] = BEYOND_SUBSET,
                 full_path: Path = FULL_SPEC_PATH) -> None:
        raw = json.loads(path.read_text())
        if beyond:
            raw = with_operations(raw, json.loads(full_path.read_text()), beyond)
        self.document: dict[str, Any] = translate_nullable(raw)
        resource: Resource[Any] = DRAFT7.create_resource(self.document)
        self._registry: Registry[Any] = Registry().with_resource(_BASE, resource)
        self._validators: dict[str, Draft7Validator] = {}
        self.operations: list[Operation] = []
        for template, item in self.document["paths"].items():
            shared = item.get("parameters", [])
            for method in _METHODS:
                if method not in item:
                    continue
                spec = dict(item[method])
                params = [self.resolve(p) for p in [*shared, *spec.get("parameters", [])]]
                spec["parameters"] = params
                multi = {p["name"] for p in params if p.get("x-multi-segment")}
                # Only a trailing parameter may swallow slashes (contents/{path}, git/ref/{ref});
                # elsewhere GitHub expects the client to percent-encode them.
                multi = {name for name in multi if template.endswith("{" + name + "}")}
                regex, literal = _template_regex(template, multi)
                self.operations.append(
                    Operation(method.upper(), template, spec["operationId"], spec, regex, literal)
                )
        # Prefer the template with the most literal text: issues/comments/{id} over issues/{n}.
        self.operations.sort(key=lambda op: -op.specificity)

    def resolve(self, node: Mapping[str, Any]) -> dict[str, Any]:
        """Follow a local ``$ref`` (one level at a time) to the object it names."""
        while "$ref" in node:
            target: Any = self.document
            for part in node["$ref"].removeprefix("#/").split("/"):
                target = target[part]
            node = target
        return dict(node)

    def validator(self, pointer: str) -> Draft7Validator:
        """A validator for the schema at a JSON pointer into the document, cached."""
        if pointer not in self._validators:
            schema = {"$ref": f"{_BASE}#{pointer}"}
            self._validators[pointer] = Draft7Validator(schema, registry=self._registry)
        return self._validators[pointer]

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
        template = op.template.replace("~", "~0").replace("/", "~1")
        return "/".join(["", "paths", template, op.method.lower(), *parts])

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
            schema = param.get("schema", {})
            value = _coerce(value, schema)
            for error in Draft7Validator(schema).iter_errors(value):
                problems.append(f"{where} parameter {name!r}: {error.message}")
        for name in query:
            if name not in known:
                problems.append(f"unknown query parameter {name!r}")
        request_body = op.spec.get("requestBody")
        if request_body is None:
            return problems
        if not has_body:
            if request_body.get("required"):
                problems.append("a JSON body is required")
            return problems
        pointer = self._pointer_of(op, "requestBody", "content", "application~1json", "schema")
        for error in self.validator(pointer).iter_errors(body):
            where = "/".join(str(p) for p in error.absolute_path) or "(root)"
            problems.append(f"body at {where}: {error.message}")
        return problems

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
    """One parsed description per process: parsing and compiling validators is the slow part."""
    return OpenAPI(SPEC_PATH)


def _coerce(value: str, schema: Mapping[str, Any]) -> Any:
    """Turn a path or query string into the JSON type its schema names, when it looks like one."""
    kind = schema.get("type")
    if kind == "integer" and re.fullmatch(r"-?\d+", value):
        return int(value)
    if kind == "boolean" and value in ("true", "false"):
        return value == "true"
    return value
