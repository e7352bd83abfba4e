"""The pure side of a review: what it pins, and the currency check a submission passes."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from bot.core import State
from bot.core.policy import Checkpoint
from bot.reviews.models import ReviewRecord, ReviewRole
from bot.reviews.pinning import currency, digest, open_gate, pin
from tests.core.quests import builder_in, quest_in

S = State


def review_of(state: State, checkpoint: Checkpoint) -> ReviewRecord:
    quest = quest_in(state)
    return ReviewRecord(review_id="q-1.0123456789abcdef", quest_id="q-1", repo=quest.repo,
                        role=ReviewRole.DESIGN, checkpoint=checkpoint,
                        producer_session="producer", pinned=pin(quest, checkpoint),
                        requested_at=0.0)


def test_b_pins_the_reproduction_and_the_plan_with_their_digests() -> None:
    quest = quest_in(S.PLANNED)
    pinned = pin(quest, Checkpoint.B)
    assert set(pinned.artifacts) == {"reproduction", "plan"}
    assert pinned.artifacts["plan"] == "fix the bound"
    assert dict(pinned.snapshot.artifacts)["plan"] == digest("fix the bound")
    assert pinned.snapshot.core == quest.snapshot
    assert pinned.context["hypothesis"] == "off-by-one"


def test_c_pins_the_patch_and_the_bound_proof_and_shows_the_approved_plan() -> None:
    quest = quest_in(S.READY)
    pinned = pin(quest, Checkpoint.C)
    assert pinned.artifacts["patch"] == quest.head
    assert quest.proof is not None and pinned.artifacts["proof"] == quest.proof.proof_digest
    assert pinned.context["approved plan"] == "fix the bound"


def test_a_fresh_review_is_current_and_goes_stale_when_the_quest_moves() -> None:
    record = review_of(S.PLANNED, Checkpoint.B)
    b = builder_in(S.PLANNED)
    assert currency(record, b.quest) is None
    b.decide("B", "revise", reason="bound the scope")
    assert "no longer open" in (currency(record, b.quest) or "")
    b.add("plan_written", summary="a narrower plan")  # B again, on a new plan
    assert b.quest is not None and b.quest.state is S.PLANNED
    assert "evidence under review changed" in (currency(record, b.quest) or "")
    assert currency(record, None) == "the quest no longer exists"


def test_a_claim_keeps_the_gate_open() -> None:
    record = review_of(S.READY, Checkpoint.C)
    claimed = quest_in(S.HANDED_OFF)
    assert open_gate(claimed) is Checkpoint.C
    assert currency(record, claimed) is None


@given(head=st.sampled_from([None, "head1", "head2"]), base=st.sampled_from(["base0", "b2"]),
       revision=st.integers(1, 3), plan=st.sampled_from(["fix the bound", "other"]),
       reproduction=st.sampled_from(["test_pager", "test_other"]))
def test_current_exactly_when_nothing_pinned_changed(head: str | None, base: str,
                                                     revision: int, plan: str,
                                                     reproduction: str) -> None:
    record = review_of(S.READY, Checkpoint.C)
    quest = quest_in(S.READY)
    moved = quest.evolve({"head": head, "base": base, "revision": revision, "plan": plan,
                          "reproduction": reproduction})
    pinned_same = (head, base, revision) == (quest.head, quest.base, quest.revision)
    # the plan and the reproduction are context at C, not pinned artifacts
    assert (currency(record, moved) is None) == pinned_same


def test_a_review_pins_the_gates_seal_and_a_resubmission_makes_it_stale() -> None:
    """The same plan text submitted again is a new seal: a review pinned to the old one no
    longer counts, and the decision it would route carries the old seal, which the core
    refuses as stale too."""
    b = builder_in(S.PLANNED)
    assert b.quest is not None
    sealed = b.quest.seal(Checkpoint.B)
    assert sealed is not None
    record = ReviewRecord(review_id="q-1.0123456789abcdef", quest_id="q-1", repo=b.quest.repo,
                          role=ReviewRole.DESIGN, checkpoint=Checkpoint.B,
                          producer_session="producer", pinned=pin(b.quest, Checkpoint.B),
                          requested_at=0.0)
    assert record.pinned.snapshot.seal == sealed.digest
    assert currency(record, b.quest) is None
    b.decide("B", verdict="revise")  # back to reproducing: the plan is written again
    b.add("reproduced", check="t")
    b.add("plan_written", summary="fix the bound")  # the same words
    assert b.quest is not None and b.quest.state is S.PLANNED
    again = b.quest.seal(Checkpoint.B)
    assert again is not None and again.digest != sealed.digest
    assert currency(record, b.quest) == (
        "the evidence under review changed since it was pinned; request a new review")
