"""A repository that changed under its quests pauses them (``paused`` with ``repository``):
whatever the quest was doing and whoever holds its review, it parks ``repository_changed``
with the note people read, the inbox is told, and ``/resume`` (or the change undone) takes it
up where it stopped."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from bot.core import ParkReason, State
from bot.core.effects import EffectType
from bot.core.states import ACTIVE, AGENT_STATES
from tests.core.quests import builder_in

NOTE = "octo/demo was archived by maya, so GitHub takes no writes to it."
ACTIVE_STATES = sorted(ACTIVE - {State.SENSED}, key=lambda s: s.value)


@given(st.sampled_from(ACTIVE_STATES))
def test_any_active_quest_parks_with_the_note_and_tells_the_inbox(state: State) -> None:
    b = builder_in(state)
    before = b.quest
    assert before is not None and before.state is state
    effects = len(b.effects)
    b.add("paused", repository=NOTE)  # questbot's own: no person, no actor
    q = b.quest
    assert q is not None
    assert (q.state, q.park_reason, q.park_note) == (State.PARKED,
                                                     ParkReason.REPOSITORY_CHANGED, NOTE)
    assert q.resume_state is state
    asked = [e.type for e in b.effects[effects:]]
    assert EffectType.NOTIFY_INBOX in asked
    assert (EffectType.STOP_AGENT in asked) == (state in AGENT_STATES)
    b.add("resumed", actor="maintainer")
    assert b.quest is not None and b.quest.state is state
    assert b.quest.park_note is None


def test_a_person_pausing_still_parks_as_paused_with_no_note() -> None:
    b = builder_in(State.HYPOTHESISED)
    b.add("paused", actor="maintainer", reason="holiday")
    assert b.quest is not None
    assert (b.quest.park_reason, b.quest.park_note) == (ParkReason.PAUSED, None)
