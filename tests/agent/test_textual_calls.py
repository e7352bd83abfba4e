"""Tool calls written as text are read back whole or not at all (``bot.agent.model.textual``):
the recorded answers of a real server, and every shape for any calls (hypothesis)."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from bot.agent.model.textual import tool_calls_in
from questbot_testing.modelserver.behaviours import call_as_text, fact

TOOLS = ("list_files", "read_file", "search", "read_log", "run_command", "answer", "halt")


def content(name: str) -> str:
    response = fact("llamacpp-tool-call-as-text")["responses"][name]
    return str(response["choices"][0]["message"]["content"])


def test_what_llamacpp_sent_as_text_is_read_as_calls() -> None:
    assert tool_calls_in(content("fenced"), TOOLS) == [
        ("list_files", {"directory": ".", "pattern": "*"})]
    assert tool_calls_in(content("functions"), TOOLS) == [("read_log", {})]
    calls = tool_calls_in(content("lines"), TOOLS)
    assert [name for name, _ in calls] == ["search", "read_log"]
    assert calls[0][1] == {"pattern": ".*"}  # its arguments came as a JSON string


def test_what_is_not_a_call_stays_text() -> None:
    for text in ["The bug is in page_count.", "```python\nprint(1)\n```", "{not json}",
                 '{"name": "rm_rf", "arguments": {}}',  # a tool nobody offered
                 '{"name": "read_file", "arguments": ["pager.py"]}',  # arguments not an object
                 '{"name": "read_file", "arguments": {}, "extra": 1}',
                 "<tool_call>\n{\"name\": \"read_file\"\n</tool_call>",  # cut short
                 "functions.unknown:\n{}", ""]:
        assert tool_calls_in(text, TOOLS) == [], text


json_scalars = st.one_of(st.none(), st.booleans(), st.integers(-10**6, 10**6),
                         st.text(max_size=30))
arguments = st.dictionaries(
    st.text(st.characters(categories=("Ll", "Nd"), include_characters="_"), min_size=1,
            max_size=12),
    st.recursive(json_scalars, lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=8), inner, max_size=3)),
        max_leaves=6),
    max_size=4)
calls = st.lists(st.tuples(st.sampled_from(TOOLS), arguments), min_size=1, max_size=3)
prose = st.text(st.characters(categories=("L", "Zs"), exclude_characters="{[`<"), max_size=60)


@given(calls=calls, style=st.sampled_from(["fenced", "lines", "hermes", "functions"]),
       before=prose)
def test_any_calls_in_any_shape_read_back_exactly(calls: list[tuple[str, dict[str, Any]]],
                                                   style: Any, before: str) -> None:
    text = "\n".join(call_as_text(style, name, args) for name, args in calls)
    if before.strip() and style != "functions":
        text = f"{before.strip()}\n{text}"
    assert tool_calls_in(text, TOOLS) == [(name, json.loads(json.dumps(args)))
                                          for name, args in calls]


@given(calls=calls, style=st.sampled_from(["fenced", "lines", "hermes", "functions"]))
def test_a_call_of_a_tool_not_offered_is_no_call(calls: list[tuple[str, dict[str, Any]]],
                                                 style: Any) -> None:
    text = "\n".join(call_as_text(style, name, args) for name, args in calls)
    offered = [t for t in TOOLS if t != calls[0][0]]
    assert tool_calls_in(text, offered) == []


@given(text=st.text(max_size=200))
def test_arbitrary_text_never_breaks_the_reader(text: str) -> None:
    for name, args in tool_calls_in(text, TOOLS):
        assert name in TOOLS and isinstance(args, dict)
