"""In shadow mode automatic decisions never advance, so every checkpoint waits for a person:
``status_and_next`` says so, and the inbox lists it."""

from __future__ import annotations

from bot.core import State
from bot.core.gates import Role, next_action
from tests.core.quests import quest_in
from tests.reviews.stored import ADVISORY, SHADOW


def test_an_advisory_checkpoint_in_shadow_mode_waits_for_a_person() -> None:
    quest = quest_in(State.PLANNED)
    advisory, shadow = next_action(quest, ADVISORY), next_action(quest, SHADOW)
    assert advisory.role is shadow.role is Role.REVIEWER
    assert "automatic review may pass it" in advisory.says
    assert shadow.says.startswith("a person decides checkpoint B")
