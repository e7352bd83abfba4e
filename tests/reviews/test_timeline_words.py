"""A review's decision in the status comment's timeline: named by its role, never as a login
or an identifier."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from bot.core.events.decisions import CheckpointDecided
from bot.words.timeline import entry_of, line


@pytest.mark.parametrize(("verdict", "says"), [
    ("approve", "a review by the design reviewer approved checkpoint B"),
    ("revise", "a review by the design reviewer asked for a revision at checkpoint B"),
    ("reject", "a review by the design reviewer rejected the quest at checkpoint B"),
])
def test_a_review_is_named_by_its_role(verdict: str, says: str) -> None:
    event = CheckpointDecided(id="review-1", quest_id="q-1", at=datetime(2026, 12, 1, tzinfo=UTC),
                              actor="review:design_reviewer", checkpoint="B", verdict=verdict,
                              automatic=True, reason="the plan cannot fail for this reason")
    entry = entry_of(event)
    assert entry.actor is None and entry.words == says
    shown = line(entry)
    assert "review:" not in shown and "design_reviewer" not in shown and "@" not in shown


def test_a_review_recorded_without_acting_says_so() -> None:
    event = CheckpointDecided(id="review-2", quest_id="q-1", at=datetime(2026, 12, 1, tzinfo=UTC),
                              actor="review:experiment_reviewer", checkpoint="C",
                              verdict="reject", automatic=True, reason="the proof ran no test")
    entry = entry_of(event, recorded_only=True)
    assert entry.words == ("a review by the experiment reviewer would reject the quest at "
                           "checkpoint C (recorded only: a person decides)")


@pytest.mark.parametrize(("role", "by"), [("automated_check", "questbot's automatic reviewer"),
                                          ("human", "a person")])
def test_a_role_that_is_no_reviewers_title_is_named_as_who_it_is(role: str, by: str) -> None:
    event = CheckpointDecided(id="review-3", quest_id="q-1", at=datetime(2026, 12, 1, tzinfo=UTC),
                              actor=f"review:{role}", checkpoint="A", verdict="approve",
                              automatic=role != "human", reason="the hypothesis holds")
    assert entry_of(event).words == f"a review by {by} approved checkpoint A"
    recorded = entry_of(event, recorded_only=True).words
    assert recorded.startswith(f"a review by {by} would approve checkpoint A")
