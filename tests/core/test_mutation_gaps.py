"""What a mutation pass over the seed rules showed untested (issue 22, item 6): of 33 hand-made
bugs, these survived —

* a proof that checks only its **last** check (every fixture put the failing check last): here a
  failing check is refused first, in the middle and last;
* a **C approval left in place** after the base moved or a person pushed. Landing stayed safe
  through the snapshot comparison, but what is merged, said to be landing and rolled back read
  the field itself. Now the core clears it (tested here), every reader asks ``Quest.approved``
  — the approval only while it stands — and a landed quest's snapshot does not move, so a
  rollback reverts what landed (``tests/e2e/test_watch.py`` has the rollback end to end).
"""

from __future__ import annotations

import pytest

from bot.core import CheckRecord, InvalidTransition, ProofBundle, State
from bot.core.proof import Reproduction
from bot.words.render import next_action
from tests.core.quests import builder_in

S = State
ZERO = "0" * 64


def bundle_failing(b: object, position: int | None, count: int = 3) -> ProofBundle:
    """The builder's quest's bundle with ``count`` checks, the one at ``position`` failing."""
    from questbot_testing.journals import JournalBuilder

    assert isinstance(b, JournalBuilder) and b.quest is not None
    q = b.quest
    assert q.head is not None and q.base is not None
    checks = tuple(CheckRecord(name=f"check {n}", command=("pytest", "-q"),
                               exit_code=1 if n == position else 0, output_sha256=ZERO)
                   for n in range(count))
    repro = Reproduction(name="repro", command=("pytest", "-k", "r"), base_exit_code=1,
                         head_exit_code=0)
    return ProofBundle(quest_id=q.id, revision=q.revision, risk=q.risk, base=q.base, head=q.head,
                       checks=checks, reproduction=repro)


@pytest.mark.parametrize("position", [0, 1, 2], ids=["first", "middle", "last"])
def test_a_failing_check_fails_the_proof_wherever_it_stands(position: int) -> None:
    b = builder_in(S.PROVING)
    failing = bundle_failing(b, position)
    assert not failing.all_passed
    with pytest.raises(InvalidTransition, match="failing check"):
        b.add("proof_completed", bundle=failing.as_json(), digest=failing.digest())
    assert b.quest is not None and b.quest.state is S.PROVING
    passing = bundle_failing(b, None)
    assert passing.all_passed
    b.add("proof_completed", bundle=passing.as_json(), digest=passing.digest())
    assert b.quest is not None and b.quest.state is S.READY


MOVES = {"base_moved": {"base": "base-new"},
         "human_revision": {"head": "human-head", "pusher": "bob"}}


@pytest.mark.parametrize("event", list(MOVES))
def test_a_c_approval_ends_when_the_base_moves_or_a_person_pushes_while_landing(
        event: str) -> None:
    b = builder_in(S.LANDING)
    assert b.quest is not None and b.quest.approved == b.quest.c_approval is not None
    b.add(event, **MOVES[event])
    q = b.quest
    assert q is not None and q.state in (S.PATCHING, S.PROVING)
    assert q.c_approval is None and q.approved is None
    b.effects.clear()
    if q.state is S.PATCHING:  # the base moved: the head is rebased onto it
        b.add("patch_pushed", head="rebased-head", pusher="questbot[bot]")
    b.prove()
    q = b.quest
    assert q is not None and q.state is S.READY and q.approved is None  # C is asked again
    assert [e.type.value for e in b.effects if e.type.value == "land"] == []


@pytest.mark.parametrize("event", list(MOVES))
def test_a_landed_quest_keeps_what_landed_when_the_base_moves_or_its_branch_is_pushed(
        event: str) -> None:
    """Paused during the watch, a landed quest still hears of its base and branch (intake
    passes them to a parked quest): neither is its work any more, and its rollback must revert
    what landed, so its snapshot — and with it the approval — stays."""
    b = builder_in(S.WATCHING)
    landed = b.quest
    assert landed is not None and landed.approved is not None
    b.add("paused", actor="maintainer", reason="a release first")
    b.add(event, **MOVES[event])
    q = b.quest
    assert q is not None and q.state is S.PARKED
    assert (q.base, q.head, q.revision) == (landed.base, landed.head, landed.revision)
    assert q.approved == landed.approved
    b.add("resumed", actor="maintainer")
    assert b.quest is not None and b.quest.state is S.WATCHING
    assert b.quest.approved == landed.approved


def test_what_is_said_to_be_landing_is_the_approved_head_never_a_stale_approval() -> None:
    q = builder_in(S.LANDING).quest
    assert q is not None and q.approved is not None and q.head is not None
    assert q.head[:7] in next_action(q)
    stale = q.model_copy(update={"head": "f" * 40})  # what a surviving mutant left behind
    assert stale.c_approval is not None and stale.approved is None
    said = next_action(stale)
    assert "fffffff" in said and q.head[:7] not in said
