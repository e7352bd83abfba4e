"""What no text questbot shows people on GitHub may hold: an identifier of its own (a state or
event name with an underscore, ``rolled_back``, ``usage_recorded``), a path of the host it
runs on, its jargon ("seal", "signal", "receipt", "digest"), a digest shown as a code chip
(a hex chip that is no commit's), a quest's id in a heading, or a quest named by its id where
a person looks for what it is about (``OLD_FORMS``). Shared by the words' tests
and the end-to-end guard (``tests/e2e/conftest.py``), so what issue 24 took out cannot come
back."""

from __future__ import annotations

import re
import sys
import tempfile
from collections.abc import Iterable
from pathlib import Path

from bot.agent.machine import RunState
from bot.core import EVENT_TYPES, State
from bot.core.effects import EffectType
from bot.core.events import Route
from bot.core.gates import Role
from bot.core.quest import Outcome, ParkReason
from bot.reviews.models import ReviewRole

SPOKEN_ROLES = {ReviewRole.DESIGN.value, ReviewRole.EXPERIMENT.value}
"""The roles a maintainer types (``python -m bot review request … --role design_reviewer``)."""
INTERNAL = sorted({s.value for s in State} | set(EVENT_TYPES) | {r.value for r in Route}
                  | {p.value for p in ParkReason} | {r.value for r in RunState}
                  | {e.value for e in EffectType} | {o.value for o in Outcome}
                  | {r.value for r in Role}
                  | ({r.value for r in ReviewRole} - SPOKEN_ROLES))
INTERNAL_NAMES = re.compile(
    r"(?<![\w-])(" + "|".join(n.replace("_", r"\\?_") for n in INTERNAL if "_" in n)
    + r")(?![\w-])")
"""Each internal name that a person could not read as words (those with an underscore), also
as Markdown escapes it (``needs\\_human``)."""
HOST_PATHS = re.compile(
    r"(?<![\w.~:/-])/(?:tmp|home|root|work|usr|var|opt|srv|mnt|private|proc|etc)/"
    r"|\.venv/|questbot-proof-")
STORE_KEYS = re.compile(r"\bq:\{")
"""A Redis key of questbot's (``q:{id}:outbox``): where it keeps things, not words."""
_HIDDEN = re.compile(r"<!--.*?-->", re.S)


JARGON = re.compile(r"\b(seal(?:s|ed|ing)?|signals?|receipts?|digests?)\b", re.I)
"""questbot's design words, which a maintainer does not use: "the rollback receipt", "the
seal", "the signal". Looked for in questbot's prose, not in code (a log may say "signal 9")."""
_FENCED = re.compile(r"^(`{3,}|~{3,}).*?^\1[ \t]*$", re.S | re.M)
_CODE_SPAN = re.compile(r"(`+)(.+?)\1", re.S)
_LINK = re.compile(r"\[[^\]\n]*\]\([^)\s]*\)")
HEX_CHIP = re.compile(r"^[0-9a-f]{7,64}$")
"""A code span of hex alone: a commit's SHA, or a digest (a seal's, a proof's), which tells a
person nothing. Allowed only as a commit questbot's text can point to (``commits``)."""
QUEST_ID = re.compile(r"\bq[0-9a-f]{10}\b")
"""A quest's id (``bot.quests.desk.new_quest_id``): fine in a command, not in a heading."""
OLD_FORMS = re.compile(
    r"\bquest `[^`\n]+`, revision \d+"  # the /status reply's first line, before issue 24
    r"|`[^`\n]*`, quest `[^`\n]+`:"  # an inbox entry: its title in a chip, then its id
    r"|\bStart questbot quest\b",  # the quest branch's first commit
    re.I)
"""Forms issue 24 took out, which named a quest by questbot's id where a person looks for
what it is about: "Quest `q1f38d17fd2`, revision 1: …" in a ``/status`` reply, "#7 `check
tests failed`, quest `q-7`: …" in the inbox, "Start questbot quest q…" as a commit's subject.
(A quest's id after the word elsewhere — a lesson's source, a parent quest — has no other
name yet, and stays.)"""
_HEADING = re.compile(r"^ {0,3}#{1,6}\s.*$|<summary>.*?</summary>", re.M)


def _prose(text: str) -> str:
    """``text`` without its code (fenced blocks, spans): what questbot says in words."""
    return _CODE_SPAN.sub(" ", _FENCED.sub("", text))


def words_problems(text: str, commits: Iterable[str] = ()) -> list[str]:
    """Jargon in prose, digest-like hex chips outside links (unless a prefix of one of
    ``commits``), and a quest's id in a heading."""
    shown = _HIDDEN.sub("", text)
    found = [f"jargon {m.group(1)!r}: {_prose(shown)[max(m.start() - 40, 0):m.end() + 40]!r}"
             for m in JARGON.finditer(_prose(shown))]
    known = [c.lower() for c in commits]
    unlinked = _LINK.sub(" ", _FENCED.sub("", shown))
    for m in _CODE_SPAN.finditer(unlinked):
        chip = m.group(2).strip()
        if HEX_CHIP.match(chip) and not any(c.startswith(chip) for c in known):
            found.append(f"a digest-like chip `{chip}` (no commit's): "
                         f"{unlinked[max(m.start() - 60, 0):m.end() + 20]!r}")
    found += [f"a quest's id in a heading: {m.group(0)[:120]!r}"
              for m in _HEADING.finditer(shown) if QUEST_ID.search(m.group(0))]
    found += [f"a quest named by its id, as before issue 24: {m.group(0)[:120]!r}"
              for m in OLD_FORMS.finditer(shown)]
    return found


def problems(text: str, commits: Iterable[str] | None = None) -> list[str]:
    """Every internal identifier and host path in ``text`` (hidden markers aside); with
    ``commits`` (the SHAs the text may name), also what ``words_problems`` finds."""
    shown = _HIDDEN.sub("", text)
    found = [f"internal name {m.group(1)!r}" for m in INTERNAL_NAMES.finditer(shown)]
    found += [f"store key at {m.start()}: {shown[m.start():m.end() + 40]!r}"
              for m in STORE_KEYS.finditer(shown)]
    found += [f"host path at {m.start()}: {shown[max(m.start() - 20, 0):m.end() + 40]!r}"
              for m in HOST_PATHS.finditer(shown)]
    for own in (sys.executable, str(Path.home()), tempfile.gettempdir(), str(Path.cwd())):
        if len(own) > 4 and own in shown:
            found.append(f"the host's own path {own!r}")
    if commits is not None:
        found += words_problems(text, commits)
    return found
