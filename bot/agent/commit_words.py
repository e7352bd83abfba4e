"""An agent's words in a commit message, made inert before they reach GitHub.

The patch's commit message is the agent's own text (``AgentReply.message``), and the
reproduction's commit names its test (``ReproductionReply.name``). GitHub reads commit messages:
``Fixes #12`` or ``closes owner/repo#12`` in a commit that reaches the default branch closes
that issue — the questbot inbox included — and ``@team`` links a team from every commit list.
questbot lets its agents write neither: what a change closes and who is asked to look are a
person's decisions, taken on the pull request.

``inert`` keeps the words and breaks each reference with a zero-width space, as
``bot.words.markdown.plain`` does for mentions in comments: ``@`` of a mention, ``#`` (and
``GH-``) of an issue number, ``://`` of a link. The subject line is kept to one line of at most
``SUBJECT_CHARS``; control characters other than a newline are dropped (a terminal reading
``git log`` is no place for escape sequences either).
"""

from __future__ import annotations

import re

SUBJECT_CHARS = 200
ZWSP = "\u200b"
_CONTROL = re.compile(r"[\x00-\x09\x0b-\x1f\x7f]")
_MENTION = re.compile(r"@(?=[A-Za-z0-9])")
_ISSUE = re.compile(r"(#|\bGH-)(?=\d)", re.IGNORECASE)
_LINK = re.compile(r"://")


def inert(text: str) -> str:
    """``text`` with no mention, issue reference or link GitHub would act on."""
    text = _CONTROL.sub("", text)
    text = _MENTION.sub("@" + ZWSP, text)
    text = _ISSUE.sub(lambda m: m.group(1) + ZWSP, text)
    return _LINK.sub(":" + ZWSP + "//", text)


def commit_message(subject: str, body: str = "") -> str:
    """A commit message from an agent's ``subject`` (its first line, cut to
    ``SUBJECT_CHARS``) and ``body``, both made inert."""
    lines = inert(subject).strip().splitlines() or [""]
    first = lines[0].strip()[:SUBJECT_CHARS] or "Change"
    rest = "\n".join(lines[1:]).strip()
    paragraphs = [first, *[p for p in (rest, inert(body).strip()) if p]]
    return "\n\n".join(paragraphs)
