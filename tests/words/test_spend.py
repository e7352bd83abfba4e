"""What people read about spend: the request on the pull request, the parked quest's next step
and its check run's buttons, the commands offered, and the status comment's budget line."""

from __future__ import annotations

import re

import pytest

from bot.core import Policy, State
from bot.core.quest import Quest
from bot.words import check_run as checks
from bot.words import render
from bot.words import spend as spend_words
from bot.words.may_do import allowed_commands
from questbot_testing.journals import JournalBuilder

POLICY = Policy(budget_cents=250, budget_tokens=40_000)
SNAKE = re.compile(r"\b[a-z]+_[a-z_]+\b")
"""An internal name (``budget_reached``, ``request_spend``) where words belong."""


def _parked() -> JournalBuilder:
    b = JournalBuilder(policy=POLICY).sense()
    b.add("usage_recorded", cost_cents=312, tokens=41_234)
    b.add("hypothesis_written", summary="off by one")
    b.decide("A")
    return b


def _quest(b: JournalBuilder) -> Quest:
    assert b.quest is not None
    return b.quest


@pytest.mark.parametrize(("cents", "said"), [(0, "$0.00"), (5, "$0.05"), (312, "$3.12"),
                                             (123456, "$1,234.56")])
def test_money(cents: int, said: str) -> None:
    assert spend_words.money(cents) == said


def test_the_request_says_spent_budget_what_approving_buys_and_how() -> None:
    b = _parked()
    [request] = [e for e in b.effects if e.type.value == "request_spend"]
    text = spend_words.request_text(request.payload)
    for said in ("$3.12 and 41,234 tokens so far",
                 "the budget is $2.50 or 40,000 tokens, whichever comes first",
                 "before the reproduction stage", "another $2.50 or 40,000 tokens",
                 "`/approve spend`", "**Approve spend**", "`/deny spend`", "`/kill <why>`",
                 "`.github/questbot.yml`"):
        assert said in text, said
    assert not SNAKE.search(text.replace("`.github/questbot.yml`", ""))


def test_the_parked_quest_says_what_to_do_and_offers_the_answer() -> None:
    b = _parked()
    q = _quest(b)
    said = render.next_action(q)
    assert said.startswith("The budget is spent — $3.12 and 41,234 tokens of $2.50 or "
                           "40,000 tokens — before the reproduction stage")
    assert "/approve spend" in said and "/deny spend" in said
    usages = [a.usage for a in allowed_commands(q)]
    assert "/approve spend" in usages and "/deny spend" in usages
    assert "/resume" not in usages  # it would not skip the question
    run = checks.check_run(q)
    assert run.conclusion is checks.CheckConclusion.ACTION_REQUIRED
    assert [a["identifier"] for a in run.actions] == ["approve_spend", "deny_spend"]
    assert all(len(a["label"]) <= 20 and len(a["description"]) <= 40
               and len(a["identifier"]) <= 20 for a in run.actions)
    assert set(spend_words.BUTTONS) == {a["identifier"] for a in run.actions}


def test_declined_says_so_and_offers_resume() -> None:
    b = _parked()
    q = _quest(b)
    assert q.spend_ask is not None
    b.add("spend_decided", request_id=q.spend_ask.request_id, approved=False, actor="maya")
    q = _quest(b)
    said = render.next_action(q)
    assert "declined more spend" in said and "/resume" in said
    usages = [a.usage for a in allowed_commands(q)]
    assert "/resume" in usages and "/approve spend" not in usages
    assert "/deny spend" not in usages
    run = checks.check_run(q)
    assert run.conclusion is checks.CheckConclusion.NEUTRAL and run.actions == ()


def test_spend_is_not_offered_without_a_request() -> None:
    b = JournalBuilder(policy=POLICY).sense()
    b.add("hypothesis_written", summary="h")
    usages = [a.usage for a in allowed_commands(_quest(b))]
    assert "/approve A" in usages
    assert not any("spend" in u for u in usages)


def test_the_budget_line_says_what_is_left_of_the_allowance() -> None:
    b = JournalBuilder(policy=POLICY).sense()
    b.add("usage_recorded", cost_cents=100, tokens=10_000)
    assert (spend_words.budget_line(_quest(b), 250, 40_000)
            == "budget $2.50 or 40,000 tokens: $1.50 and 30,000 tokens left")
    b = _parked()
    q = _quest(b)
    assert q.spend_ask is not None
    b.add("spend_decided", request_id=q.spend_ask.request_id, approved=True, actor="maya")
    assert (spend_words.budget_line(_quest(b), 250, 40_000)
            == "budget $5.00 or 80,000 tokens (with 1 approval): $1.88 and 38,766 tokens left")
    assert _quest(b).state is State.REPRODUCING


def test_the_cost_per_stage_sums_each_stage_s_receipts() -> None:
    b = JournalBuilder(policy=Policy()).sense()
    assert spend_words.stage_costs(_quest(b)) == ""
    b.add("usage_recorded", cost_cents=3, tokens=1_000, stage="research")
    b.add("usage_recorded", cost_cents=1, tokens=1)  # a receipt naming no stage
    b.add("usage_recorded", cost_cents=2, tokens=500, stage="patch")
    b.add("usage_recorded", cost_cents=4, tokens=2_000, stage="research")
    q = _quest(b)
    assert spend_words.stage_costs(q) == "research 3,000 tokens ($0.07), patch 500 tokens ($0.02)"
    assert (q.usage_tokens, q.usage_cost_cents) == (3_501, 10)


def test_a_stage_of_a_local_model_costs_no_charge() -> None:
    b = JournalBuilder(policy=Policy()).sense()
    b.add("usage_recorded", tokens=1_000, stage="research", free=True)
    b.add("usage_recorded", tokens=300, stage="patch")
    q = _quest(b)
    assert spend_words.stage_costs(q) == ("research 1,000 tokens (no charge), "
                                          "patch 300 tokens ($0.00)")
    assert (q.usage_tokens, q.usage_free_tokens) == (1_300, 1_000)


def test_a_unit_with_no_budget_is_left_out() -> None:
    assert spend_words.amount(None, 5) == "5 tokens"
    assert spend_words.amount(250, None) == "$2.50"
    b = JournalBuilder(policy=Policy()).sense()
    b.add("usage_recorded", cost_cents=100, tokens=10)
    assert spend_words.budget_line(_quest(b), None, 1_000) == "budget 1,000 tokens: 990 tokens left"
    assert spend_words.budget_line(_quest(b), None, None) == "no budget"
