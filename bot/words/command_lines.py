"""The lines of a comment where a command may start: at the start of a line of ordinary text.

A comment is Markdown, and a command counts only where a reader of the rendered comment would see
it typed as a command. What is ordinary text is CommonMark's to say, so markdown-it-py (a
CommonMark parser) reads the comment and this module only asks it where things are:

- a command is a line of a **paragraph** — not of a fenced or indented code block, not of a
  heading, not of raw HTML (an HTML comment, as in pull-request templates, hides what it holds;
  the lines of other raw HTML a browser joins into one, so none of them starts a line);
- outside every **block quote**, including the lines CommonMark folds into a quote because they
  follow a quoted line with no blank line between ("lazy continuation"): a reply that quotes
  ``/approve`` does not approve;
- at the start of a **line as it renders**: a paragraph's first line, or a line whose line break
  CommonMark kept as one — not a line that begins inside a code span, an HTML comment or a link
  destination running over several lines;
- with at most three spaces before it (a tab counts to the next multiple of four), the one rule
  for indentation whether the line is code or a paragraph's continuation;
- and what the line says leaves out an HTML comment on it (``/pause freeze <!-- until monday -->``
  pauses for ``freeze``), and stops at a ``<!--`` that opens none: CommonMark shows that as
  text, but a reason is echoed in replies, where it would hide the rest of the reply.

The block structure comes from markdown-it-py's token stream (each block token carries the lines
it spans). Inline tokens carry no positions: so the inline parser reads each paragraph's own
lines here, with its line-break and HTML rules wrapped to note where in those lines each token
began. ``tests/words/test_command_lines.py`` holds this reading to GitHub's own parser
(cmark-gfm) on generated comments, and names where markdown-it-py 4.3 still reads a quote
otherwise than CommonMark (a line indented four columns right after quoted text).
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Iterator
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.rules_inline import escape, html_inline, newline
from markdown_it.rules_inline.state_inline import StateInline
from markdown_it.token import Token

_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_BREAKS = frozenset({"softbreak", "hardbreak"})

_InlineRule = Callable[[StateInline, bool], bool]


def _noting_where(rule: _InlineRule) -> _InlineRule:
    """``rule``, noting on the token it makes the span of the source it read (``meta["span"]``):
    markdown-it-py's inline tokens carry no positions of their own."""

    def noted(state: StateInline, silent: bool) -> bool:
        start, made = state.pos, len(state.tokens)
        found = rule(state, silent)
        if found and not silent and len(state.tokens) > made:
            state.tokens[-1].meta["span"] = (start, state.pos)
        return found

    return noted


def _parser() -> MarkdownIt:
    """Strict CommonMark (raw HTML on, no GFM extensions). Its core ``inline`` step is off: a
    paragraph's inline content is parsed only if the paragraph can hold a command, from its own
    lines, so the positions noted are positions in those lines."""
    parser = MarkdownIt("commonmark").disable("inline")
    for name, rule in (("newline", newline), ("escape", escape), ("html_inline", html_inline)):
        parser.inline.ruler.at(name, _noting_where(rule))
    return parser


_MARKDOWN = _parser()


def _indent(text: str) -> int:
    """Columns of leading whitespace, a tab counting to the next multiple of four."""
    columns = 0
    for char in text:
        if char == " ":
            columns += 1
        elif char == "\t":
            columns += 4 - columns % 4
        else:
            break
    return columns


def command_lines(body: str) -> Iterator[tuple[int, str]]:
    """(line number, text) of each line that starts ordinary paragraph text in ``body``."""
    lines = _LINE_BREAK.split(body)
    env: dict[str, Any] = {}  # link reference definitions, which the inline parse needs
    quotes = 0
    for token in _MARKDOWN.parse(body, env):
        if token.type == "blockquote_open":
            quotes += 1
        elif token.type == "blockquote_close":
            quotes -= 1
        elif token.type == "paragraph_open" and not quotes and token.map is not None:
            first, end = token.map
            yield from _paragraph_lines(lines[first:end], first + 1, env)


def _paragraph_lines(
    lines: list[str], number: int, env: dict[str, Any]
) -> Iterator[tuple[int, str]]:
    """The lines of one paragraph (the first numbered ``number``) that start a rendered line,
    with any HTML comment on them cut out."""
    text = "\n".join(lines)
    tokens: list[Token] = []
    _MARKDOWN.inline.parse(text.replace("\0", "\ufffd"), _MARKDOWN, env, tokens)
    ends = [found.start() for found in re.finditer("\n", text)]
    starts = {0}  # the paragraph's first line; then each line a kept line break begins
    comments: list[tuple[int, int]] = []
    for token in tokens:
        span = token.meta.get("span")
        if span is None:
            continue
        if token.type in _BREAKS:
            starts.add(bisect.bisect_left(ends, span[0]) + 1)
        elif token.type == "html_inline" and token.content.startswith("<!--"):
            comments.append(span)
    offset = 0
    for index, line in enumerate(lines):
        if index in starts and _indent(line) <= 3:
            yield number + index, _without(line, offset, comments)
        offset += len(line) + 1


def _without(line: str, offset: int, comments: list[tuple[int, int]]) -> str:
    """``line`` (at ``offset`` in its paragraph) less the parts of it that ``comments`` cover,
    and up to a ``<!--`` that opens no comment."""
    kept: list[str] = []
    position = 0
    for start, end in comments:
        start, end = start - offset, end - offset
        if end <= position or start >= len(line):
            continue
        kept.append(line[position : max(start, position)])
        position = min(end, len(line))
    kept.append(line[position:])
    return "".join(kept).split("<!--", 1)[0]
