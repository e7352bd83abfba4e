"""Slash commands in issue and pull-request comments: ``/approve B``, ``/revise <why>``, …

Theory of operation. A comment is Markdown, and a command counts only where a reader of the
rendered comment would see it typed as a command: at the start of a line of ordinary text. The
scanner walks the body line by line, tracking just enough Markdown block structure to skip
what is not ordinary text:

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

A comment may hold several commands. All are returned in the order they appear, each with its
1-based line number, and a problem on one line does not hide the commands on others — Prow
reads comments the same way. The worker decides what several commands mean together (it steps
the quest with each in turn), so this module stays a parser.

A ``/word`` at the start of a line that is not one of ours is reported as an unknown command only
when it is close to one (``/aprove``, ``/stauts``); other words are left alone, because other
bots' commands (``/lgtm``, ``/retest``, ``/cc``) and paths (``/tmp is full``) share comments with
ours. Prow's ``/approve cancel`` and ``/approve no-issue`` are no command of ours either; and on a
thread that is no quest, the worker answers only what ``ours_without_quest`` keeps — Prow's bare
``/approve`` there is Prow's.

Problem messages are Markdown for a reply: values the person typed are shown in code spans, so
an ``@mention`` in them does not notify anyone.
"""

from __future__ import annotations

import bisect
import difflib
import re
from collections.abc import Iterator
from enum import StrEnum
from typing import Self

from pydantic import BaseModel, ConfigDict, Field, model_validator

from bot.core.policy import Checkpoint


class CommandName(StrEnum):
    APPROVE = "approve"
    REVISE = "revise"
    REJECT = "reject"
    CLAIM = "claim"
    RELEASE = "release"
    PAUSE = "pause"
    RESUME = "resume"
    KILL = "kill"
    STATUS = "status"
    QUEST = "quest"
    DENY = "deny"
    REFLECT = "reflect"
    """A repository's reflection — what went wrong and what changes — after a wave of bad
    endings (``bot.core.limits``); a maintainer's passes at once. No quest command."""


SPEND = "spend"
"""``/approve spend`` and ``/deny spend``: the answer to a spend request (a spent budget)."""


class QuestMode(StrEnum):
    """What ``/quest`` starts on a quest waiting for a person: a fix, or research only."""

    FIX = "fix"
    RESEARCH = "research"


USAGE: dict[CommandName, str] = {
    CommandName.APPROVE: "/approve [A|B|C|spend]",
    CommandName.REVISE: "/revise <why>",
    CommandName.REJECT: "/reject <why>",
    CommandName.CLAIM: "/claim",
    CommandName.RELEASE: "/release",
    CommandName.PAUSE: "/pause <why>",
    CommandName.RESUME: "/resume",
    CommandName.KILL: "/kill <why>",
    CommandName.STATUS: "/status",
    CommandName.QUEST: "/quest fix|research",
    CommandName.DENY: "/deny spend",
    CommandName.REFLECT: "/reflect <what went wrong and what changes>",
}
"""How each command is written; shown in problems and in the status comment's command list."""

NEEDS_REASON = frozenset(
    {CommandName.REVISE, CommandName.REJECT, CommandName.PAUSE, CommandName.KILL,
     CommandName.REFLECT}
)
TAKES_NOTHING = frozenset(
    {CommandName.CLAIM, CommandName.RELEASE, CommandName.RESUME, CommandName.STATUS}
)

PROW_APPROVE_ARGUMENTS = frozenset({"cancel", "no-issue"})
"""``/approve cancel`` and ``/approve no-issue`` are Prow's (its ``approve`` plugin): never a
questbot command, nor a problem to answer, on any thread."""

SHARED = frozenset({CommandName.APPROVE})
"""Commands whose bare word another bot owns too: Prow's ``/approve``. On a thread that is no
quest, ``/approve`` alone is Prow's, and questbot leaves it alone (docs/decisions.md)."""


def ours_without_quest(item: Command | CommandProblem) -> bool:
    """Whether questbot answers ``item`` on a thread that has no quest: a command only questbot
    has (``/quest``, ``/status``, ``/claim``, …, or ``/approve`` with a checkpoint), or a typo
    of one. Prow's ``/approve`` and anything near it are someone else's there."""
    if isinstance(item, CommandProblem):
        return item.suggestion is not None and not any(
            item.suggestion.split(" ", 1)[0] == f"/{name}" for name in SHARED)
    return item.name not in SHARED or item.checkpoint is not None or item.spend


_SUGGEST_CUTOFF = 0.75
"""How close an unknown word must be to a command to be reported; 0.75 catches ``/aprove``
and ``/stauts`` but not Prow's ``/retest`` (0.67 to ``/reject``)."""


class Command(BaseModel):
    """One command as a person wrote it; its shape is checked so that ``render`` round-trips."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: CommandName
    checkpoint: Checkpoint | None = None
    """``/approve B``: the checkpoint the person meant; ``None`` means the current one."""
    reason: str | None = None
    """The rest of the line, which ``/revise``, ``/reject``, ``/pause`` and ``/kill`` require."""
    mode: QuestMode | None = None
    """``/quest fix`` or ``/quest research``."""
    spend: bool = False
    """``/approve spend`` or ``/deny spend``: about the quest's spend request, not a checkpoint."""
    line: int = Field(ge=1)
    """1-based line of the comment body the command is on."""

    @model_validator(mode="after")
    def _shape(self) -> Self:
        if self.checkpoint is not None and self.name is not CommandName.APPROVE:
            raise ValueError(f"only /approve takes a checkpoint, not /{self.name}")
        if self.spend and self.name not in (CommandName.APPROVE, CommandName.DENY):
            raise ValueError(f"only /approve and /deny take spend, not /{self.name}")
        if self.spend and self.checkpoint is not None:
            raise ValueError("/approve takes a checkpoint or spend, not both")
        if self.name is CommandName.DENY and not self.spend:
            raise ValueError("/deny is only /deny spend")
        if (self.mode is not None) != (self.name is CommandName.QUEST):
            raise ValueError("/quest, and only /quest, takes a mode (fix or research)")
        if (self.reason is not None) != (self.name in NEEDS_REASON):
            raise ValueError(
                f"/{self.name} {'needs' if self.name in NEEDS_REASON else 'takes no'} reason"
            )
        if self.reason is not None and (
            not self.reason
            or self.reason != self.reason.strip()
            or "\n" in self.reason
            or "\r" in self.reason
            or "<!--" in self.reason
        ):
            raise ValueError(
                "a reason is one non-empty line without surrounding spaces or an HTML "
                f"comment (got {self.reason!r})"
            )
        return self


class CommandProblem(BaseModel):
    """A line that looks like a command but cannot be read as one; the bot replies with it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    line: int = Field(ge=1)
    message: str
    """Markdown, for a reply: what is wrong and how to write it."""
    suggestion: str | None = None
    """What to type instead: the closest command, or the usage line."""


Parsed = Command | CommandProblem


def parse_commands(body: str) -> list[Parsed]:
    """Every command and command-like problem in a comment body, in order; never raises."""
    found: list[Parsed] = []
    for number, text in _command_lines(body):
        item = _read(number, text)
        if item is not None:
            found.append(item)
    return found


def render(command: Command) -> str:
    """The line that ``parse_commands`` reads back as ``command`` (on line 1)."""
    parts = [f"/{command.name}"]
    if command.spend:
        parts.append(SPEND)
    for value in (command.checkpoint, command.mode, command.reason):
        if value is not None:
            parts.append(str(value))
    return " ".join(parts)


# --- reading one line ---------------------------------------------------------------------------

_COMMAND = re.compile(r"/(?P<word>[A-Za-z][A-Za-z0-9_-]*)(?=\s|$)(?P<rest>.*)", re.DOTALL)


def _read(number: int, text: str) -> Parsed | None:
    match = _COMMAND.match(text.lstrip(" \t"))
    if match is None:
        return None
    word, args = match["word"], match["rest"].strip()
    try:
        name = CommandName(word.lower())
    except ValueError:
        close = difflib.get_close_matches(
            word.lower(), list(CommandName), n=1, cutoff=_SUGGEST_CUTOFF
        )
        if not close:
            return None
        return CommandProblem(
            line=number,
            message=f"unknown command {_code('/' + word)}; did you mean {_code('/' + close[0])}?",
            suggestion=f"/{close[0]}",
        )
    usage = USAGE[name]

    def problem(what: str) -> CommandProblem:
        return CommandProblem(
            line=number, message=f"{what}; usage: {_code(usage)}", suggestion=usage
        )

    if name in NEEDS_REASON:
        if not args:
            return problem(f"{_code('/' + name)} needs a reason")
        return Command(name=name, reason=args, line=number)
    if name is CommandName.APPROVE:
        if args.lower() in PROW_APPROVE_ARGUMENTS:
            return None  # Prow's
        if not args:
            return Command(name=name, line=number)
        if args.upper() in set(Checkpoint):
            return Command(name=name, checkpoint=Checkpoint(args.upper()), line=number)
        if args.lower() == SPEND:
            return Command(name=name, spend=True, line=number)
        return problem(
            f"{_code('/approve')} takes an optional checkpoint A, B or C, or spend, not "
            f"{_code(args)}"
        )
    if name is CommandName.DENY:
        if args.lower() == SPEND:
            return Command(name=name, spend=True, line=number)
        got = f", not {_code(args)}" if args else ""
        return problem(f"{_code('/deny')} needs spend{got}")
    if name is CommandName.QUEST:
        if args.lower() in set(QuestMode):
            return Command(name=name, mode=QuestMode(args.lower()), line=number)
        got = f", not {_code(args)}" if args else ""
        return problem(f"{_code('/quest')} needs fix or research{got}")
    if args:
        return problem(f"{_code('/' + name)} takes no arguments, not {_code(args)}")
    return Command(name=name, line=number)


def _code(text: str, limit: int = 60) -> str:
    """``text`` as a Markdown code span, cut to ``limit`` characters, safe for any backticks."""
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    ticks = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


# --- finding the lines a command may start --------------------------------------------------------

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


def _command_lines(body: str) -> Iterator[tuple[int, str]]:
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
