"""Putting untrusted text into GitHub Markdown without letting it speak for us.

Hypotheses, claims, quotes, plans, reasons and check names come from models, reviewers and
repository files. Rendered raw, such text could open a heading, ping a team with ``@org/team``,
inject HTML or links, or simply print "✅ verified" inside a report about a failed run. So
every piece of untrusted text goes through one of three functions here:

* ``inline_code`` — one line, in a code span whose backtick fence is longer than any run of
  backticks inside (CommonMark's rule), so nothing in it renders or notifies;
* ``code_block`` — many lines, in a fenced block chosen the same way;
* ``plain`` — prose-position text with Markdown punctuation backslash-escaped and ``@``
  mentions broken by a zero-width space.

All three strip escape sequences, control and bidirectional-override characters
(``bot.control_chars``, which the command line and the logs use too), cap the length (saying
how much was cut), and replace success marks (``✅``, ``✔`` …) with ``(check mark)``: the only
success mark a report may show is the one the renderer itself prints for a verified result.
"""

from __future__ import annotations

import html
import re

from bot.control_chars import without_controls

SUCCESS_MARKS: tuple[str, ...] = ("✅", "✔️", "✔", "☑️", "☑", "✓", "🟢", "🎉", "👍")
_BACKTICKS = re.compile(r"`+")
_MARKDOWN_PUNCT = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~=:])")


def neutralise(text: str) -> str:
    """``text`` without escape sequences or control characters (newline and tab kept) and
    with every success mark spelled out."""
    text = without_controls(text)
    for mark in SUCCESS_MARKS:
        text = text.replace(mark, "(check mark)")
    return text


def _cap(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return text[:limit] + f" … ({len(text) - limit} more characters)"


def _fence(text: str, minimum: int) -> str:
    longest = max((len(run) for run in _BACKTICKS.findall(text)), default=0)
    return "`" * max(minimum, longest + 1)


def inline_code(text: str, limit: int = 200) -> str:
    """``text`` as one inert code span (whitespace collapsed, capped at ``limit`` characters)."""
    flat = _cap(" ".join(neutralise(text).split()), limit)
    if not flat:
        return "*(empty)*"
    fence = _fence(flat, 1)
    pad = " " if flat.startswith("`") or flat.endswith("`") else ""
    return f"{fence}{pad}{flat}{pad}{fence}"


def code_block(text: str, limit: int = 4000) -> str:
    """``text`` as an inert fenced block (capped at ``limit`` characters)."""
    body = _cap(neutralise(text).rstrip("\n"), limit)
    fence = _fence(body, 3)
    return f"{fence}text\n{body}\n{fence}"


def plain(text: str, limit: int = 300) -> str:
    """``text`` as escaped prose on one line: no formatting, links, HTML or mentions."""
    flat = _cap(" ".join(neutralise(text).split()), limit)
    return _MARKDOWN_PUNCT.sub(r"\\\1", flat).replace("@", "@\u200b")


def quote(text: str, limit: int = 300) -> str:
    """``text`` as a Markdown block quote a person reads (and GitHub wraps), escaped like
    ``plain``: what someone said — a hypothesis, a claim — not code to copy."""
    return f"> {plain(text, limit)}"


def html_text(text: str, limit: int = 120) -> str:
    """``text`` for a raw HTML line (a ``<summary>``), where Markdown's backslash escapes show
    as backslashes: HTML-escaped instead, on one line, with mentions broken."""
    flat = _cap(" ".join(neutralise(text).split()), limit)
    return html.escape(flat).replace("@", "@\u200b")


# --- host paths ----------------------------------------------------------------------------

_HOST_PATH = re.compile(r"(?<![\w.~:/\\-])(?:(?:/[\w.@+~-]+){2,}/?"
                        r"|/(?:tmp|home|root|work|usr|var|opt|srv|mnt|private|proc|etc)/)")
"""An absolute path of two components or more (``/tmp/x``, ``/home/w/.venv/bin/python``), or
a system directory alone (``/home/``, where an output's tail was cut), not inside a URL
(``https://github.com/o/r``: its slashes follow a colon, a slash or a letter)."""
_WORKTREE = re.compile(r"^questbot-proof-[\w-]*$")


def _shown_path(match: re.Match[str]) -> str:
    parts = [p for p in match.group(0).split("/") if p]
    if len(parts) < 2:
        return "…/"
    for index, part in enumerate(parts[:-1]):
        # the proof's worktrees and homes (head, base, head-repro, home-base, …):
        # /tmp/questbot-proof-x/head/pager.py is pager.py at the head
        if _WORKTREE.match(part):
            rest = parts[index + 2:]
            return "/".join(rest) if rest else parts[index + 1]
    if len(parts) >= 2 and parts[-2] == "bin":
        return parts[-1]  # an executable: python, not /…/.venv/bin/python
    return f"…/{parts[-1]}"


def hide_paths(text: str) -> str:
    """``text`` with the worker's own paths replaced by what a person needs of them: a file of
    the proof's worktree relative to the repository, an executable by its name, anything else
    by its last part. Where questbot's worker keeps its files (its home, its virtualenv, its
    temporary directories) is no business of a reader's, and tells an attacker the layout."""
    return _HOST_PATH.sub(_shown_path, text)


def display_argv(argv: tuple[str, ...] | list[str]) -> str:
    """A command as one line for people: its words joined, the worker's paths hidden."""
    return hide_paths(" ".join(argv))
