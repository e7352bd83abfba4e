"""Hypothesis strategies for questbot's inputs: webhook payloads, comment bodies, settings files.

Random JSON alone rarely gets past a parser's first ``if``, so payloads start from GitHub's real
examples (``questbot_testing.published``) and are then damaged the ways deliveries really
differ: a field missing, null, of another type, huge, or in a script the author did not expect.
Three mutations in four hit one of the paths the parser reads (``HOT``: the action, the repository,
the object the event is about and its fields), present or not; the others walk down from the
top of the payload, half the time into a field questbot reads, so they also damage what the
parser was not written to expect. A mutation may add a field the example lacks.
"""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import strategies as st

from questbot_testing.fakegithub.webhooks import deep_merge, example_files, load_example

EXAMPLES = [(example.event, example.load()) for example in example_files()]

_FAILED_ON_MAIN = {"conclusion": "failure", "head_branch": "master"}
PRIMED = [
    (event, deep_merge(load_example(event, name), overrides))
    for event, name, overrides in [
        ("check_run", "completed", {"check_run": {"conclusion": "failure",
                                                  "check_suite": {"head_branch": "master"}}}),
        ("check_suite", "completed", {"check_suite": _FAILED_ON_MAIN}),
        ("workflow_run", "completed", {"workflow_run": _FAILED_ON_MAIN | {"name": "CI"}}),
        ("check_run", "requested_action", {"check_run": {"external_id": "q0123456789",
                                                         "pull_requests": [{"number": 7}]}}),
        ("push", "with-installation", {"ref": "refs/heads/quest/q0123456789"}),
        ("push", "with-installation", {"ref": "refs/heads/master", "commits": [
            {"added": [], "modified": [".github/questbot.yml"], "removed": []}]}),
        ("issues", "labeled", {"issue": {"labels": [{"name": "questbot"}]}}),
        ("issue_comment", "created", {"comment": {"body": "/approve A\n> /kill no\n/aprove"}}),
        ("issue_comment", "created", {"issue": {"pull_request": {"url": "x"}},
                                      "comment": {"body": "LGTM\n\n/revise add a test"}}),
        ("issue_comment", "edited", {"changes": {"body": {"from": "/approve\n"}},
                                     "comment": {"body": "/approve\n/claim\n"}}),
        ("pull_request_review", "submitted", {
            "review": {"state": "approved"},
            "pull_request": {"head": {"ref": "quest/q0123456789"}}}),
        ("pull_request", "closed", {"pull_request": {"head": {"ref": "quest/q0123456789"},
                                                     "merged": True}}),
        ("pull_request", "reopened", {"pull_request": {"head": {"ref": "quest/q0123456789"}}}),
    ]
]
"""Real examples changed just enough to hold what questbot reads (a failure on the default
branch, a quest branch, a command), so mutations start from deliveries that reach a handler."""
ROUTED = PRIMED + [(event, payload) for event, payload in EXAMPLES if event in {
    "check_run", "check_suite", "workflow_run", "issues", "push", "issue_comment",
    "installation", "installation_repositories", "pull_request", "pull_request_review"}]
"""The deliveries a handler reads; three in four fuzzed payloads start from one of these."""

READ_KEYS = (
    "action", "installation", "id", "repositories", "repositories_added", "full_name",
    "repository", "default_branch", "check_run", "check_suite", "workflow_run", "app", "slug",
    "head_sha", "head_branch", "name", "conclusion", "html_url", "url", "issue", "number",
    "pull_request", "labels", "title", "ref", "before", "after", "sender", "login", "type",
    "pusher", "commits", "added", "modified", "removed", "comment", "user", "body",
    "external_id", "pull_requests", "requested_action", "identifier", "changes", "from",
    "check_suite_id", "run_attempt", "review", "state", "commit_id", "merged",
    "merge_commit_sha", "head",
)
"""Every key ``bot.intake.routes`` reads somewhere: the names a mutation may add."""

ODD_TEXT = (
    "", " ", "\x00", "\u202e/approve", "/approve\u00a0A", "é" * 3, "🙂" * 50,
    "\ud7ff\ue000\uffff", "../../etc/passwd",
    "refs/heads/quest/", "refs/heads/quest/q1/../x", "0" * 40, "null", "[bot]", "Bot",
    "success", "failure", "completed", "created", "edited", "deleted", "main",
)
"""Strings that have broken parsers before: control and bidi characters, surrogates' neighbours,
sizes far past a comment's, traversal, values with meaning in one field put in another."""



def _huge(kind: str) -> str:
    """A value far past any field's size: one long word, or a comment of nothing but commands."""
    return "x" * 100_000 if kind == "word" else "/approve\n" * 2_000


huge = st.sampled_from(["word", "commands"]).map(_huge)
text = st.text(max_size=40) | st.sampled_from(ODD_TEXT) | huge
scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**64)
    | st.floats(allow_nan=False, allow_infinity=False)
    | text
)
json_values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(text | st.sampled_from(READ_KEYS),
                                                                  inner, max_size=4),
    max_leaves=12,
)
"""Any JSON value (no NaN: GitHub sends none, and the web process refuses it)."""

Path = tuple[str | int, ...]


@st.composite
def mutation_path(draw: st.DrawFn, payload: Any) -> Path:
    """A path into ``payload``, chosen by walking down one random child at a time."""
    path: list[str | int] = []
    node = payload
    while isinstance(node, dict | list) and node and draw(st.integers(0, 3)) > 0:
        keys: list[str | int] = sorted(node) if isinstance(node, dict) else list(range(len(node)))
        read = [key for key in keys if key in READ_KEYS]  # half the time, a field questbot reads
        key = draw(st.sampled_from(read if read and draw(st.booleans()) else keys))
        path.append(key)
        node = node[key]
    return tuple(path)


_OBJECTS = {
    "check_run": ("head_sha", "name", "conclusion", "html_url", "external_id", "id",
                  "pull_requests", ("pull_requests", 0), ("pull_requests", 0, "number"),
                  "check_suite", ("check_suite", "head_branch"), "app", ("app", "slug")),
    "check_suite": ("conclusion", "head_branch", "head_sha", "url", "app", ("app", "slug")),
    "workflow_run": ("conclusion", "head_branch", "head_sha", "name", "html_url"),
    "issue": ("number", "title", "html_url", "pull_request", "labels", ("labels", 0),
              ("labels", 0, "name")),
    "comment": ("id", "body", "user", ("user", "login"), ("user", "type")),
    "sender": ("login", "type"), "pusher": ("name",), "installation": ("id",),
    "repository": ("full_name", "default_branch"), "requested_action": ("identifier",),
    "changes": ("body", ("body", "from")),
    "review": ("id", "state", "commit_id", "body", "user", ("user", "login"), ("user", "type")),
    "pull_request": ("number", "merged", "merge_commit_sha", "head", ("head", "ref"),
                     ("head", "sha")),
    "commits": (0, (0, "added"), (0, "modified"), (0, "removed")),
    "repositories": (0, (0, "full_name")), "repositories_added": (0, (0, "full_name")),
}
HOT: tuple[tuple[str | int, ...], ...] = (
    ("action",), ("ref",), ("before",), ("after",),
    *((name,) for name in _OBJECTS),
    *((name, *(field if isinstance(field, tuple) else (field,)))
      for name, fields in _OBJECTS.items() for field in fields),
)
"""Every path ``bot.intake.routes`` reads, from the top of the payload."""


def hot_paths(payload: Any) -> list[Path]:
    """The paths of ``HOT`` whose parent exists in ``payload``: where a mutation hurts most."""
    found = []
    for path in HOT:
        try:
            parent = _parent(payload, path)
        except (KeyError, IndexError, TypeError):
            continue
        last = path[-1]
        if (isinstance(parent, dict) and isinstance(last, str)) or (
                isinstance(parent, list) and isinstance(last, int) and last < len(parent)):
            found.append(path)
    return found


def _parent(payload: Any, path: Path) -> Any:
    node = payload
    for key in path[:-1]:
        node = node[key]
    return node


@st.composite
def mutated(draw: st.DrawFn, payload: dict[str, Any], max_mutations: int = 4) -> dict[str, Any]:
    """``payload`` with up to ``max_mutations`` fields removed, replaced or added."""
    out = copy.deepcopy(payload)
    for _ in range(draw(st.integers(1, max_mutations))):
        targets = hot_paths(out)
        path = draw(st.sampled_from(targets)) if targets and draw(st.integers(0, 3)) else draw(
            mutation_path(out))
        parent = _parent(out, path) if path else None
        if isinstance(parent, dict) and path[-1] not in parent:
            parent[path[-1]] = draw(json_values)  # a field the example lacks
            continue
        target = out if not path else _parent(out, path)[path[-1]]
        how = draw(st.sampled_from(["replace", "retype", "null", "remove", "add", "huge"]))
        if how == "add" and isinstance(target, dict):
            target[draw(st.sampled_from(READ_KEYS) | text)] = draw(json_values)
        elif not path:
            continue  # the top stays an object: the web process refuses anything else
        elif how == "remove" and isinstance(_parent(out, path), dict):
            del _parent(out, path)[path[-1]]
        elif how == "null":
            _parent(out, path)[path[-1]] = None
        elif how == "huge":
            _parent(out, path)[path[-1]] = draw(huge)
        elif how == "retype":  # the same value in another JSON type
            value = _parent(out, path)[path[-1]]
            _parent(out, path)[path[-1]] = draw(st.sampled_from(
                [[value], {"value": value}, [], {}, 0, 1, True, "", str(value)[:40]]))
        else:
            _parent(out, path)[path[-1]] = draw(json_values)
    return out


@st.composite
def deliveries(draw: st.DrawFn) -> tuple[str, dict[str, Any]]:
    """(event name, payload): a real example, mutated; sometimes under another event's name."""
    event, payload = draw(st.sampled_from(ROUTED) if draw(st.integers(0, 3)) else
                          st.sampled_from(EXAMPLES))
    if draw(st.integers(0, 9)) == 0:
        event = draw(st.sampled_from(sorted({e for e, _ in EXAMPLES})) | text)
    if draw(st.integers(0, 9)) == 0:
        return event, draw(st.dictionaries(st.sampled_from(READ_KEYS) | text, json_values,
                                           max_size=6))
    return event, draw(mutated(payload))
