"""Bookkeeping: what a quest records without moving — signals attached, money asked for and
spent, usage, comments, and effects that could not be delivered."""

from __future__ import annotations

from typing import Any

from bot.core.effects import EffectType as E
from bot.core.errors import Refusal
from bot.core.events import (
    CommentPosted,
    EffectFailed,
    SignalAttached,
    SpendDecided,
    SpendRequested,
    UsageRecorded,
    max_severity,
)
from bot.core.policy import Policy
from bot.core.quest import Quest
from bot.core.rules.asks import Result, refuse
from bot.core.states import State

S = State


def signal_attached(q: Quest, e: SignalAttached, _p: Policy) -> Result:
    changes: dict[str, Any] = {"signals": q.signals + 1, "last_signal": e.source,
                               "severity": max_severity(q.severity, e.severity)}
    if q.state is S.PROVING or (q.state is S.HANDED_OFF and q.claimed_from is S.PROVING):
        changes["c_approval"] = None  # a new signal during proof ends an earlier C approval
    return q.evolve(changes), []


def spend_requested(q: Quest, e: SpendRequested, _p: Policy) -> Result:
    nq = q.evolve({"spend_pending": (*q.spend_pending, e.id)})
    return nq, [(E.REQUEST_SPEND, {"request_id": e.id, "amount_cents": e.amount_cents,
                                   "purpose": e.purpose})]


def spend_decided(q: Quest, e: SpendDecided, _p: Policy) -> Result:
    if e.request_id not in q.spend_pending:
        refuse(q, e, f"no spend request {e.request_id} is pending", Refusal.BAD_EVENT)
    pending = tuple(r for r in q.spend_pending if r != e.request_id)
    if not e.approved:
        return q.evolve({"spend_pending": pending}), []
    nq = q.evolve({"spend_pending": pending, "spend_approved": q.spend_approved + 1})
    return nq, [(E.START_RESPONDENT_RUN, {"request_id": e.request_id})]


def usage_recorded(q: Quest, e: UsageRecorded, _p: Policy) -> Result:
    return q.evolve({"usage_tokens": q.usage_tokens + e.tokens,
                     "usage_cost_cents": q.usage_cost_cents + e.cost_cents}), []


def comment_posted(q: Quest, e: CommentPosted, _p: Policy) -> Result:
    return q.evolve({"comments": q.comments + 1}), []


def effect_failed(q: Quest, e: EffectFailed, _p: Policy) -> Result:
    return q.evolve({"failed_effects": q.failed_effects + 1,
                     "last_failure": f"{e.effect_type}: {e.error}"}), []
