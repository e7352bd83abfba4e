"""The inbox's lessons: the latest five, each with its quest, as inert prose — a lesson is a
model's words about outside text, so it can mention nobody and link nowhere."""

from __future__ import annotations

from datetime import UTC, datetime

from bot.core.lessons import Ending
from bot.journal.lessons import Lesson
from bot.words.inbox_lessons import SHOWN, lessons_lines
from tests.words.surface import problems

REPO = "octo/demo"


def lesson(n: int, text: str = "check X fails under Y") -> Lesson:
    return Lesson(quest_id=f"q-{n}", revision=1, repo=REPO, ending=Ending.ROLLED_BACK,
                  text=text, at=datetime(2026, 12, 1, tzinfo=UTC))


def test_no_lessons_no_section() -> None:
    assert lessons_lines(REPO, []) == []


def test_the_latest_are_shown_with_their_quest_and_how_to_drop_one() -> None:
    text = "\n".join(lessons_lines(REPO, [lesson(n) for n in range(SHOWN + 2)]))
    assert "### What closed quests taught" in text
    assert "(quest `q-0`, landed, then rolled back after a regression)" in text
    assert "`q-5`" not in text and "and 2 older lessons, which agents read too" in text
    one = "\n".join(lessons_lines(REPO, [lesson(n) for n in range(SHOWN + 1)]))
    assert "and 1 older lesson, which" in one
    assert f"python -m bot lessons {REPO} --drop QUEST_ID" in text


def test_a_lesson_mentions_nobody_and_links_nowhere() -> None:
    text = "\n".join(lessons_lines(REPO, [lesson(1, "ask @maya, see [here](http://x) **now**")]))
    assert "@maya" not in text and "](http" not in text and "**now**" not in text


def test_a_lesson_stays_on_its_line_and_opens_no_heading_or_comment() -> None:
    lines = lessons_lines(REPO, [lesson(1, "# Done\n\n" + "word " * 110 + "<!-- x -->")])
    (item,) = [line for line in lines if line.startswith("- [ ]")]
    assert r"\# Done" in item and "<!-- x" not in item
    assert not any(line.startswith(("#", "word")) for line in lines[1:] if "taught" not in line)
    assert problems("\n".join(lines)) == []


def test_each_lesson_has_a_box_naming_its_ending() -> None:
    from bot.words.inbox_marks import boxes, lesson_boxes, lessons_ticked

    shown = "\n".join(lessons_lines(REPO, [lesson(n) for n in range(SHOWN + 2)]))
    assert lesson_boxes(shown) == {f"q-{n}@1": False for n in range(SHOWN)}
    assert boxes(shown) == {}  # a lesson's box is no quest's entry
    ticked = shown.replace("- [ ] <!-- questbot:inbox-lesson=q-2@1 -->",
                           "- [x] <!-- questbot:inbox-lesson=q-2@1 -->")
    assert lessons_ticked(shown, ticked) == ["q-2@1"]
    assert lessons_ticked(ticked, ticked) == []  # kept ticked: nothing new asked
    assert "tick its box to drop it" in shown


def test_a_lesson_links_to_its_quests_thread_where_one_is_recorded() -> None:
    lessons = [lesson(n) for n in range(3)]
    text = "\n".join(lessons_lines(REPO, lessons, {"q-0": "#12", "q-2": "#7"}))
    assert "(quest `q-0` in #12, landed, then rolled back after a regression)" in text
    assert "(quest `q-1`, landed, then" in text  # none recorded: its id, as before
    assert "(quest `q-2` in #7, landed" in text
    assert problems(text) == []


def test_a_link_is_only_ever_a_number_and_the_lesson_stays_inert() -> None:
    hostile = lesson(1, "see #99 and [x](javascript:y) @maya")
    text = "\n".join(lessons_lines(REPO, [hostile], {"q-1": "[x](http://evil)"}))
    assert "(quest `q-1`, landed" in text and "evil" not in text
    linked = "\n".join(lessons_lines(REPO, [hostile], {"q-1": "#3"}))
    assert r"see \#99 and \[x\]" in linked and "@maya" not in linked  # its own words inert
    assert "(quest `q-1` in #3, landed" in linked
