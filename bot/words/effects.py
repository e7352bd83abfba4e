"""An effect as a person reads it in ``replay``: a short phrase, not its idempotency key.

The key (``quest:revision:type:event:occurrence``, ``bot.core.effects``) is what makes a write
happen once; a person reading what a journal decided wants what was asked for and when: "revision
1: run the agent's stage (research)". The key stays in ``--json`` for scripts.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bot.control_chars import one_line
from bot.words.failed_effects import what

_DETAIL = ("stage", "checkpoint", "check")
"""The payload's one field that tells two effects of a type apart, in this order."""


def effect_phrase(effect_type: str, revision: int, payload: Mapping[str, Any],
                  occurrence: int = 0) -> str:
    """"revision 1: ask for the checkpoint's review on GitHub (checkpoint A)": what was asked
    for, at which revision, with the one detail that sets it apart and "again" for the second
    of a kind in one step. The detail is payload text: made inert and cut short."""
    text = f"revision {revision}: {what(effect_type)}"
    for name in _DETAIL:
        value = payload.get(name)
        if isinstance(value, str) and value:
            shown = one_line(value)
            shown = shown if len(shown) <= 60 else shown[:59] + "…"
            text += f" (checkpoint {shown})" if name == "checkpoint" else f" ({shown})"
            break
    if occurrence:
        text += f", again (the {_nth(occurrence + 1)} of that step)"
    return text


def _nth(n: int) -> str:
    return {2: "second", 3: "third"}.get(n, f"{n}th")
