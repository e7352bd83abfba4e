"""Sealed evidence and attempts on record (seed 003, issue 14 items 2 and 3): what a gate's
submission seals, decisions pinned to a seal, and the attempts a rejection back to planning
leaves on record — by example and over random journals."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.core import EVENT_TYPES, InvalidTransition, Policy, Refusal, State, accepts, step
from bot.core.canonical import canonical_digest
from bot.core.gates import status_and_next
from bot.core.policy import Checkpoint
from bot.core.seals import SUBMISSIONS, artifact_digest
from questbot_testing.journals import JournalBuilder
from tests.core.quests import plausible

A, B, C = Checkpoint.A, Checkpoint.B, Checkpoint.C


def to_planned() -> JournalBuilder:
    b = JournalBuilder("q-seal").sense()
    b.add("hypothesis_written", summary="off-by-one in pager", evidence_digest="e" * 64)
    b.decide("A")
    b.add("reproduced", check="test_pager_last_page", command=["pytest", "-k", "pager"])
    b.add("plan_written", summary="fix the bound", risk="low")
    return b


def test_each_submission_seals_its_gate_with_its_artifacts() -> None:
    b = JournalBuilder("q-seal").sense()
    h = b.add("hypothesis_written", summary="off-by-one in pager", evidence_digest="e" * 64)
    q = b.quest
    assert q is not None and [s.gate for s in q.seals] == [A]
    seal_a = q.seal(A)
    assert seal_a is not None and seal_a.submission == h.id
    assert seal_a.artifacts == {"hypothesis": canonical_digest(
        {"summary": "off-by-one in pager", "evidence_digest": "e" * 64})}
    b.decide("A")
    b.add("reproduced", check="test_pager_last_page", command=["pytest", "-k", "pager"])
    assert b.quest is not None and b.quest.seals == (seal_a,)  # a reproduction alone seals nothing
    b.add("plan_written", summary="fix the bound", risk="low")
    seal_b = b.quest.seal(B)
    assert seal_b is not None and set(seal_b.artifacts) == {"reproduction", "plan"}
    assert seal_b.artifacts["plan"] == canonical_digest({"summary": "fix the bound",
                                                          "risk": "low"})
    b.decide("B")
    b.add("patch_pushed", head="head1", pusher="questbot[bot]")
    assert b.quest.seal(C) is None  # a pushed head is not yet submitted to C
    proof = b.prove()
    seal_c = b.quest.seal(C)
    assert seal_c is not None and seal_c.submission == proof.id
    assert seal_c.artifacts["proof"] == proof.digest  # type: ignore[union-attr]
    gates = status_and_next(b.quest, b.policy).gates
    assert [g.seal.digest if g.seal else None for g in gates] == [
        seal_a.digest, seal_b.digest, seal_c.digest]
    assert all(g.seal_current for g in gates)
    b.add("human_revision", head="head2", pusher="bob")  # the head moves: C's seal stays, stale
    assert b.quest.seal(C) == seal_c
    assert not status_and_next(b.quest, b.policy).gates[2].seal_current


def test_a_decision_on_an_old_seal_is_refused_and_attempt_one_stays_on_record() -> None:
    b = to_planned()
    assert b.quest is not None
    old = b.quest.seal(B)
    assert old is not None and b.quest.attempt_number == 1
    b.decide("B", "revise", actor="carol", reason="the plan does not say which checks pass",
             seal=old.digest)
    q = b.quest
    assert q.state is State.REPRODUCING and q.attempt_number == 2 and q.attempt_reviews == ()
    [first] = q.attempt_log
    assert (first.number, first.plan, first.reproduction) == (1, "fix the bound",
                                                               "test_pager_last_page")
    assert [(r.gate, r.verdict.value, r.actor) for r in first.reviews] == [
        (A, "approve", "maintainer"), (B, "revise", "carol")]
    assert first.reviews[-1].seal == old.digest and first.seals == q.seals
    b.add("plan_written", summary="fix the bound", risk="low")  # the same text, submitted again
    new = b.quest.seal(B)
    assert new is not None and new.digest != old.digest and new.attempt == 2
    assert new.artifacts == old.artifacts  # same content, a new submission
    stale = b.event("checkpoint_decided", checkpoint="B", verdict="approve", actor="dave",
                    seal=old.digest)
    with pytest.raises(InvalidTransition) as refused:
        step(b.quest, stale, b.policy)
    assert refused.value.code is Refusal.STALE
    assert "submitted again" in str(refused.value)
    b.decide("B", actor="dave", seal=new.digest)
    assert b.quest.state is State.PATCHING and b.quest.attempt_log == (first,)
    status = status_and_next(b.quest, b.policy).as_json()
    assert [a["number"] for a in status["attempt_log"]] == [1]
    assert status["attempt_number"] == 2 and status["attempts"] == 0


def test_a_revision_at_c_keeps_the_attempt() -> None:
    b = JournalBuilder("q-c").sense().to_ready()
    b.decide("C", "revise", actor="carol", reason="the write-up misreads the log")
    q = b.quest
    assert q is not None and q.state is State.PATCHING
    assert q.attempt_number == 1 and q.attempt_log == ()
    assert q.attempt_reviews[-1].verdict.value == "revise" and q.attempts == 1


def test_a_rollback_starts_a_new_attempt() -> None:
    b = JournalBuilder("q-r").sense().to_ready()
    b.decide("C")
    b.add("landed", merge_sha="m1")
    b.add("regression_detected", source="check_run:9")
    b.add("rollback_confirmed", revert_sha="r1")
    q = b.quest
    assert q is not None and q.revision == 2 and q.attempt_number == 2
    assert q.attempt_log[0].head == "head1" and q.attempt_log[0].proof_attempts == 1


# random journals

ONWARD = frozenset({"hypothesis_written", "reproduced", "plan_written", "checkpoint_decided",
                    "patch_pushed", "proof_completed", "proof_failed", "human_revision",
                    "landed", "regression_detected", "rollback_confirmed", "resumed"})
"""The moves that take a quest through its gates, drawn four times in five."""
VERDICTS = ("approve", "approve", "revise", "reject")


@st.composite
def walks(draw: st.DrawFn) -> tuple[JournalBuilder, list[tuple[str, object]]]:
    """A journal of plausible events with revisions and seal-pinned decisions among them,
    with each step's (event type, quest before → after) kept for the properties."""
    b = JournalBuilder("q-prop", policy=draw(st.sampled_from(
        [Policy(), Policy(shadow=True)]))).sense()
    seen: list[str] = []  # every seal digest ever made
    trace: list[tuple[str, object]] = []
    for _ in range(draw(st.integers(0, 60))):
        quest = b.quest
        assert quest is not None
        seen += [s.digest for s in quest.seals if s.digest not in seen]
        candidates = [t for t in EVENT_TYPES if t not in {"signal_sensed", "killed", "paused"}
                      and accepts(quest, t, quest.owner or "maintainer")]
        if not candidates:
            break
        onward = [t for t in candidates if t in ONWARD]
        etype = draw(st.sampled_from(sorted(onward if onward and draw(st.integers(0, 4))
                                            else candidates)))
        event = plausible(b, etype, actor=quest.owner or "maintainer")
        data = {k: v for k, v in event.model_dump().items()
                if k not in {"type", "id", "quest_id", "at"}}
        if etype == "checkpoint_decided":
            data["verdict"] = draw(st.sampled_from(VERDICTS))
            if draw(st.booleans()):  # an automatic review: questbot's, no person's login
                data["automatic"], data["actor"] = True, None
            if seen and draw(st.booleans()):
                data["seal"] = draw(st.sampled_from(seen))
        event = b.event(etype, **data)
        try:
            step(quest, event, b.policy)
        except InvalidTransition as refused:
            pinned = data.get("seal")
            if etype == "checkpoint_decided" and pinned is not None:
                current = quest.seal(Checkpoint(str(data["checkpoint"])))
                if current is None or current.digest != pinned:
                    trace.append(("refused", refused.code))
            continue
        b.apply(event)
        trace.append((etype, (quest, b.quest, data.get("seal"),
                              data.get("checkpoint"))))
    return b, trace


@settings(max_examples=100, deadline=None)
@given(walks())
def test_seals_change_only_on_submission_and_stale_seals_are_refused(
        walk: tuple[JournalBuilder, list[tuple[str, object]]]) -> None:
    _b, trace = walk
    for etype, what in trace:
        if etype == "refused":
            # refused as stale, unless refused before the seal was read (no open
            # checkpoint, a claim held by another)
            assert what in {Refusal.STALE, Refusal.NOT_AT_CHECKPOINT, Refusal.CLAIMED}
            continue
        before, after, pinned, checkpoint = what  # type: ignore[misc]
        if pinned is not None:  # a decision taken counts only on the gate's current seal
            assert before.seal(Checkpoint(checkpoint)).digest == pinned
        gate = SUBMISSIONS.get(etype)
        for g in Checkpoint:
            if g is not gate:  # no other event, and no other gate, changes a seal
                assert before.seal(g) == after.seal(g), (etype, g)
        if gate is not None and after.seal(gate) != before.seal(gate):
            assert after.seal(gate).attempt == after.attempt_number
        # attempts only grow, and an ended attempt's record never changes
        assert after.attempt_number in (before.attempt_number, before.attempt_number + 1)
        assert after.attempt_log[:len(before.attempt_log)] == before.attempt_log
        assert after.attempt_number == len(after.attempt_log) + 1
        if after.attempt_number != before.attempt_number:
            assert after.attempt_log[-1].number == before.attempt_number
            assert after.attempt_log[-1].reviews[:len(before.attempt_reviews)] == \
                before.attempt_reviews


artifact_values = st.fixed_dictionaries({
    "summary": st.text(), "risk": st.none() | st.text(max_size=8),
    "command": st.lists(st.text(max_size=20), max_size=4), "n": st.integers(-2**53, 2**53)})


@given(artifact_values)
def test_artifact_digests_are_canonical_json_digests(value: dict[str, object]) -> None:
    try:
        expected = canonical_digest(value)
    except UnicodeEncodeError:  # a lone surrogate: no UTF-8 for it, no digest either way
        return
    assert artifact_digest(value) == expected


def test_every_seal_holds_its_gates_artifacts_in_name_order() -> None:
    from bot.core.seals import ARTIFACTS

    q = JournalBuilder("q-all").sense().to_ready().quest
    assert q is not None
    for gate in Checkpoint:
        seal = q.seal(gate)
        assert seal is not None and tuple(seal.artifacts) == ARTIFACTS[gate]
        assert list(ARTIFACTS[gate]) == sorted(ARTIFACTS[gate])


_text = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=12)
"""Text with a UTF-8 form (a lone surrogate has none, so no digest either way)."""
_artifact = st.one_of(
    st.text(alphabet="0123456789abcdef", min_size=64, max_size=64),  # a digest already
    st.fixed_dictionaries({"summary": _text, "risk": st.none() | _text,
                           "command": st.lists(_text, max_size=3) | st.tuples(_text),
                           "n": st.integers(-2**53, 2**53)}))


def _reference_seal(gate: Checkpoint, revision: int, attempt: int, submission: str,
                    artifacts: dict[str, object]) -> tuple[dict[str, str], str]:
    """The seal's documented form, computed the slow way: canonical digests, one line each."""
    import hashlib

    digests = {name: value if isinstance(value, str) else canonical_digest(value)
               for name, value in artifacts.items()}
    lines = [gate.value, str(revision), str(attempt), submission,
             *(f"{name}={digest}" for name, digest in digests.items())]
    return digests, hashlib.sha256("\n".join(lines).encode()).hexdigest()


@given(st.sampled_from(list(Checkpoint)), st.integers(1, 10**6), st.integers(1, 10**6), _text,
       st.dictionaries(st.sampled_from(["hypothesis", "patch", "plan", "proof", "x=y"]),
                       _artifact, max_size=3))
def test_make_seal_digests_are_the_documented_line_format(
        gate: Checkpoint, revision: int, attempt: int, submission: str,
        artifacts: dict[str, object]) -> None:
    from bot.core.seals import make_seal

    artifacts = dict(sorted(artifacts.items()))
    seal = make_seal(gate, revision, attempt, submission, artifacts)
    digests, digest = _reference_seal(gate, revision, attempt, submission, artifacts)
    assert (seal.artifacts, seal.digest) == (digests, digest)
    assert list(seal.artifacts) == list(artifacts)
    assert seal == type(seal).model_validate_json(seal.model_dump_json())


@given(st.lists(st.sampled_from(list(Checkpoint)), max_size=8))
def test_with_seal_keeps_one_seal_a_gate_in_gate_order(gates: list[Checkpoint]) -> None:
    from bot.core.seals import Seal, make_seal, with_seal

    seals: tuple[Seal, ...] = ()
    for n, gate in enumerate(gates):
        seal = make_seal(gate, 1, 1, f"e{n}", {"proof": "0" * 64})
        expected = tuple(sorted((*(s for s in seals if s.gate is not gate), seal),
                                key=lambda s: s.gate.value))
        seals = with_seal(seals, seal)
        assert seals == expected
