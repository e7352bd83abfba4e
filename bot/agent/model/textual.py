"""Tool calls a model wrote as text, read back as tool calls.

Why. A server that renders tools with the model's own chat template may accept a tool
request and hand back the model's call as *text* in ``content``, with ``tool_calls`` empty
(llama.cpp's server with a model template, recorded in issue 25: a fenced JSON object, or
``functions.read_log:``). The conversation then sees prose where a call was meant, asks again,
and gives up ("Exceeded maximum output retries"). Reading the call back is what llama.cpp's,
vLLM's and Ollama's own tool parsers do on the server side.

Which parser. The well-kept parsers are those servers' own, and they come with the server
(vLLM's pulls in the whole engine); the small packages on PyPI that lift them out are young
and "auto-repair" what they cannot read, which is the opposite of what questbot needs
(``docs/decisions.md``). So this is a small parser of its own, strict on purpose:

* it reads four shapes, each seen or documented: Hermes/Qwen ``<tool_call>{json}</tool_call>``
  tags; a fenced ```` ```json ```` block holding a call; bare JSON calls, one a line; and
  llama-cpp-python's ``functions.NAME:`` followed by the arguments' JSON (or nothing);
* a call is a JSON object ``{"name": …, "arguments": {…}}`` (``parameters`` is accepted for
  ``arguments``, and arguments given as a JSON *string* of an object are decoded once);
* the name must be one of the tools the request offered, and the arguments an object;
* anything it cannot read whole is not a call: the text stays text, and the conversation
  tells the model, as it would have anyway. Prose before or after the calls is left out.

``tool_calls_in`` is property-tested against the shapes it reads (``tests/agent/
test_textual_calls.py``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Iterator
from typing import Any

Call = tuple[str, dict[str, Any]]

_TAG = re.compile(r"<tool_call>\s*(.*?)\s*</tool_call>", re.DOTALL)
_FENCE = re.compile(r"```[A-Za-z0-9_-]*[ \t]*\n(.*?)\n```", re.DOTALL)
_FUNCTIONS = re.compile(r"(?m)^[ \t]*functions\.([A-Za-z0-9_.-]+):[ \t]*")
_DECODER = json.JSONDecoder()


def tool_calls_in(text: str, tools: Collection[str]) -> list[Call]:
    """The tool calls written in ``text``, in order; ``[]`` when it holds none that can be read
    whole (see the module docs for what counts)."""
    offered = frozenset(tools)
    if not text or not offered:
        return []
    for reader in (_tagged, _fenced, _functions, _bare):
        calls = reader(text, offered)
        if calls is not None:
            return calls
    return []


def _call(value: Any, offered: frozenset[str]) -> Call | None:
    if not isinstance(value, dict) or set(value) - {"name", "arguments", "parameters"}:
        return None
    name = value.get("name")
    arguments: Any = value.get("arguments", value.get("parameters", {}))
    if "arguments" in value and "parameters" in value:
        return None
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments) if arguments.strip() else {}
        except ValueError:
            return None
    if not isinstance(name, str) or name not in offered or not isinstance(arguments, dict):
        return None
    return name, arguments


def _calls_of(value: Any, offered: frozenset[str]) -> list[Call] | None:
    """A call, or a JSON array of calls; ``None`` if any part is not one."""
    values = value if isinstance(value, list) and value else [value]
    calls = [_call(v, offered) for v in values]
    return None if any(c is None for c in calls) else [c for c in calls if c is not None]


def _json_values(text: str) -> Iterator[Any] | None:
    """Whitespace-separated JSON values that make up all of ``text``; ``None`` otherwise."""
    values: list[Any] = []
    at, end = 0, len(text)
    while True:
        while at < end and text[at].isspace():
            at += 1
        if at == end:
            return iter(values) if values else None
        try:
            value, at = _DECODER.raw_decode(text, at)
        except ValueError:
            return None
        values.append(value)


def _all_calls(text: str, offered: frozenset[str]) -> list[Call] | None:
    values = _json_values(text)
    if values is None:
        return None
    calls: list[Call] = []
    for value in values:
        found = _calls_of(value, offered)
        if found is None:
            return None
        calls += found
    return calls


def _tagged(text: str, offered: frozenset[str]) -> list[Call] | None:
    blocks = _TAG.findall(text)
    if not blocks:
        return None
    calls: list[Call] = []
    for block in blocks:
        found = _all_calls(block, offered)
        if found is None:
            return None
        calls += found
    return calls


def _fenced(text: str, offered: frozenset[str]) -> list[Call] | None:
    blocks = _FENCE.findall(text)
    if not blocks:
        return None
    calls: list[Call] = []
    for block in blocks:
        found = _all_calls(block, offered)
        if found is None:
            return None
        calls += found
    return calls


def _functions(text: str, offered: frozenset[str]) -> list[Call] | None:
    marks = list(_FUNCTIONS.finditer(text))
    if not marks:
        return None
    calls: list[Call] = []
    for mark, following in zip(marks, [*marks[1:], None], strict=True):
        name = mark.group(1)
        if name not in offered:
            return None
        body = text[mark.end():following.start() if following else len(text)].strip()
        if not body:
            calls.append((name, {}))
            continue
        try:
            arguments, used = _DECODER.raw_decode(body)
        except ValueError:
            return None
        if not isinstance(arguments, dict) or (following is None and body[used:].strip()
                                               and not _is_prose(body[used:])):
            return None
        calls.append((name, arguments))
    return calls


def _bare(text: str, offered: frozenset[str]) -> list[Call] | None:
    """JSON calls, one a line, after any prose: the text from the first line that opens a JSON
    object or array must be calls and nothing else."""
    lines = text.splitlines(keepends=True)
    for index, line in enumerate(lines):
        if line.lstrip().startswith(("{", "[")):
            return _all_calls("".join(lines[index:]), offered)
    return None


def _is_prose(text: str) -> bool:
    """Trailing words after a ``functions.NAME:`` call's arguments, not more JSON."""
    return not text.lstrip().startswith(("{", "["))
