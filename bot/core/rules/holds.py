"""A quest held before any work (``bot.core.limits``): the one cell, ``sensed`` + ``held``."""

from __future__ import annotations

from bot.core.effects import EffectType as E
from bot.core.events.signals import Held
from bot.core.limits import HOLD_WORDS
from bot.core.policy import Policy
from bot.core.quest import Quest
from bot.core.rules.asks import Result


def held(q: Quest, e: Held, _p: Policy) -> Result:
    """Record the hold and tell the inbox, once per reason: a second hold for the same one
    (triage asked again while still full) changes nothing."""
    if q.held is e.reason:
        return q, []
    return q.evolve({"held": e.reason}), [(E.NOTIFY_INBOX, {"reason": HOLD_WORDS[e.reason]})]
