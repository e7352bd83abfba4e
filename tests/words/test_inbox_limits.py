"""The inbox's words on a reflection wave (``bot.words.inbox_limits``): due, a reflection
under review, one the reviewer sent back with its reason, and the last that passed — all in
people's words, the reflection's own text escaped."""

from __future__ import annotations

from datetime import UTC, datetime
from itertools import pairwise

from bot.core.events import Hold
from bot.journal.limits import ReflectionRecord
from bot.words.inbox_limits import Waiting, Wave, limits_lines
from tests.words.surface import problems

AT = datetime(2026, 1, 1, tzinfo=UTC)
MINE = ReflectionRecord(text="We will be more careful.", by="questbot", at=AT)


def test_a_due_wave_shows_the_reflection_under_review_and_the_last_rejection() -> None:
    rejected = MINE.model_copy(update={"reviewer": "reflection reviewer",
                                       "synopsis": "It names no cause the record shows."})
    pending = ReflectionRecord(text="Research reads the *failing log* first.", by="questbot",
                               at=AT)
    text = "\n".join(limits_lines([], Wave(True, 2, 24, pending, None, rejected), 7))
    assert "### A reflection is due" in text
    assert ("The reflection reviewer sent back the reflection by `questbot`: It names no "
            "cause the record shows") in text
    assert "waits for its review by the reflection reviewer: Research reads" in text
    assert "*failing log*" not in text  # a reflection is prose, escaped
    assert problems(text) == []


def test_a_wave_passed_by_the_reviewer_says_so_once_it_is_over() -> None:
    passed = MINE.model_copy(update={"reviewer": "reflection reviewer",
                                     "synopsis": "It names the cause both endings record."})
    waiting = [Waiting("q1", "bug", Hold.SLOT)]
    text = "\n".join(limits_lines(waiting, Wave(False, 2, 24, None, passed), 7))
    assert "The last reflection, by `questbot`: We will be more careful" in text
    assert "It passed the review of the reflection reviewer: It names the cause" in text
    by_hand = MINE.model_copy(update={"by": "maya", "reviewer": "maya"})
    text = "\n".join(limits_lines(waiting, Wave(False, 2, 24, None, by_hand), 7))
    assert "passed the review" not in text


def test_what_the_reflections_used_is_shown_even_when_no_wave_is_due() -> None:
    from bot.journal.model_use import Spent

    assert limits_lines([], Wave(False, 2, 24), 7) == []  # no run yet: nothing to say
    text = "\n".join(limits_lines([], Wave(False, 2, 24, spent=Spent(12_345, 7, 2)), 7))
    assert "### Reflections" in text
    assert "reflections so far used 12,345 tokens ($0.07)" in text
    due = "\n".join(limits_lines([], Wave(True, 2, 24, spent=Spent(10, 1, 1)), 7))
    assert "### Reflections" not in due and "used 10 tokens ($0.01)" in due


def _glued(lines: list[str]) -> list[str]:
    """Lines that GitHub would read as the tail of the list item above them (a lazy
    continuation) or of the paragraph above them: neither a list item, nor a heading, nor
    after a blank line."""
    return [line for above, line in pairwise(lines)
            if above and line and not line.startswith(("- ", "#")) and not above.startswith("#")]


def test_each_sentence_of_the_section_is_a_paragraph_not_the_tail_of_a_quest() -> None:
    from bot.journal.model_use import Spent

    passed = MINE.model_copy(update={"reviewer": "reflection reviewer", "synopsis": "Fine."})
    rejected = passed.model_copy(update={"synopsis": "No cause."})
    waiting = [Waiting("q1", "bug", Hold.REFLECTION), Waiting("q2", "bug", Hold.SLOT)]
    for wave in (Wave(True, 2, 24, MINE, None, rejected, Spent(10, 1, 2)),
                 Wave(False, 2, 24, None, passed, None, Spent(10, 1, 2)),
                 Wave(False, 2, 24, None, passed)):
        lines = limits_lines(waiting, wave, 7)
        assert _glued(lines) == [], lines
        assert problems("\n".join(lines), commits=()) == []
    text = "\n".join(limits_lines(waiting, Wave(False, 2, 24, None, passed), 7))
    assert text.index("### Reflections") < text.index("The last reflection")


def test_one_bad_ending_in_one_hour_is_said_in_the_singular() -> None:
    text = "\n".join(limits_lines([], Wave(True, 1, 1), 7))
    assert "At least 1 quest ended badly within 1 hour (" in text  # the threshold, not a count


def test_a_held_quest_reads_its_hold_escaped_and_the_slot_limit_only_for_a_slot() -> None:
    text = "\n".join(limits_lines([Waiting("q1", "bug", Hold.REFLECTION)], Wave(False, 2, 24),
                                   7))
    assert "<text>" not in text  # GitHub would drop it as an HTML tag
    assert r"\<text\>" in text
    assert "At most 7 quests" not in text  # it waits for a reflection, not for a slot
    slot = "\n".join(limits_lines([Waiting("q1", "bug", Hold.SLOT)], Wave(False, 2, 24), 7))
    assert "At most 7 quests are worked on at once" in slot


def test_many_held_quests_are_bounded_and_say_why_once() -> None:
    from bot.words.inbox_limits import WAITING_SHOWN

    waiting = [Waiting(f"q{n}", f"bug {n}", Hold.REFLECTION) for n in range(WAITING_SHOWN + 30)]
    text = "\n".join(limits_lines(waiting, Wave(True, 2, 24), 7))
    assert "**bug 0**" in text and f"**bug {WAITING_SHOWN}**" not in text
    assert "`q0`" not in text  # named by what failed, not by questbot's id
    assert "- and 30 newer ones" in text
    assert "several quests ended badly of late" not in text  # the section above says it
    assert text.count("waits for a reflection to pass") == WAITING_SHOWN
    assert len(text) < 5000
