"""Slash commands in issue and pull-request comments: ``/approve B``, ``/revise <why>``, …

Theory of operation. A comment is Markdown, and a command counts only where a reader of the
rendered comment would see it typed as a command: at the start of a line of ordinary text.
``bot.words.command_lines`` finds those lines (skipping code, block quotes and HTML comments);
this module reads each one.

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

import difflib
import re
from enum import StrEnum
from typing import Self

from pydantic import BaseModel, ConfigDict, Field, model_validator

from bot.core.policy import Checkpoint
from bot.words.command_lines import command_lines


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
    HELP = "help"
    """The commands that work here and now, for this quest and this person (``bot.words.help``);
    it only reads, like ``/status``. No quest command."""


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
    CommandName.HELP: "/help",
}
"""How each command is written; shown in problems and in the status comment's command list."""

NEEDS_REASON = frozenset(
    {CommandName.REVISE, CommandName.REJECT, CommandName.PAUSE, CommandName.KILL,
     CommandName.REFLECT}
)
TAKES_NOTHING = frozenset(
    {CommandName.CLAIM, CommandName.RELEASE, CommandName.RESUME, CommandName.STATUS,
     CommandName.HELP}
)

PROW_APPROVE_ARGUMENTS = frozenset({"cancel", "no-issue"})
"""``/approve cancel`` and ``/approve no-issue`` are Prow's (its ``approve`` plugin): never a
questbot command, nor a problem to answer, on any thread."""

SHARED = frozenset({CommandName.APPROVE, CommandName.HELP})
"""Commands whose bare word another bot owns too: Prow's ``/approve``, and Prow's ``/help``
(its ``help`` plugin labels an issue "help wanted"). On a thread that is no quest, they are
Prow's, and questbot leaves them alone (docs/decisions.md)."""


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
    for number, text in command_lines(body):
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
