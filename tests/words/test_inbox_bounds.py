"""The inbox stays within GitHub's 65,536 characters however much waits: "What waits for a
person" shows its first entries in full and names the rest, so the forge never has to cut the
body (``forge.limits.fit``) and the lessons, their boxes and the footer below always show."""

from __future__ import annotations

from datetime import UTC, datetime

from bot.core import Quest, State
from bot.core.events import Hold
from bot.core.lessons import Ending
from bot.core.quest import ParkReason
from bot.journal.lessons import Lesson
from bot.journal.limits import ReflectionRecord
from bot.journal.model_use import Spent
from bot.words.github_limits import BODY_LIMIT, fit
from bot.words.inbox_lessons import SHOWN, lessons_lines
from bot.words.inbox_limits import Waiting, Wave, limits_lines
from bot.words.inbox_marks import boxes, lesson_boxes
from bot.words.markdown import plain
from bot.words.render import WAITING_SHOWN, InboxEntry, inbox_body
from tests.core.quests import quest_in
from tests.words.surface import problems

REPO = "octo/demo"
AT = datetime(2026, 12, 1, tzinfo=UTC)
FOOTER = "questbot edits this issue as quests move."
LONG = "[a](b) *x* @y # " * 200  # escapes double it: each piece of text as long as it gets


def routed(n: int, title: str = "the last page is missing") -> Quest:
    return quest_in(State.TRIAGED).evolve({"id": f"q{n:04}", "title": title})


def parked(n: int) -> Quest:
    return quest_in(State.PARKED).evolve({"id": f"q{n:04}", "title": LONG,
                                          "park_reason": ParkReason.NEEDS_HUMAN,
                                          "park_note": LONG})


def below(long: bool) -> tuple[list[InboxEntry], list[str]]:
    """The rest of an inbox at its fullest: ten flaky quests, a due wave with a reflection
    sent back and one under review, a hundred quests waiting to start, and lessons."""
    text = LONG if long else "check X fails under Y"
    flaky = [InboxEntry(quest_in(State.CLOSED).evolve({"id": f"f{n}", "title": text}), "a" * 40)
             for n in range(10)]
    record = ReflectionRecord(text=text, by="questbot", at=AT, reviewer="reflection reviewer",
                              synopsis=text)
    wave = Wave(True, 2, 24, record, None, record, Spent(1000, 5, 2))
    waiting = [Waiting(f"w{n}", text, Hold.SLOT, f"#{n}") for n in range(100)]
    lessons = [Lesson(quest_id=f"q-{n}", revision=1, repo=REPO, ending=Ending.ROLLED_BACK,
                      text=text[:600], at=AT) for n in range(20)]
    return flaky, [*limits_lines(waiting, wave, 7), *lessons_lines(REPO, lessons)]


def assert_whole(body: str) -> None:
    assert len(body) < BODY_LIMIT and fit(body) == body
    assert "### What closed quests taught" in body and body.rstrip().endswith("anything else.")
    assert FOOTER in body
    assert lesson_boxes(body) == {f"q-{n}@1": False for n in range(SHOWN)}


def test_several_hundred_waiting_keep_the_lessons_and_footer() -> None:
    entries = [InboxEntry(routed(n), f"#{n + 1}", "routed to a person") for n in range(400)]
    flaky, rest = below(long=False)
    body = inbox_body(entries, flaky, rest, agreement=(3, 4))
    assert_whole(body)
    assert set(boxes(body)) == {f"q{n:04}" for n in range(WAITING_SHOWN)}
    (more,) = [line for line in body.splitlines() if line.startswith("- and 350 more waiting")]
    assert f"shown here in full as those above are handled: #{WAITING_SHOWN + 1}, " in more
    assert ", and " in more and "`python -m bot status QUEST_ID`" in more
    named = more.count("#")
    assert more.endswith(f", and {350 - named} more. Each one's pull request or issue says "
                         "what it waits for; whoever runs questbot lists them all with "
                         "`python -m bot status --repo octo/demo` and reads any one with "
                         "`python -m bot status QUEST_ID`.")
    assert problems(body) == []


def test_long_entries_are_fewer_and_still_leave_room_for_the_rest() -> None:
    entries = [InboxEntry(parked(n), None, LONG) for n in range(300)]
    flaky, rest = below(long=True)
    body = inbox_body(entries, flaky, rest, agreement=(3, 4))
    assert_whole(body)
    shown = len(boxes(body))
    assert 1 <= shown < WAITING_SHOWN
    (more,) = [line for line in body.splitlines() if line.startswith("- and ")
               and "more waiting for a person" in line]
    assert more.startswith(f"- and {300 - shown} more waiting for a person")
    assert plain(LONG, limit=80) in more  # no pull request or issue: named by what failed
    assert f"q{shown:04}" not in more
    assert problems(body) == []


def test_a_short_list_is_shown_whole_with_no_count() -> None:
    entries = [InboxEntry(routed(n), f"#{n + 1}") for n in range(WAITING_SHOWN)]
    body = inbox_body(entries)
    assert len(boxes(body)) == WAITING_SHOWN and "more waiting for a person" not in body
    one_more = inbox_body([*entries, InboxEntry(routed(WAITING_SHOWN), "#99")])
    assert ("- and 1 more waiting for a person, shown here in full as those above are "
            "handled: #99. Each one's") in one_more
