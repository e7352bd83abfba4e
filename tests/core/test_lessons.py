"""Which endings teach (``bot.core.lessons``): landed, rolled back, abandoned after work."""

from __future__ import annotations

from bot.core import State
from bot.core.lessons import Ending, teaches
from tests.core.quests import builder_in, quest_in


def test_landed_and_rolled_back_quests_teach() -> None:
    assert teaches(quest_in(State.CLOSED)) is Ending.LANDED
    assert teaches(quest_in(State.ROLLED_BACK)) is Ending.ROLLED_BACK


def test_an_abandoned_quest_teaches_only_after_work() -> None:
    assert teaches(quest_in(State.ABANDONED)) is None  # killed before any work
    b = builder_in(State.PLANNED)
    b.add("killed", actor="maintainer", reason="not this way")
    assert b.quest is not None and teaches(b.quest) is Ending.ABANDONED


def test_live_quests_teach_nothing_yet() -> None:
    for state in (State.RESEARCHING, State.PLANNED, State.WATCHING, State.PARKED):
        assert teaches(quest_in(state)) is None
