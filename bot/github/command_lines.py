"""The lines of a comment where a command may start: at the start of a line of ordinary text.

A comment is Markdown, and a command counts only where a reader of the rendered comment would see
it typed as a command. The scanner walks the body line by line, tracking just enough Markdown
block structure to skip what is not ordinary text:

- fenced code blocks (````` ``` ````` or ``~~~``, three or more, with or without an info string;
  closed by a fence of the same character at least as long; an unclosed fence runs to the end),
- indented code: any line indented four or more columns (a tab counts to the next multiple of
  four) — after a paragraph line that is a continuation rather than code, and it is skipped too,
  so that there is one rule: at most three spaces before the slash,
- block quotes (``>``), including the lines GitHub folds into a quote because they follow a
  quoted line with no blank line between ("lazy continuation"): a reply that quotes ``/approve``
  does not approve, and what the bot reads is what the rendered comment shows,
- HTML comments (``<!-- … -->``, possibly over several lines, as in pull-request templates;
  an unclosed one hides the rest of the comment; text after a comment on the line that closes
  it does not start a line),
- inline code spans, which may run over several lines of one paragraph.

Other raw HTML (``<pre>``, ``<details>``) is read as text.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterator

_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_FENCE_OPEN = re.compile(r"(?P<fence>`{3,}|~{3,})(?P<info>.*)", re.DOTALL)
_FENCE_CLOSE = re.compile(r"(?P<fence>`{3,}|~{3,})[ \t]*")
_HEADING = re.compile(r"#{1,6}(?:[ \t]|$)")


def _indent(text: str) -> tuple[int, str]:
    """Columns of leading whitespace (tabs to the next multiple of four) and the rest."""
    columns = 0
    for index, char in enumerate(text):
        if char == " ":
            columns += 1
        elif char == "\t":
            columns += 4 - columns % 4
        else:
            return columns, text[index:]
    return columns, ""


def _strip_html_comments(line: str, inside: bool) -> tuple[str, bool]:
    """The part of ``line`` outside HTML comments, and whether a comment is still open after it."""
    visible: list[str] = []
    position = 0
    while True:
        if inside:
            end = line.find("-->", position)
            if end < 0:
                return "".join(visible), True
            position, inside = end + 3, False
        else:
            start = line.find("<!--", position)
            if start < 0:
                visible.append(line[position:])
                return "".join(visible), False
            visible.append(line[position:start])
            position, inside = start + 4, True


def command_lines(body: str) -> Iterator[tuple[int, str]]:
    """(line number, text) of each line that starts ordinary paragraph text in ``body``."""
    fence: tuple[str, int] | None = None  # the open fence's character and length
    in_html_comment = False
    lazy_quote = False  # the previous line was quoted text that a plain line would continue
    paragraph: list[tuple[int, str, bool]] = []  # (number, text, may start a command)

    for number, raw in enumerate(_LINE_BREAK.split(body), start=1):
        if fence is not None:
            indent, rest = _indent(raw)
            close = _FENCE_CLOSE.fullmatch(rest) if indent <= 3 else None
            if close and close["fence"][0] == fence[0] and len(close["fence"]) >= fence[1]:
                fence = None
            continue
        indent, rest = _indent(raw)
        if not in_html_comment and indent <= 3 and rest.startswith(">"):
            # The quote is a container: whatever it holds, comments included, stays in it.
            yield from _outside_code_spans(paragraph)
            paragraph = []
            quoted = rest.lstrip("> \t")
            lazy_quote = bool(quoted.strip()) and not _FENCE_OPEN.match(quoted.lstrip())
            continue
        # A command must start the line as written: text after a comment that opens the line,
        # or that a previous line opened, is not at the start of a line.
        starts_plain = not in_html_comment and not rest.startswith("<!--")
        text, in_html_comment = _strip_html_comments(raw, in_html_comment)
        indent, rest = _indent(text)
        if not rest:
            yield from _outside_code_spans(paragraph)
            paragraph, lazy_quote = [], False
            continue
        opening = _FENCE_OPEN.fullmatch(rest) if indent <= 3 else None
        if opening and not (opening["fence"][0] == "`" and "`" in opening["info"]):
            yield from _outside_code_spans(paragraph)
            paragraph, lazy_quote = [], False
            fence = (opening["fence"][0], len(opening["fence"]))
            continue
        if lazy_quote:
            lazy_quote = not (indent <= 3 and _HEADING.match(rest))  # a heading ends the quote
            continue
        if indent >= 4:
            if paragraph:
                paragraph.append((number, text, False))
            continue
        if _HEADING.match(rest):
            yield from _outside_code_spans(paragraph)
            paragraph = []
            continue
        paragraph.append((number, text, starts_plain))
    yield from _outside_code_spans(paragraph)


def _outside_code_spans(paragraph: list[tuple[int, str, bool]]) -> Iterator[tuple[int, str]]:
    """The candidate lines of one paragraph whose start is not inside a multi-line code span.

    CommonMark: a run of N backticks opens a span that the next run of exactly N closes; a run
    with no closer is literal text; a backslash escapes one backtick outside spans.
    """
    if not paragraph:
        return
    joined = "\n".join(text for _, text, _ in paragraph)
    starts: list[int] = []
    offset = 0
    for _, text, _ in paragraph:
        starts.append(offset)
        offset += len(text) + 1
    runs = [(m.start(), m.end()) for m in re.finditer(r"`+", joined)]
    by_length: dict[int, list[int]] = {}
    for index, (start, end) in enumerate(runs):
        by_length.setdefault(end - start, []).append(index)
    spans: list[tuple[int, int]] = []
    index = 0
    while index < len(runs):
        start, end = runs[index]
        backslashes = 0
        while start - backslashes > 0 and joined[start - backslashes - 1] == "\\":
            backslashes += 1
        if backslashes % 2:
            start += 1  # the first backtick is escaped; the rest of the run may still open
        same = by_length.get(end - start, [])
        after = bisect.bisect_right(same, index)
        if start == end or after == len(same):
            index += 1
            continue
        closer = same[after]
        spans.append((end, runs[closer][0]))
        index = closer + 1
    openings = [lo for lo, _ in spans]  # spans are in order and do not overlap
    for (number, text, candidate), line_start in zip(paragraph, starts, strict=True):
        before = bisect.bisect_left(openings, line_start) - 1
        if candidate and not (before >= 0 and line_start < spans[before][1]):
            yield number, text
