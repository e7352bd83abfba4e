"""What GitHub would show of a body questbot writes: GitHub Flavoured Markdown rendered to HTML
(markdown-it-py, a dependency, with raw HTML, tables, strikethrough and task lists as GitHub has
them), the text a person sees in it, and the markup that leaked into that text — a literal
``**``, a backtick, an escaped ``<details>``, a backslash escape shown as such, a link that did
not become one, a ``<details>`` left open. ``page`` wraps the HTML in a GitHub-like page for
the headless browser (``tests/words/test_rendered.py``) and the pictures in ``docs/pictures``.
"""

from __future__ import annotations

import html
import re
from html.parser import HTMLParser

from markdown_it import MarkdownIt

_MD = MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"])
_TASK = re.compile(r"<li>(?:<p>)?\[( |x)\] ")
_VOID = {"br", "hr", "img", "input", "meta", "link", "wbr"}


def to_html(markdown: str) -> str:
    """``markdown`` as GitHub renders it, near enough: CommonMark with raw HTML, tables,
    strikethrough, and ``- [ ]`` task list items as checkboxes."""
    rendered = _MD.render(markdown)
    return _TASK.sub(lambda m: m.group(0).replace(
        f"[{m.group(1)}] ", '<input type="checkbox" disabled'
        + (" checked" if m.group(1) == "x" else "") + "> "), rendered)


class _Reader(HTMLParser):
    """The text outside code, and whether every ``<details>`` and ``<summary>`` closes."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.text: list[str] = []
        self.code = 0
        self.open: dict[str, int] = {"details": 0, "summary": 0}
        self.problems: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("code", "pre"):
            self.code += 1
        if tag in self.open:
            self.open[tag] += 1

    def handle_endtag(self, tag: str) -> None:
        if tag in ("code", "pre"):
            self.code -= 1
        if tag in self.open:
            self.open[tag] -= 1
            if self.open[tag] < 0:
                self.problems.append(f"a </{tag}> that closes nothing")

    def handle_data(self, data: str) -> None:
        if not self.code:
            self.text.append(data)


LEAKS: dict[str, re.Pattern[str]] = {
    "a literal **": re.compile(r"\*\*"),
    "a backtick": re.compile(r"`"),
    "an HTML tag shown as text": re.compile(r"</?(details|summary|code|br|img|a)\b[^>]*>", re.I),
    "a backslash escape shown as such": re.compile(r"\\[\\`*_{}\[\]()#+\-.!|<>~=:]"),
    "a link that did not become one": re.compile(r"\]\((https?://|#)"),
    "a heading mark shown as text": re.compile(r"(^|\n)#{1,6} "),
}


def visible_text(rendered: str) -> str:
    reader = _Reader()
    reader.feed(rendered)
    return "".join(reader.text)


def leaks(markdown: str) -> list[str]:
    """The raw markup a person would see in ``markdown`` rendered (code aside)."""
    reader = _Reader()
    reader.feed(to_html(markdown))
    reader.close()
    text = "".join(reader.text)
    found = list(reader.problems)
    found += [f"{n} <{t}> left open" for t, n in reader.open.items() if n > 0]
    for what, pattern in LEAKS.items():
        found += [f"{what}: {text[max(m.start() - 40, 0):m.end() + 40]!r}"
                  for m in pattern.finditer(text)]
    return found


STYLE = """
body { margin: 0; background: #fff; }
.comment { width: 760px; margin: 8px; border: 1px solid #d0d7de; border-radius: 6px;
  font: 14px/1.5 -apple-system, "Segoe UI", "Noto Sans", Helvetica, Arial, sans-serif;
  color: #1f2328; }
.comment > header { background: #f6f8fa; border-bottom: 1px solid #d0d7de; padding: 8px 16px;
  color: #59636e; border-radius: 6px 6px 0 0; }
.comment > header b { color: #1f2328; }
.body { padding: 4px 16px 8px; }
h1, h2, h3, h4 { margin: 16px 0 8px; line-height: 1.25; font-weight: 600; }
h1 { font-size: 1.6em; } h3 { font-size: 1.25em; } h4 { font-size: 1em; }
p, ul, ol, blockquote, pre, details { margin: 0 0 12px; }
ul, ol { padding-left: 2em; }
code { background: #eff1f3; border-radius: 6px; padding: .2em .4em; font-size: 85%;
  font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
pre { background: #f6f8fa; border-radius: 6px; padding: 12px; overflow: auto; font-size: 85%; }
pre code { background: none; padding: 0; }
blockquote { color: #59636e; border-left: .25em solid #d0d7de; padding: 0 1em; margin-left: 0; }
a { color: #0969da; text-decoration: none; }
summary { cursor: pointer; }
hr { border: 0; border-top: 1px solid #d0d7de; }
"""


def page(markdown: str, who: str = "questbot", what: str = "commented") -> str:
    """A standalone page showing ``markdown`` as one GitHub comment box."""
    return ("<!doctype html><html><head><meta charset='utf-8'><style>" + STYLE
            + "</style></head><body><div class='comment'><header><b>" + html.escape(who)
            + "</b> " + html.escape(what) + "</header><div class='body'>"
            + to_html(markdown) + "</div></div></body></html>")
