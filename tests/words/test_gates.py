"""The checkpoints people read on GitHub are ``status_and_next``'s gates: one line each in the
status comment, the check run and the ``/status`` reply, saying the same as the read the agent
and the CLI get — open where the gate is open, who decides it under the repository's policy,
the evidence it lacks, and, in words, that a decision applies to the evidence as it is."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.commands.replies import status_text
from bot.core import Quest, State
from bot.core.attempts import DecisionRecord
from bot.core.gates import status_and_next
from bot.core.policy import Checkpoint, CheckpointMode, Policy
from bot.core.states import CHECKPOINT_AT
from bot.words import check_run as checks
from bot.words.gates import EXPLAINED, decided_by, gates_lines
from bot.words.status_comment import StatusView, status_comment
from tests.core.quests import builder_in
from tests.core.test_gates import journals
from tests.words.surface import problems

ADVISORY_B = Policy(checkpoints={c: CheckpointMode(blocking=c is not Checkpoint.B)
                                 for c in Checkpoint})


def quest_in(state: State, policy: Policy | None = None) -> Quest:
    quest = builder_in(state, policy).quest
    assert quest is not None
    return quest


def test_an_open_blocking_gate_names_who_decides_and_its_seal() -> None:
    quest = quest_in(State.PLANNED)
    [a, b, c] = gates_lines(status_and_next(quest, Policy()))
    seal_a, seal_b = quest.seal(Checkpoint.A), quest.seal(Checkpoint.B)
    assert seal_a is not None and seal_b is not None
    assert a == "* A, the hypothesis: passed — `@maintainer` approved it"
    assert b == ("* B, the reproduction and the plan: **open**, a person decides; its evidence "
                 "is ready; a decision applies to it as it is now, and a change to it asks "
                 "again")
    for line in (a, b):  # a digest is no sentence: the operator's `status` prints it
        assert seal_a.digest[:12] not in line and seal_b.digest[:12] not in line
    assert c == "* C, the patch and its proof: not reached yet (a person decides it)"


def test_an_advisory_gate_says_an_automatic_review_may_decide_it_everywhere() -> None:
    quest = quest_in(State.PLANNED, ADVISORY_B)
    said = "an automatic review or a person decides"
    view = checks.check_run(quest, None, ADVISORY_B)
    assert view.title == "questbot: waiting for a review at checkpoint B"
    assert said in view.text
    assert "questbot's automatic reviewer or a person reviews the plan" in view.text
    assert said in status_comment(StatusView(quest=quest, policy=ADVISORY_B))
    assert said in status_text(quest, ADVISORY_B)
    blocking = checks.check_run(quest, None, Policy())
    assert blocking.title == "questbot: waiting for a person at checkpoint B"
    assert said not in blocking.text


def test_shadow_mode_says_a_person_decides() -> None:
    shadow = ADVISORY_B.model_copy(update={"shadow": True})
    quest = quest_in(State.PLANNED, shadow)
    [_a, b, _c] = gates_lines(status_and_next(quest, shadow))
    assert "a person decides (shadow mode: an automatic review is recorded only)" in b
    assert checks.check_run(quest, None, shadow).title == (
        "questbot: waiting for a person at checkpoint B")


def test_a_claimed_gate_is_decided_by_whoever_claimed_it() -> None:
    quest = quest_in(State.HANDED_OFF)
    lines = gates_lines(status_and_next(quest, Policy()))
    assert sum("**open**, the person who claimed the review decides" in x for x in lines) == 1


def test_a_quest_that_ended_before_any_gate_says_so_once() -> None:
    assert gates_lines(status_and_next(quest_in(State.ABANDONED), Policy())) == [
        "* none was reached before the quest ended"]


@pytest.mark.parametrize("state", list(State), ids=lambda s: s.value)
def test_every_state_shows_the_checkpoints_in_all_three_places(state: State) -> None:
    quest = quest_in(state)
    lines = gates_lines(status_and_next(quest, Policy()))
    for text in (status_comment(StatusView(quest=quest)), checks.check_run(quest).text or "",
                 status_text(quest)):
        assert all(line in text for line in lines)
        assert problems(text) == []


@st.composite
def walked(draw: st.DrawFn) -> tuple[Quest, Policy]:
    """A random plausible journal (``tests.core.test_gates.journals``), read under a drawn
    policy."""
    b = draw(journals())
    policy = Policy(checkpoints={c: CheckpointMode(blocking=draw(st.booleans()))
                                 for c in Checkpoint}, shadow=draw(st.booleans()))
    assert b.quest is not None
    return b.quest, policy


@settings(max_examples=150, deadline=None)
@given(walked())
def test_the_open_line_is_the_open_gate_and_only_it(case: tuple[Quest, Policy]) -> None:
    quest, policy = case
    status = status_and_next(quest, policy)
    lines = gates_lines(status)
    opened = [g.name for g in status.gates if g.position == "open"]
    shown = [line[2] for line in lines if "**open**" in line]
    assert shown == [c.value for c in opened]
    if quest.state in CHECKPOINT_AT:
        assert shown == [CHECKPOINT_AT[quest.state].value]
    for gate in status.gates:
        if gate.seal is not None:  # the evidence's version is said in words, not as a digest
            assert not any(gate.seal.digest[:12] in line for line in lines)
    for gate, line in zip(status.gates, lines, strict=False):
        assert "seal" not in line
        approved = [r for r in status.reviews if r.gate is gate.name and not r.recorded_only
                    and r.verdict.value == "approve"]
        if gate.position == "passed" and approved:  # who passed it, from this attempt
            assert " approved it" in line, line


def test_the_status_reply_names_whoever_claimed_the_review_without_pinging_them() -> None:
    quest = quest_in(State.HANDED_OFF)
    assert quest.owner
    said = status_text(quest)
    assert f"**Now:** The review is claimed by `{quest.owner}`." in said
    assert f"@{quest.owner}" not in said  # every /status would notify them again


def test_an_advisory_gate_ahead_says_who_will_decide_it_not_a_policy_word() -> None:
    quest = quest_in(State.HYPOTHESISED, ADVISORY_B)
    [_a, b, _c] = gates_lines(status_and_next(quest, ADVISORY_B))
    assert b == ("* B, the reproduction and the plan: not reached yet (an automatic review or "
                 "a person decides it)")
    shadow = ADVISORY_B.model_copy(update={"shadow": True})
    [_a, b, _c] = gates_lines(status_and_next(quest_in(State.HYPOTHESISED, shadow), shadow))
    assert b.endswith("not reached yet (a person decides it; an automatic review is recorded "
                      "only)")


def test_a_rolled_back_quests_gates_are_to_be_submitted_again_with_their_seals() -> None:
    """Landed, then rolled back: its gates are ahead again, not "not reached"."""
    quest = quest_in(State.ROLLED_BACK)
    lines = gates_lines(status_and_next(quest, Policy()))
    for line, checkpoint in zip(lines, Checkpoint, strict=True):
        seal = quest.seal(checkpoint)
        assert seal is not None
        assert "not reached" not in line and "to be submitted again" in line
        assert line.endswith("to be submitted again (a person decides it)")
        assert seal.digest[:12] not in line


ADVISORY = Policy(checkpoints={c: CheckpointMode(blocking=False) for c in Checkpoint})


def test_a_passed_checkpoint_says_who_passed_it_without_pinging_them() -> None:
    """From this attempt's record of decisions: a person by login as a code span, questbot's
    automatic reviewer, a review by a reviewer role."""
    b = builder_in(State.HYPOTHESISED, ADVISORY)
    b.decide("A", actor="review:automated_check", automatic=True)
    b.add("reproduced", check="test_pager")
    b.add("plan_written", summary="fix the bound", risk="low")
    b.decide("B", actor="review:design_reviewer", automatic=True)
    b.add("patch_pushed", head="head1", pusher="questbot[bot]")
    b.prove()
    b.decide("C", actor="carol")
    assert b.quest is not None and b.quest.state is State.LANDING
    a, bb, c = gates_lines(status_and_next(b.quest, ADVISORY))
    assert a.startswith("* A, the hypothesis: passed — questbot's automatic reviewer approved it")
    assert bb.startswith("* B, the reproduction and the plan: passed — a review by the design "
                         "reviewer approved it")
    assert c.startswith("* C, the patch and its proof: passed — `@carol` approved it")
    for line in (a, bb, c):
        assert "fixed as" not in line and "evidence" not in line
    said = status_text(b.quest, ADVISORY)
    assert "`@carol` approved it" in said and " @carol" not in said  # a code span, no ping
    assert problems(said) == []


def test_a_recorded_only_review_is_not_who_passed_it() -> None:
    """In shadow mode the automatic review moved nothing: the person who approved after it
    passed the checkpoint."""
    shadow = ADVISORY.model_copy(update={"shadow": True})
    b = builder_in(State.HYPOTHESISED, shadow)
    b.decide("A", actor="review:automated_check", automatic=True)
    assert b.quest is not None and b.quest.state is State.HYPOTHESISED  # recorded only
    b.decide("A", actor="alice")
    [a, _b, _c] = gates_lines(status_and_next(b.quest, shadow))
    assert "passed — `@alice` approved it" in a and "automatic" not in a


def test_a_quest_rejected_or_killed_says_who_decided_each_checkpoint_it_reached() -> None:
    b = builder_in(State.PLANNED)
    b.decide("B", "reject", actor="bob", reason="not a bug")
    assert b.quest is not None and b.quest.state is State.ABANDONED
    a, bb, c = gates_lines(status_and_next(b.quest, Policy()))
    assert a == "* A, the hypothesis: passed — `@maintainer` approved it"
    assert bb == ("* B, the reproduction and the plan: rejected by `@bob`, which ended the "
                  "quest")
    assert c == "* C, the patch and its proof: not reached before the quest ended"
    killed = builder_in(State.PLANNED)
    killed.add("killed", actor="bob", reason="not worth it")
    assert killed.quest is not None
    _a, bb, _c = gates_lines(status_and_next(killed.quest, Policy()))
    assert bb == "* B, the reproduction and the plan: submitted before the quest ended"


@pytest.mark.parametrize(("actor", "automatic", "said"), [
    ("alice", False, "`@alice`"),
    ("review:automated_check", True, "questbot's automatic reviewer"),
    ("review:design_reviewer", True, "a review by the design reviewer"),
    ("review:experiment_reviewer", True, "a review by the experiment reviewer"),
    ("review:human", False, "a review by a person"),
    (None, True, "the repository's settings"),
])
def test_who_decided_in_peoples_words(actor: str | None, automatic: bool, said: str) -> None:
    record = DecisionRecord.model_validate({
        "gate": "A", "verdict": "approve", "actor": actor, "automatic": automatic,
        "event": "e-1", "at": "2026-01-01T00:00:00Z"})
    assert decided_by(record) == said
    assert problems(said) == []


@pytest.mark.parametrize("state", list(State), ids=lambda s: s.value)
def test_the_evidence_a_decision_applies_to_is_said_in_words_and_explained_once(
        state: State) -> None:
    """"Sealed" is questbot's word; people read, on the gate a decision can be taken at, that
    a decision applies to its evidence as it is now."""
    quest = quest_in(state)
    status = status_and_next(quest, Policy())
    lines = gates_lines(status)
    said = "\n".join(lines)
    assert "seal" not in said.lower()
    decidable = [g for g in status.gates
                 if g.position in ("open", "parked") and g.seal is not None and g.seal_current]
    assert said.count(EXPLAINED) == len(decidable) <= 1
    for text in (status_comment(StatusView(quest=quest)), checks.check_run(quest).text or "",
                 status_text(quest)):
        assert "sealed" not in text.lower()


def test_a_gate_passed_in_an_earlier_attempt_stands_and_names_who_passed_it() -> None:
    """A rejection back to planning starts attempt 2 and keeps the approved hypothesis: A is
    not to be submitted again, and its line says so, with who approved it in attempt 1."""
    from tests.words.test_attempts import revised_at_b

    quest = revised_at_b().quest
    assert quest is not None and quest.attempt_number == 2
    seal = quest.seal(Checkpoint.A)
    assert seal is not None
    [a, _b, _c] = gates_lines(status_and_next(quest, Policy()))
    assert a == "* A, the hypothesis: passed in attempt 1 — `@alice` approved it, and stands"
    assert seal.digest[:12] not in a
    assert "submitted again" not in a
