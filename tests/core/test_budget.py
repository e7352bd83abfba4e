"""Budgets (``bot.core.rules.budget``): a stage starts only within the allowance, a spent budget
parks the quest with a spend request, and a person's answer pays for the stage or keeps it
parked. The property: without an approval, spend never passes the budget by more than one
stage's spend; with approvals, every stage that starts is either within the allowance or the
one run an approval paid for."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.core import InvalidTransition, Policy, State, step
from bot.core.quest import ParkReason
from bot.core.rules.budget import allowance
from bot.journal.records import dump_policy, load_policy
from questbot_testing.journals import JournalBuilder

S = State
POLICY = Policy(budget_cents=100, budget_tokens=10_000)


def _researching(policy: Policy = POLICY) -> JournalBuilder:
    return JournalBuilder(policy=policy).sense()


def _spend(b: JournalBuilder, cents: int, tokens: int = 0) -> None:
    b.add("usage_recorded", cost_cents=cents, tokens=tokens)


def _types(b: JournalBuilder, since: int) -> list[str]:
    return [e.type.value for e in b.effects[since:]]


def test_within_budget_the_next_stage_starts() -> None:
    b = _researching()
    _spend(b, 99, 9_999)
    b.add("hypothesis_written", summary="off by one")
    n = len(b.effects)
    b.decide("A")
    assert b.quest is not None and b.quest.state is S.REPRODUCING
    assert _types(b, n) == ["start_agent"]


@pytest.mark.parametrize(("cents", "tokens"), [(100, 0), (0, 10_000), (250, 20_000)])
def test_a_spent_budget_parks_with_a_spend_request(cents: int, tokens: int) -> None:
    b = _researching()
    _spend(b, cents, tokens)
    b.add("hypothesis_written", summary="off by one")
    n = len(b.effects)
    decision = b.decide("A")
    q = b.quest
    assert q is not None and q.state is S.PARKED
    assert q.park_reason is ParkReason.BUDGET_REACHED and q.resume_state is S.REPRODUCING
    assert _types(b, n) == ["request_spend"]
    request = b.effects[-1].payload
    assert request["request_id"] == f"{decision.id}/spend" == q.spend_pending[-1]
    assert (request["spent_cents"], request["spent_tokens"]) == (cents, tokens)
    assert (request["budget_cents"], request["budget_tokens"]) == (100, 10_000)
    assert request["stage"] == "reproduce"
    assert q.spend_ask is not None and q.spend_ask.start == {"stage": "reproduce"}


def _parked_on_budget() -> JournalBuilder:
    b = _researching()
    _spend(b, 150)
    b.add("hypothesis_written", summary="off by one")
    b.decide("A")
    return b


def test_approval_runs_the_held_stage_and_doubles_the_allowance() -> None:
    b = _parked_on_budget()
    q = b.quest
    assert q is not None and q.spend_ask is not None
    n, request_id = len(b.effects), q.spend_ask.request_id
    b.add("spend_decided", request_id=request_id, approved=True, actor="maintainer")
    q = b.quest
    assert q is not None and q.state is S.REPRODUCING and q.park_reason is None
    assert q.spend_ask is None and q.spend_pending == () and q.spend_approved == 1
    assert _types(b, n) == ["start_respondent_run"]
    assert b.effects[-1].payload == {"stage": "reproduce", "request_id": request_id}
    assert allowance(q, POLICY) == (200, 20_000)
    # the approved run's result moves the quest on as the stage's result always does
    b.add("reproduced", check="test_pager")
    b.add("plan_written", summary="fix the bound")
    assert b.quest is not None and b.quest.state is S.PLANNED


def test_declined_stays_parked_and_resume_asks_again() -> None:
    b = _parked_on_budget()
    q = b.quest
    assert q is not None and q.spend_ask is not None
    n = len(b.effects)
    b.add("spend_decided", request_id=q.spend_ask.request_id, approved=False,
          actor="maintainer")
    q = b.quest
    assert q is not None and q.state is S.PARKED
    assert q.park_reason is ParkReason.SPEND_DECLINED and q.spend_pending == ()
    assert _types(b, n) == []
    b.add("resumed", actor="maintainer")
    q = b.quest
    assert q is not None and q.state is S.PARKED and q.park_reason is ParkReason.BUDGET_REACHED
    assert _types(b, n) == ["request_spend"]


def test_resume_does_not_skip_an_open_spend_request() -> None:
    b = _parked_on_budget()
    with pytest.raises(InvalidTransition, match="/approve spend"):
        b.add("resumed", actor="maintainer")


def test_a_decision_on_nothing_pending_is_refused() -> None:
    b = _researching()
    q = b.quest
    assert q is not None
    with pytest.raises(InvalidTransition, match="no spend is waiting"):
        step(q, b.event("spend_decided", request_id="x", approved=True), POLICY)


def test_late_receipts_still_count_after_the_quest_ended() -> None:
    b = _parked_on_budget()
    b.add("killed", actor="maintainer", reason="too dear")
    _spend(b, 7, 70)
    q = b.quest
    assert q is not None and q.state is S.ABANDONED and q.usage_cost_cents == 157


def test_a_policy_recorded_before_budgets_replays_without_one() -> None:
    envelope = json.loads(dump_policy(Policy(max_attempts=2)))
    for field_name in ("budget_cents", "budget_tokens"):  # as a journal wrote it before
        del envelope["data"][field_name]
    recorded = load_policy(json.dumps(envelope))
    assert recorded.budget_cents is None and recorded.budget_tokens is None
    b = _researching(recorded)
    _spend(b, 10**9, 10**12)
    b.add("hypothesis_written", summary="off by one")
    b.decide("A")
    assert b.quest is not None and b.quest.state is S.REPRODUCING  # as it was decided


def test_a_budget_in_one_unit_only() -> None:
    b = _researching(Policy(budget_tokens=100))
    _spend(b, 10**6, 99)
    b.add("hypothesis_written", summary="off by one")
    b.decide("A")
    assert b.quest is not None and b.quest.state is S.REPRODUCING  # no dollar budget
    _spend(b, 0, 1)
    b.add("reproduced", check="test_pager")
    b.add("plan_written", summary="fix the bound")
    b.decide("B")
    q = b.quest
    assert q is not None and q.state is S.PARKED and q.spend_ask is not None
    assert (q.spend_ask.budget_cents, q.spend_ask.budget_tokens) == (None, 100)


# --- the property ---------------------------------------------------------------------------


@dataclass
class Run:
    """What a simulated worker saw: each stage start with the spend and allowance then."""

    starts: list[tuple[str, int, int, int, int]] = field(default_factory=list)
    """(kind, spent cents, spent tokens, allowance cents, allowance tokens) at each start."""
    approvals: int = 0
    respondent_runs: int = 0
    stage_cents: list[int] = field(default_factory=list)
    stage_tokens: list[int] = field(default_factory=list)


def _result(b: JournalBuilder, stage: str, verdict: str) -> None:
    """The stage's result, then a person's decision at the checkpoint it opens."""
    if stage == "research":
        b.add("hypothesis_written", summary="h")
        b.decide("A", verdict)
    elif stage == "reproduce":
        b.add("reproduced", check="test_x")
        b.add("plan_written", summary="p")
        b.decide("B", verdict)
    elif stage == "plan":
        b.add("plan_written", summary="p")
        b.decide("B", verdict)
    else:
        q = b.quest
        assert q is not None
        b.add("patch_pushed", head=f"head-{len(b.events)}", pusher="questbot[bot]")
        b.add("proof_failed", head=f"head-{len(b.events) - 1}", reason="tests fail")


def _drive(policy: Policy, spends: list[tuple[int, int]], answers: list[bool],
           verdicts: list[str]) -> Run:
    b = _researching(policy)
    run, seen = Run(), 0
    for _ in range(40):
        q = b.quest
        assert q is not None
        new, seen = b.effects[seen:], len(b.effects)
        starts = [e for e in new if e.type.value in ("start_agent", "start_respondent_run")]
        requests = [e for e in new if e.type.value == "request_spend"]
        if starts:
            cents, tokens = allowance(q, policy)
            kind = starts[-1].type.value
            run.starts.append((kind, q.usage_cost_cents, q.usage_tokens, cents, tokens))
            spent_cents, spent_tokens = spends[len(run.starts) % len(spends)]
            run.stage_cents.append(spent_cents)
            run.stage_tokens.append(spent_tokens)
            _spend(b, spent_cents, spent_tokens)
            _result(b, str(starts[-1].payload["stage"]),
                    verdicts[len(run.starts) % len(verdicts)])
        elif requests:
            assert q.state is S.PARKED and q.park_reason is ParkReason.BUDGET_REACHED
            approved = answers[len(run.starts) % len(answers)]
            b.add("spend_decided", request_id=requests[-1].payload["request_id"],
                  approved=approved, actor="maintainer")
            if approved:
                run.approvals += 1
            else:
                break
        else:
            break
    run.respondent_runs = sum(e.type.value == "start_respondent_run" for e in b.effects)
    return run


@settings(max_examples=150, deadline=None)
@given(budget_cents=st.integers(1, 60), budget_tokens=st.integers(1, 600),
       spends=st.lists(st.tuples(st.integers(0, 40), st.integers(0, 400)), min_size=1,
                       max_size=6),
       answers=st.lists(st.booleans(), min_size=1, max_size=4),
       verdicts=st.lists(st.sampled_from(["approve", "revise"]), min_size=1, max_size=4))
def test_spend_never_passes_the_budget_by_more_than_one_stage_without_approval(
        budget_cents: int, budget_tokens: int, spends: list[tuple[int, int]],
        answers: list[bool], verdicts: list[str]) -> None:
    policy = Policy(budget_cents=budget_cents, budget_tokens=budget_tokens, max_attempts=2)
    run = _drive(policy, spends, answers, verdicts)
    for kind, cents, tokens, cap_cents, cap_tokens in run.starts:
        if kind == "start_agent":  # no approval paid for it: it starts within the allowance
            assert cents < cap_cents and tokens < cap_tokens
    assert run.respondent_runs == run.approvals  # each one an approval paid for
    if run.approvals == 0:
        total_cents, total_tokens = sum(run.stage_cents), sum(run.stage_tokens)
        assert total_cents <= budget_cents + max(run.stage_cents, default=0)
        assert total_tokens <= budget_tokens + max(run.stage_tokens, default=0)
