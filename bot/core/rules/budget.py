"""Budgets: a quest's model spend, and the person who pays for more (the lifecycle's
``request_spend`` and ``start_respondent_run``).

Every model call's tokens and cost reach the quest as ``usage_recorded`` receipts
(``Quest.usage_tokens``, ``Quest.usage_cost_cents``). The policy gives each quest a budget in
both (``Policy.budget_cents``, ``Policy.budget_tokens``); each approved spend pays for as much
again, so the allowance is the budget times one plus the approvals (``allowance``).

The rule is checked where money is committed: when an agent stage is about to start. A move
that asks for ``start_agent`` while the spend has reached the allowance in either unit parks
the quest instead (``budget_reached``), with the start it held back (``Quest.spend_ask``) and
a ``request_spend`` for a person — ``hold``, which ``lifecycle.step`` applies to every move.
A stage that has started runs to its end, so without an approval the spend never passes the
budget by more than one stage's spend (tests/core/test_budget.py holds that as a property).

The person's answer is a ``spend_decided``: approved, the quest returns to the stage and
``start_respondent_run`` runs it with the start that was held back; declined, it stays parked
(``spend_declined``) — ``/resume`` asks again, ``/kill`` ends it. ``/resume`` does not skip
the question while it is open (``may_resume``).
"""

from __future__ import annotations

from typing import Any

from bot.core.effects import EffectType as E
from bot.core.events.bookkeeping import SpendDecided
from bot.core.policy import Policy
from bot.core.quest import ParkReason, Quest, SpendAsk
from bot.core.rules.asks import Asks, Result, park
from bot.core.states import State

S = State


def allowance(q: Quest, p: Policy) -> tuple[int | None, int | None]:
    """Cents and tokens the quest may spend before the next stage needs an approval
    (``None``: no budget in that unit)."""
    times = 1 + q.spend_approved
    cents, tokens = p.budget_cents, p.budget_tokens
    return (None if cents is None else cents * times), (None if tokens is None else tokens * times)


def reached(q: Quest, p: Policy) -> bool:
    cents, tokens = allowance(q, p)
    return ((cents is not None and q.usage_cost_cents >= cents)
            or (tokens is not None and q.usage_tokens >= tokens))


def hold(nq: Quest, asks: Asks, event_id: str, p: Policy, index: int | None = None) -> Result:
    """``nq`` and ``asks`` as a handler gave them, or — when they start an agent stage and the
    allowance is spent — the quest parked with a spend request in the start's place. The
    request's id is the event's with ``/spend`` (ids are never minted in the core).
    ``index``: where the first ``start_agent`` is in ``asks``, when the caller found it."""
    if index is None:
        index = next((i for i, (kind, _) in enumerate(asks) if kind is E.START_AGENT), None)
    if index is None or not reached(nq, p):
        return nq, asks
    start = asks[index][1]
    request_id = f"{event_id}/spend"
    cents, tokens = allowance(nq, p)
    stage = str(start.get("stage", ""))
    ask = SpendAsk(request_id=request_id, stage=stage, start=dict(start),
                   spent_cents=nq.usage_cost_cents, spent_tokens=nq.usage_tokens,
                   budget_cents=cents, budget_tokens=tokens)
    parked = park(nq, ParkReason.BUDGET_REACHED, nq.state, spend_ask=ask,
                  spend_pending=(*nq.spend_pending, request_id))
    request: dict[str, Any] = {
        "request_id": request_id, "amount_cents": p.budget_cents, "purpose": stage,
        "stage": stage, "spent_cents": nq.usage_cost_cents, "spent_tokens": nq.usage_tokens,
        "budget_cents": cents, "budget_tokens": tokens,
        "buys_cents": p.budget_cents, "buys_tokens": p.budget_tokens,
    }
    return parked, [*asks[:index], (E.REQUEST_SPEND, request), *asks[index + 1:]]


def waits_for_spend(q: Quest) -> bool:
    """Parked on an open spend request: only ``/approve spend`` or ``/deny spend`` moves it."""
    return (q.state is S.PARKED and q.park_reason is ParkReason.BUDGET_REACHED
            and q.spend_ask is not None)


def decided(q: Quest, e: SpendDecided, pending: tuple[str, ...]) -> Result:
    """A person's answer to the spend request the quest is parked on (``hold``)."""
    ask = q.spend_ask
    assert ask is not None and ask.request_id == e.request_id  # the caller checks
    if not e.approved:
        if not waits_for_spend(q):
            return q.evolve({"spend_pending": pending, "spend_ask": None}), []
        return q.evolve({"spend_pending": pending, "spend_ask": None,
                         "park_reason": ParkReason.SPEND_DECLINED}), []
    changes: dict[str, Any] = {"spend_pending": pending, "spend_ask": None,
                               "spend_approved": q.spend_approved + 1}
    if not waits_for_spend(q) or q.resume_state is None:
        return q.evolve(changes), []
    nq = q.evolve({**changes, "state": q.resume_state, "park_reason": None,
                   "resume_state": None, "park_note": None})
    return nq, [(E.START_RESPONDENT_RUN, {**ask.start, "request_id": e.request_id})]
