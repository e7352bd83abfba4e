"""Fuzzing the command parser on comments built like real ones: Markdown blocks around commands.

``tests/words/test_commands.py`` fuzzes plain text; here comment bodies are assembled from the
pieces that change what counts as a command — fences, quotes, HTML comments, code spans,
indented code, headings — and the lines between them, in any order and with any line endings,
up to GitHub's 65,536-character limit. Whatever the body, the parser returns commands and
problems, never raises, and each answer holds up on its own:

- it is on a line of the body, in order, one per line, on a line that does start with its slash;
- a command read back from its ``render`` is the same command;
- a problem's message shows what the person typed in code spans only, so the reply that quotes
  it cannot ``@mention`` anyone;
- the whole body is read in well under a second.
"""

from __future__ import annotations

import re
import time

from hypothesis import example, given
from hypothesis import strategies as st

from bot.words.commands import USAGE, Command, CommandProblem, parse_commands, render
from tests.fuzz.budget import fuzz

MAX_COMMENT = 65_536
"""GitHub refuses longer comment bodies."""

_words = st.sampled_from(
    [*(f"/{name}" for name in USAGE), "/aprove", "/stauts", "/lgtm", "/APPROVE", "/tmp", "/"]
)
_arguments = st.sampled_from(
    ["", "A", "b", " C ", "D", "fix", "research", "@octocat", "`x`", "@everyone please",
     "a `` b", "<!-- hidden -->", "why: the test is flaky", "\u00a0A", "é", "🙂"]
) | st.text(max_size=20)
command_line = st.builds(
    lambda indent, word, gap, argument: f"{indent}{word}{gap}{argument}",
    st.sampled_from(["", " ", "   ", "    ", "\t", " \t"]),
    _words,
    st.sampled_from([" ", "  ", "\t", "\u2028", ""]),
    _arguments,
)
block_line = st.sampled_from(
    ["```", "```python", "~~~", "````", "``` `", "   ```", "    ```", "> ", ">", "> > ", "<!--",
     "-->", "<!-- a -->", "text <!-- b", "`", "``", "\\`", "# heading", "#nospace", "", " ",
     "    indented code", "\tindented", "plain text", "- a list item", "1. item", "***",
     "<details>", "</details>", "<pre>", "\u202e", "\x00"]
)
text_line = st.text(max_size=30)
bodies = st.lists(
    st.one_of(command_line, block_line, text_line,
              st.builds(lambda prefix, line: prefix + line,
                        st.sampled_from(["> ", "`", "<!-- ", "    "]), command_line)),
    max_size=30,
).flatmap(lambda lines: st.builds(
    lambda ends: "".join(line + end for line, end in zip(lines, ends, strict=False)),
    st.lists(st.sampled_from(["\n", "\r\n", "\r"]), min_size=len(lines), max_size=len(lines)),
))

LINE_BREAK = re.compile(r"\r\n|\r|\n")


def _outside_code(message: str) -> str:
    return re.sub(r"(`+)(.*?)\1", "", message, flags=re.DOTALL)


def check(body: str) -> None:
    lines = LINE_BREAK.split(body)
    # CPU time, not the wall clock: a parser gone quadratic on a crafted comment takes tens
    # of seconds of CPU, whatever else the machine runs; a loaded machine only stretches the
    # wall clock (the guard against slow reading; speed itself is scripts/bench_*'s)
    started = time.process_time()
    found = parse_commands(body)
    assert time.process_time() - started < 2.0
    numbers = [item.line for item in found]
    assert numbers == sorted(set(numbers)), numbers
    for item in found:
        assert isinstance(item, Command | CommandProblem), item
        assert 1 <= item.line <= len(lines)
        assert lines[item.line - 1].lstrip(" \t").startswith("/"), (item, lines[item.line - 1])
        if isinstance(item, Command):
            assert parse_commands(render(item)) == [item.model_copy(update={"line": 1})]
        else:
            assert not re.search(r"@\w", _outside_code(item.message)), item.message
            assert item.suggestion is None or item.suggestion.startswith("/")


@fuzz(400)
@given(bodies)
@example("/approve @everyone")
@example("/quest @octocat and `` ` `` friends")
@example("/kill " + "`" * 70)
@example("<!-- x -->\n/approve\n-->\n/approve")
def test_any_comment_is_read_into_commands_and_problems(body: str) -> None:
    check(body)


@fuzz(20)
@given(bodies.filter(bool), st.integers(min_value=1, max_value=MAX_COMMENT))
def test_a_comment_as_long_as_github_allows_is_read_quickly(body: str, size: int) -> None:
    check((body * (size // len(body) + 1))[:size])
