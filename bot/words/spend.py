"""What people read about a quest's spend: the spend request on its pull request, the parked
quest's next step, the check run's buttons, and the budget line of the status comment.

Pure and numeric-in, words-out: the core decides when the budget is spent
(``bot.core.rules.budget``) and hands over cents and tokens; here they become dollars and
counted tokens, said the way a maintainer deciding whether to pay reads them — how much was
spent, the budget, what approving buys and how to approve.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bot.core import Quest
from bot.core.quest import ParkReason
from bot.core.rules.budget import waits_for_spend

ACTIONS: tuple[dict[str, str], ...] = (
    {"label": "Approve spend", "identifier": "approve_spend",
     "description": "Pay for the next stage and as much again"},
    {"label": "Deny spend", "identifier": "deny_spend",
     "description": "Keep the quest parked"},
)
"""The check run's buttons while a spend request waits (GitHub: label ≤ 20, description ≤ 40,
identifier ≤ 20)."""
BUTTONS: Mapping[str, str] = {"approve_spend": "approve", "deny_spend": "deny"}
"""Each button's identifier → the command it stands for (``/approve spend``, ``/deny spend``)."""

STAGE_WORDS: Mapping[str, str] = {
    "research": "research", "reproduce": "reproduction", "plan": "plan", "patch": "patch",
}


def money(cents: int) -> str:
    return f"${cents // 100:,}.{cents % 100:02d}"


def tokens(count: int) -> str:
    return f"{count:,} token{'s' if count != 1 else ''}"


def amount(cents: int | None, count: int | None, joined: str = "and") -> str:
    """``$5.00 and 2,000,000 tokens`` (spent, left) or, ``joined="or"``, a budget, which ends
    at whichever comes first; a unit with no budget (``None``) is left out."""
    parts = [money(cents) if cents is not None else "", tokens(count) if count is not None else ""]
    return f" {joined} ".join(p for p in parts if p) or "no limit"


def _stage(stage: str) -> str:
    return STAGE_WORDS.get(stage, "next")


def _int(value: Any) -> int | None:
    return None if value is None else int(value)


def request_text(payload: Mapping[str, Any]) -> str:
    """The reply ``request_spend`` posts: spent, budget, what approving buys, how to answer."""
    spent = amount(int(payload["spent_cents"]), int(payload["spent_tokens"]))
    budget = amount(_int(payload.get("budget_cents")), _int(payload.get("budget_tokens")), "or")
    buys = amount(_int(payload.get("buys_cents")), _int(payload.get("buys_tokens")), "or")
    stage = _stage(str(payload.get("stage", "")))
    return (f"**This quest's budget is spent.** Its model runs have cost {spent} so far; the "
            f"budget is {budget}, whichever comes first. questbot stopped before the {stage} "
            "stage and parked the quest.\n\n"
            f"Approving pays for the {stage} stage and up to another {buys} before questbot "
            "asks again: comment `/approve spend`, or press **Approve spend** on the "
            "`questbot` check run. `/deny spend` keeps the quest parked (`/resume` asks "
            "again later); `/kill <why>` ends it. The budget is `budget: {usd: …, tokens: …}` "
            "in `.github/questbot.yml`.")


def parked_text(quest: Quest) -> str | None:
    """The next step of a quest parked on its budget, or ``None`` for any other quest."""
    ask = quest.spend_ask
    if waits_for_spend(quest) and ask is not None:
        return (f"The budget is spent — {amount(ask.spent_cents, ask.spent_tokens)} of "
                f"{amount(ask.budget_cents, ask.budget_tokens, 'or')} — before the "
                f"{_stage(ask.stage)} stage: "
                "`/approve spend` (or **Approve spend** on the check run) pays for it and as "
                "much again, `/deny spend` keeps it parked, `/kill <why>` ends it.")
    if quest.park_reason is ParkReason.SPEND_DECLINED:
        return ("A person declined more spend after the budget ran out, so the quest stays "
                "parked: `/resume` asks for the spend again, or `/kill <why>` ends it.")
    return None


def stage_costs(quest: Quest) -> str:
    """Each agent stage's spend, for the status comment's cost line: ``research 11,505 tokens
    ($0.01), reproduction 8,108 tokens ($0.01)``; empty before any receipt named a stage."""
    return ", ".join(f"{STAGE_WORDS.get(s.stage, s.stage)} {tokens(s.tokens)} "
                     f"({_charge(s.cost_cents, s.tokens, s.free_tokens)})"
                     for s in quest.usage_by_stage)


def _charge(cents: int, count: int, free: int) -> str:
    """Dollars, or "no charge" for tokens all priced at zero (a local model)."""
    return "no charge" if not cents and count and free >= count else money(cents)


def budget_line(quest: Quest, budget_cents: int | None, budget_tokens: int | None) -> str:
    """The status comment's budget, for its cost line: the allowance (the budget times one
    plus the approvals) and what is left of it; the policy's budget is the argument."""
    times = 1 + quest.spend_approved
    cap_cents = None if budget_cents is None else budget_cents * times
    cap_tokens = None if budget_tokens is None else budget_tokens * times
    if cap_cents is None and cap_tokens is None:
        return "no budget"
    left_cents = None if cap_cents is None else max(0, cap_cents - quest.usage_cost_cents)
    left_tokens = None if cap_tokens is None else max(0, cap_tokens - quest.usage_tokens)
    n = quest.spend_approved
    approved = f" (with {n} approval{'s' if n != 1 else ''})" if n else ""
    return (f"budget {amount(cap_cents, cap_tokens, 'or')}{approved}: "
            f"{amount(left_cents, left_tokens)} left")
