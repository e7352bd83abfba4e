"""Attempts on record in people's words: the status comment shows an earlier attempt — its
plan, how it ended, its reviewers' words — inert, and without questbot's identifiers."""

from __future__ import annotations

import re

from bot.core.policy import Checkpoint, CheckpointMode, Policy
from bot.words.attempts import attempts_lines, attempts_summary
from bot.words.status_comment import StatusView, status_comment
from questbot_testing.journals import JournalBuilder


def revised_at_b() -> JournalBuilder:
    b = JournalBuilder("q-words").sense()
    b.add("hypothesis_written", summary="off-by-one in pager")
    b.decide("A", actor="alice")
    b.add("reproduced", check="test_pager_last_page")
    b.add("plan_written", summary="widen the *bound* @everyone")
    b.decide("B", "revise", actor="carol", reason="which checks must pass?")
    b.add("plan_written", summary="fix the bound; test_pager must pass")
    return b


def test_an_earlier_attempt_in_plain_words() -> None:
    q = revised_at_b().quest
    assert q is not None
    [line] = attempts_lines(q)
    assert line.startswith("Attempt 1 (revision 1) ended because checkpoint B sent the plan "
                           "back to be written again: which checks must pass?")
    assert "plan widen the *bound* @everyone" in line
    assert "checkpoint A approved by alice" in line and "checkpoint B sent back by carol" in line
    assert attempts_summary(q).startswith("attempt 2; earlier, attempt 1: checkpoint B")


def test_the_status_comment_shows_attempt_one_inert() -> None:
    q = revised_at_b().quest
    assert q is not None
    body = status_comment(StatusView(quest=q))
    assert "**Attempts:** attempt 2" in body and "Earlier attempts" in body
    assert "`widen the *bound* @everyone`" in body  # the agent's words as inert code
    assert not re.search(r"\b(checkpoint_decided|plan_written|attempt_log)\b", body)


def test_no_attempt_line_before_a_second_attempt() -> None:
    q = JournalBuilder("q-one").sense().to_ready().quest
    assert q is not None
    assert attempts_lines(q) == ["Attempt 1, under way, reviews so far: checkpoint A approved "
                                 "by maintainer; checkpoint B approved by maintainer."]
    assert "Earlier attempts" not in status_comment(StatusView(quest=q))


def test_a_review_is_named_by_its_role_not_its_actor() -> None:
    """A review's actor (``review:design_reviewer``) is questbot's bookkeeping, not a login."""
    policy = Policy(checkpoints={c: CheckpointMode(blocking=False) for c in Checkpoint})
    b = JournalBuilder("q-roles", policy=policy).sense()
    b.add("hypothesis_written", summary="off-by-one")
    b.decide("A", actor="review:automated_check", automatic=True)
    b.add("reproduced", check="test_pager")
    b.add("plan_written", summary="fix the bound", risk="low")
    b.decide("B", actor="review:design_reviewer", automatic=True)
    assert b.quest is not None
    [line] = attempts_lines(b.quest)
    assert ("checkpoint A approved by questbot's automatic reviewer; checkpoint B approved by "
            "a review by the design reviewer.") in line
    assert "review:" not in line and "(automatic)" not in line
