"""What no text questbot shows people on GitHub may hold: an identifier of its own (a state or
event name with an underscore, ``rolled_back``, ``usage_recorded``) or a path of the host it
runs on. Shared by the status comment's tests and the end-to-end guard."""

from __future__ import annotations

import re
import sys
import tempfile
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


def problems(text: str) -> list[str]:
    """Every internal identifier and host path in ``text`` (hidden markers aside)."""
    shown = _HIDDEN.sub("", text)
    found = [f"internal name {m.group(1)!r}" for m in INTERNAL_NAMES.finditer(shown)]
    found += [f"store key at {m.start()}: {shown[m.start():m.end() + 40]!r}"
              for m in STORE_KEYS.finditer(shown)]
    found += [f"host path at {m.start()}: {shown[max(m.start() - 20, 0):m.end() + 40]!r}"
              for m in HOST_PATHS.finditer(shown)]
    for own in (sys.executable, str(Path.home()), tempfile.gettempdir(), str(Path.cwd())):
        if len(own) > 4 and own in shown:
            found.append(f"the host's own path {own!r}")
    return found
