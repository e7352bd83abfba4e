"""The seed's branches, routes, checkpoints, claims and proof binding, one behaviour a test."""

from __future__ import annotations

from datetime import datetime

import pytest

from bot.core import (
    CheckpointMode,
    InvalidTransition,
    Outcome,
    ParkReason,
    Policy,
    Refusal,
    Risk,
    State,
    fold,
    step,
)
from questbot_testing.journals import JournalBuilder, main_line
from tests.core.quests import builder_in

S = State


def types(b: JournalBuilder, last: int = 1) -> list[str]:
    """Effect types asked for by the last ``last`` events."""
    ids = {e.id for e in b.events[-last:]}
    return [e.type.value for e in b.effects if e.event_id in ids]


def refused(b: JournalBuilder, type_: str, **fields: object) -> InvalidTransition:
    before = b.quest
    with pytest.raises(InvalidTransition) as info:
        b.add(type_, **fields)
    assert b.quest == before
    return info.value


# the main line and its branches


def test_main_line_reaches_closed_through_every_main_state() -> None:
    b = main_line()
    result = fold(b.events, b.policy)
    assert result.quest == b.quest and result.invalid is None
    assert b.quest is not None and b.quest.state is S.CLOSED and b.quest.outcome is Outcome.CLOSED


def test_proof_failed_with_attempts_left_returns_to_patching_with_the_failure() -> None:
    b = builder_in(S.PROVING)
    b.add("proof_failed", head="head1", reason="test_pager fails")
    assert b.quest.state is S.PATCHING
    start = b.effects[-1]
    assert start.type == "start_agent" and start.payload["repair"] == "test_pager fails"


def test_attempts_exhausted_parks_and_notifies() -> None:
    b = builder_in(S.PATCHING, Policy(max_attempts=2))
    for n in (1, 2):
        b.add("patch_pushed", head=f"h{n}", pusher="questbot[bot]")
        b.add("proof_failed", head=f"h{n}", reason="still red")
    q = b.quest
    assert q.state is S.PARKED and q.park_reason is ParkReason.ATTEMPTS_EXHAUSTED
    assert types(b) == ["notify_inbox"]
    b.add("resumed", actor="maintainer")
    assert b.quest.state is S.PATCHING and b.quest.attempts == 0


def test_cannot_reproduce_parks_and_resume_tries_again() -> None:
    b = builder_in(S.REPRODUCING)
    b.add("reproduction_failed", reason="passes on base")
    assert b.quest.park_reason is ParkReason.CANNOT_REPRODUCE
    b.add("resumed", actor="maintainer")
    assert b.quest.state is S.REPRODUCING and types(b) == ["start_agent"]


def test_base_moved_while_landing_goes_back_to_patching_to_rebase() -> None:
    b = builder_in(S.LANDING)
    b.add("base_moved", base="base9")
    assert b.quest.state is S.PATCHING and not b.quest.c_approval_counts
    assert b.effects[-1].type == "rebase" and b.effects[-1].payload["base"] == "base9"


def test_regression_rolls_back_and_confirmation_researches_at_next_revision() -> None:
    b = builder_in(S.WATCHING)
    b.add("regression_detected", source="check_run:9")
    assert b.quest.state is S.ROLLED_BACK
    assert b.effects[-1].type == "rollback" and b.effects[-1].payload["merge_sha"] == "merge1"
    b.add("rollback_confirmed", revert_sha="rev1")
    assert b.quest.state is S.RESEARCHING and b.quest.revision == 2
    assert b.effects[-1].key.startswith("q-1:2:start_agent:")


def test_pause_from_any_active_state_and_resume_to_it() -> None:
    for state in (S.RESEARCHING, S.PLANNED, S.PROVING, S.WATCHING, S.ROLLED_BACK):
        b = builder_in(state)
        b.add("paused", actor="maintainer", reason="freeze")
        assert b.quest.state is S.PARKED and b.quest.resume_state is state
        b.add("resumed", actor="maintainer")
        assert b.quest.state is state


def test_kill_abandons_and_stops_a_running_agent() -> None:
    b = builder_in(S.PATCHING)
    b.add("killed", actor="maintainer", reason="wrong approach")
    assert b.quest.state is S.ABANDONED and b.quest.outcome is Outcome.KILLED
    assert types(b) == ["stop_agent"]


def test_rejected_checkpoint_abandons() -> None:
    b = builder_in(S.PLANNED)
    b.decide("B", "reject", reason="too risky")
    assert b.quest.state is S.ABANDONED and b.quest.outcome is Outcome.REJECTED


# triage routes


@pytest.mark.parametrize("route", ["auto_fix", "research_only"])
def test_fix_and_research_routes_start_research(route: str) -> None:
    b = JournalBuilder().sense(route=route)
    assert b.quest.state is S.RESEARCHING and types(b) == ["start_agent"]


def test_human_route_waits_in_the_inbox_until_a_person_starts_it() -> None:
    b = JournalBuilder().sense(route="human")
    assert b.quest.state is S.TRIAGED and b.quest.awaiting_person and types(b) == ["notify_inbox"]
    assert refused(b, "triaged", route="auto_fix").code is Refusal.UNDEFINED  # no actor
    b.add("triaged", route="research_only", actor="maintainer")
    assert b.quest.state is S.RESEARCHING and not b.quest.awaiting_person


def test_ignore_route_abandons_and_mutes_the_fingerprint_for_24_hours() -> None:
    b = JournalBuilder().sense(route="ignore")
    assert b.quest.state is S.ABANDONED and b.quest.outcome is Outcome.IGNORED
    mute = b.effects[-1]
    assert mute.type == "mute_fingerprint" and mute.payload["hours"] == 24
    until = datetime.fromisoformat(mute.payload["until"])
    assert (until - b.events[-1].at).total_seconds() == 24 * 3600


def test_duplicate_route_merges_the_signal_and_creates_no_live_quest() -> None:
    b = JournalBuilder("q-2")
    b.add("signal_sensed", repo="octo/demo", fingerprint="fp-1", kind="check_failure",
          source="check_run:3")
    b.add("triaged", route="duplicate", duplicate_of="q-1")
    assert b.quest.state is S.ABANDONED and b.quest.outcome is Outcome.DUPLICATE
    merge = b.effects[-1]
    assert merge.type == "merge_signal" and merge.payload["into"] == "q-1"
    parent = builder_in(S.PROVING)
    parent.add("signal_attached", fingerprint="fp-1", source=merge.payload["source"],
               severity="critical")
    assert parent.quest.signals == 2 and parent.quest.severity == "critical"


def test_conflict_parks_a_child_that_resumes_when_its_parent_lands() -> None:
    child = JournalBuilder("q-child")
    child.add("signal_sensed", repo="octo/demo", fingerprint="fp-2", kind="check_failure")
    child.add("triaged", route="conflict", parent="q-1")
    assert child.quest.park_reason is ParkReason.WAITING_FOR_PARENT
    evidence = child.effects[-1]
    assert evidence.type == "deliver_child_evidence" and evidence.payload["parent"] == "q-1"
    parent = builder_in(S.LANDING)
    parent.add("child_evidence", child="q-child")
    parent.add("landed", merge_sha="m1")
    resume = [e for e in parent.effects if e.type == "resume_dependents"]
    assert [e.payload["child"] for e in resume] == ["q-child"]
    child.add("parent_landed", parent="q-1")
    assert child.quest.state is S.RESEARCHING and types(child) == ["start_agent"]


# checkpoints


def test_every_checkpoint_request_carries_the_policy_blocking_flag() -> None:
    policy = Policy(checkpoints={"A": CheckpointMode(blocking=False),
                                 "B": CheckpointMode(blocking=True),
                                 "C": CheckpointMode(blocking=False)})
    b = builder_in(S.READY, policy)
    requests = [e.payload for e in b.effects if e.type == "request_checkpoint"]
    assert [(r["checkpoint"], r["blocking"]) for r in requests] == [
        ("A", False), ("B", True), ("C", False)]


def test_automatic_decision_at_a_blocking_checkpoint_is_recorded_only() -> None:
    b = builder_in(S.HYPOTHESISED)
    b.add("checkpoint_decided", checkpoint="A", verdict="approve", automatic=True)
    assert b.quest.state is S.HYPOTHESISED and b.quest.recorded_only_decisions == 1


def test_advisory_checkpoint_advances_on_an_automatic_decision() -> None:
    b = builder_in(S.HYPOTHESISED, Policy(checkpoints={"A": CheckpointMode(blocking=False)}))
    b.add("checkpoint_decided", checkpoint="A", verdict="approve", automatic=True)
    assert b.quest.state is S.REPRODUCING


def test_shadow_mode_records_automatic_decisions_and_never_advances() -> None:
    policy = Policy(shadow=True, checkpoints={"A": CheckpointMode(blocking=False)})
    b = builder_in(S.HYPOTHESISED, policy)
    for verdict in ("approve", "revise", "reject"):
        b.add("checkpoint_decided", checkpoint="A", verdict=verdict, automatic=True)
        assert b.quest.state is S.HYPOTHESISED and types(b) == []
    assert b.quest.recorded_only_decisions == 3
    b.decide("A")  # a person's decision still acts
    assert b.quest.state is S.REPRODUCING


@pytest.mark.parametrize(("state", "checkpoint", "target", "stage"), [
    (S.HYPOTHESISED, "A", S.RESEARCHING, "research"),
    (S.PLANNED, "B", S.REPRODUCING, "plan"),
    (S.READY, "C", S.PATCHING, "patch"),
])
def test_revise_returns_to_research_planning_or_patching(
    state: State, checkpoint: str, target: State, stage: str
) -> None:
    b = builder_in(state)
    b.decide(checkpoint, "revise", reason="look at the retry path")
    assert b.quest.state is target
    assert b.effects[-1].payload == {"stage": stage, "revise": "look at the retry path"}


def test_revise_at_b_keeps_the_reproduction_and_asks_b_again() -> None:
    b = builder_in(S.PLANNED)
    b.decide("B", "revise", reason="smaller plan")
    assert b.quest.reproduction == "test_pager"
    b.add("plan_written", summary="smaller")
    assert b.quest.state is S.PLANNED and b.effects[-1].payload["checkpoint"] == "B"


def test_research_only_quest_approved_at_a_parks_and_notifies() -> None:
    b = JournalBuilder().sense(route="research_only")
    b.add("hypothesis_written", summary="flaky network")
    b.decide("A")
    assert b.quest.state is S.PARKED and b.quest.park_reason is ParkReason.RESEARCH_COMPLETE
    assert types(b) == ["notify_inbox"]
    assert refused(b, "resumed", actor="maintainer").code is Refusal.UNDEFINED
    b.add("triaged", route="auto_fix", actor="maintainer")  # /quest fix
    assert b.quest.state is S.REPRODUCING


def test_decision_for_a_checkpoint_that_is_not_open_is_refused() -> None:
    b = builder_in(S.PLANNED)
    assert refused(b, "checkpoint_decided", checkpoint="C", verdict="approve",
                   actor="m").code is Refusal.NOT_AT_CHECKPOINT


def test_decision_made_on_an_older_snapshot_is_stale() -> None:
    b = builder_in(S.READY)
    seen = b.quest.snapshot.model_dump()
    b.add("human_revision", head="human2", pusher="bob")
    b.prove()
    error = refused(b, "checkpoint_decided", checkpoint="C", verdict="approve", actor="m",
                    snapshot=seen)
    assert error.code is Refusal.STALE
    b.decide("C", snapshot=b.quest.snapshot.model_dump())
    assert b.quest.state is S.LANDING


def test_the_author_of_the_head_cannot_approve_it() -> None:
    b = builder_in(S.READY)
    b.add("human_revision", head="bobs", pusher="bob")
    b.prove()
    assert refused(b, "checkpoint_decided", checkpoint="C", verdict="approve",
                   actor="bob").code is Refusal.PRODUCER
    b.decide("C", actor="carol")
    assert b.quest.state is S.LANDING


# what invalidates a C approval


def test_land_carries_the_approved_head_and_snapshot() -> None:
    b = builder_in(S.LANDING)
    land = b.effects[-1]
    assert land.type == "land" and land.payload["head"] == "head1"
    assert land.payload == {"head": "head1", **b.quest.snapshot.model_dump(mode="json")}
    assert b.quest.c_approval_counts


def test_human_revision_during_landing_ends_the_approval_and_proves_again() -> None:
    b = builder_in(S.LANDING)
    b.add("human_revision", head="h2", pusher="bob")
    q = b.quest
    assert q.revision == 2 and q.state is S.PROVING and not q.c_approval_counts
    assert b.effects[-1].type == "run_proof" and b.effects[-1].payload["head"] == "h2"


def test_same_head_pushed_again_changes_nothing() -> None:
    b = builder_in(S.READY)
    before = b.quest
    b.add("human_revision", head="head1", pusher="bob")
    assert b.quest == before and types(b) == []


def test_new_signal_during_proof_clears_an_approval() -> None:
    b = builder_in(S.LANDING)
    b.add("human_revision", head="h2", pusher="bob")  # back to proving at revision 2
    b.add("signal_attached", fingerprint="fp-1", source="check_run:4")
    assert b.quest.c_approval is None


def test_new_proof_ends_an_earlier_approval() -> None:
    b = builder_in(S.LANDING)
    approved = b.quest.c_approval
    b.add("human_revision", head="h2", pusher="bob")
    b.prove()
    assert b.quest.c_approval is None and approved is not None
    assert approved != b.quest.snapshot


# claims


def test_claim_is_exclusive_and_refuses_others_while_held() -> None:
    b = builder_in(S.PLANNED)
    b.add("claimed", actor="alice")
    assert b.quest.state is S.HANDED_OFF and b.quest.owner == "alice"
    for type_, fields in [("claimed", {}), ("released", {}), ("paused", {"reason": "x"}),
                          ("killed", {"reason": "x"}),
                          ("checkpoint_decided", {"checkpoint": "B", "verdict": "approve"})]:
        error = refused(b, type_, actor="bob", **fields)
        assert error.code is Refusal.CLAIMED and "@alice" in error.reason
    b.add("comment_posted", comment_id=7, actor="bob")  # comments still work
    assert b.quest.comments == 1


def test_claim_only_at_a_checkpoint() -> None:
    b = builder_in(S.PATCHING)
    assert refused(b, "claimed", actor="alice").code is Refusal.UNDEFINED


def test_release_returns_to_the_checkpoint_and_asks_again() -> None:
    b = builder_in(S.HYPOTHESISED)
    b.add("claimed", actor="alice")
    b.add("released", actor="alice")
    assert b.quest.state is S.HYPOTHESISED and b.quest.owner is None
    assert types(b) == ["reply_comment", "request_checkpoint", "show_claim"]
    assert b.effects[-1].payload == {"owner": ""}  # put back as it was


def test_every_move_that_changes_the_owner_asks_to_show_it_and_no_other_does() -> None:
    """A claim shows on GitHub as its assignee and requested reviewer; whatever ends it —
    a release, the owner's decision, a failed proof, the base moving, a kill — asks to put
    GitHub back (``bot.commands.claims``); a pause keeps it held."""
    b = builder_in(S.READY)
    b.add("claimed", actor="alice")
    assert types(b) == ["reply_comment", "show_claim"]
    assert b.effects[-1].payload == {"owner": "alice"}
    b.add("paused", actor="alice", reason="lunch")
    assert "show_claim" not in types(b) and b.quest.owner == "alice"
    b.add("resumed", actor="alice")
    assert "show_claim" not in types(b)
    b.decide("C", actor="alice")
    assert types(b)[-1] == "show_claim" and b.effects[-1].payload == {"owner": ""}


def test_owner_decision_ends_the_claim_and_applies() -> None:
    b = builder_in(S.READY)
    b.add("claimed", actor="alice")
    b.decide("C", actor="alice")
    assert b.quest.state is S.LANDING and b.quest.owner is None


def test_proof_success_during_a_claim_keeps_the_review_held_at_c() -> None:
    b = builder_in(S.READY)
    b.add("claimed", actor="alice")
    b.add("human_revision", head="h2", pusher="alice")
    assert b.quest.state is S.HANDED_OFF and b.quest.claimed_from is S.PROVING
    b.prove()
    assert b.quest.state is S.HANDED_OFF and b.quest.claimed_from is S.READY
    assert b.quest.owner == "alice"
    assert refused(b, "checkpoint_decided", checkpoint="C", verdict="approve",
                   actor="alice").code is Refusal.PRODUCER  # alice pushed the head


def test_proof_failure_during_a_claim_clears_the_owner() -> None:
    b = builder_in(S.READY)
    b.add("claimed", actor="alice")
    b.add("human_revision", head="h2", pusher="alice")
    b.add("proof_failed", head="h2", reason="red")
    assert b.quest.state is S.PATCHING and b.quest.owner is None


# proof binding


def test_proof_needs_a_recorded_patch_head() -> None:
    b = builder_in(S.PROVING)
    assert b.quest.head == "head1"
    bundle = b.bundle()
    assert refused(b, "proof_completed", bundle=bundle.as_json(),
                   digest="0" * 64).code is Refusal.UNBOUND_PROOF


@pytest.mark.parametrize(("field", "value"), [
    ("quest_id", "q-other"), ("revision", 5), ("risk", Risk.HIGH), ("base", "b9"), ("head", "h9")])
def test_a_bundle_that_does_not_match_the_quest_is_refused(field: str, value: object) -> None:
    b = builder_in(S.PROVING)
    bundle = b.bundle().model_copy(update={field: value})
    error = refused(b, "proof_completed", bundle=bundle.as_json(), digest=bundle.digest())
    assert error.code is Refusal.UNBOUND_PROOF and field in error.reason


def test_a_failing_bundle_is_never_accepted_as_proof() -> None:
    b = builder_in(S.PROVING)
    bundle = b.bundle(passing=False)
    assert refused(b, "proof_completed", bundle=bundle.as_json(),
                   digest=bundle.digest()).code is Refusal.UNBOUND_PROOF


def test_a_proof_failure_for_an_old_head_is_stale() -> None:
    b = builder_in(S.PROVING)
    assert refused(b, "proof_failed", head="old", reason="x").code is Refusal.STALE


# terminal states, reopening, spend and usage


def test_terminal_states_absorb_but_still_record_usage() -> None:
    b = main_line()
    closed = b.quest
    t = step(closed, b.event("killed", actor="m", reason="x"), b.policy)
    assert t.absorbed and t.quest == closed
    b.add("usage_recorded", tokens=100, cost_cents=7)
    assert b.quest.usage_cost_cents == 7 and b.quest.state is S.CLOSED


def test_regression_reopens_a_closed_quest_with_its_identity_and_severity_floor() -> None:
    b = main_line()
    assert b.quest.severity_floor == "high"
    b.add("reopened", fingerprint="fp-1", source="check_run:20", severity="low")
    q = b.quest
    assert q.id == "q-1" and q.state is S.RESEARCHING and q.revision == 2
    assert q.severity == "high" and q.signals == 2 and q.last_signal == "check_run:20"
    assert refused(b, "reopened", fingerprint="fp-1").code is Refusal.UNDEFINED


def test_reopen_with_another_fingerprint_is_refused() -> None:
    b = main_line()
    assert refused(b, "reopened", fingerprint="fp-other").code is Refusal.BAD_EVENT


def test_spend_request_then_approval_starts_the_respondent_run() -> None:
    b = builder_in(S.RESEARCHING)
    request = b.add("spend_requested", amount_cents=2500, purpose="user study")
    assert types(b) == ["request_spend"]
    b.add("spend_decided", request_id=request.id, approved=True, actor="maintainer")
    assert types(b) == ["start_respondent_run"] and b.quest.spend_pending == ()
    assert refused(b, "spend_decided", request_id=request.id,
                   approved=True).code is Refusal.BAD_EVENT


def test_usage_receipts_accumulate() -> None:
    b = builder_in(S.PATCHING)
    for _ in range(3):
        b.add("usage_recorded", tokens=1000, cost_cents=3)
    assert (b.quest.usage_tokens, b.quest.usage_cost_cents) == (3000, 9)


def test_occurrence_separates_effects_of_one_type_in_one_transition() -> None:
    b = builder_in(S.LANDING)
    for child in ("q-a", "q-b"):
        b.add("child_evidence", child=child)
    b.add("landed", merge_sha="m")
    resumes = [e for e in b.effects if e.type == "resume_dependents"]
    assert [e.key.rsplit(":", 1)[1] for e in resumes] == ["0", "1"]
    assert len({e.key for e in resumes}) == 2


def test_fold_absorbs_a_redelivered_event_and_reports_the_first_invalid() -> None:
    b = builder_in(S.READY)
    events = [*b.events, b.events[3]]
    result = fold(events, b.policy)
    assert result.quest == b.quest and result.absorbed == (b.events[3].id,)
    bad = b.event("landed", merge_sha="x")
    result = fold([*b.events, bad, b.event("watch_clean")], b.policy)
    assert result.invalid is not None and result.invalid.index == len(b.events)
    assert result.invalid.event_id == bad.id and result.quest == b.quest
