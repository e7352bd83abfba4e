"""``python -m bot lessons``'s listing: a lesson is a model's words, printed to an operator's
terminal — on one line, with no escape sequence of its own."""

from __future__ import annotations

from datetime import UTC, datetime

from bot.core.lessons import Ending
from bot.journal.lessons import Lesson
from bot.tools.lessons import lessons_text


def test_a_lesson_cannot_write_escape_sequences_to_the_terminal() -> None:
    lesson = Lesson(quest_id="q1", revision=1, repo="octo/demo", ending=Ending.LANDED,
                    text="check X fails\x1b]0;owned\x07 under Y\nsecond line",
                    synopsis="fine\x1b[2J", at=datetime(2026, 12, 1, tzinfo=UTC))
    text = lessons_text("octo/demo", [lesson])
    assert "\x1b" not in text and "\x07" not in text
    # the sequences go whole, not just their ESC: no "]0;owned" or "[2J" is left behind
    assert "  check X fails under Y second line" in text
    assert "accepted because: fine\n" in text
