"""The repository's limits, pure (issue 14, item 6): which endings are bad, when a reflection
wave is due (latched until a reflection passes), what holds a new quest, and the ``held`` cell
— by example and by properties against a brute-force reading of the rule."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hypothesis import given
from hypothesis import strategies as st

from bot.core import Policy, State, step
from bot.core.events.signals import Hold
from bot.core.gates import status_and_next
from bot.core.limits import BadEnding, admission, bad_ending, reflection_due
from questbot_testing.journals import JournalBuilder
from tests.core.quests import quest_in

T0 = datetime(2026, 1, 1, tzinfo=UTC)
HOUR = timedelta(hours=1)


def test_bad_endings_are_failures_not_choices() -> None:
    researching = quest_in(State.RESEARCHING)
    b = JournalBuilder("q-1").sense()
    b.add("killed", actor="maya", reason="wrong idea")
    assert bad_ending(researching, b.quest) is BadEnding.ABANDONED  # type: ignore[arg-type]
    b = JournalBuilder("q-1").sense()
    b.add("paused", actor="maya", reason="holiday")
    assert bad_ending(researching, b.quest) is None  # type: ignore[arg-type]  # a person's pause
    b = JournalBuilder("q-1").sense()
    b.add("agent_halted", stage="research", outcome="failed", reason="crashed")
    assert bad_ending(researching, b.quest) is BadEnding.PARKED  # type: ignore[arg-type]
    ignored = JournalBuilder("q-2")
    ignored.add("signal_sensed", repo="octo/demo", fingerprint="f", kind="check_failure")
    sensed = ignored.quest
    ignored.add("triaged", route="ignore")
    assert bad_ending(sensed, ignored.quest) is None  # type: ignore[arg-type]
    watching = quest_in(State.WATCHING)
    assert bad_ending(watching, quest_in(State.ROLLED_BACK)) is BadEnding.ROLLED_BACK
    assert bad_ending(None, researching) is None
    assert bad_ending(watching, watching) is None  # no move, no ending
    waiting = JournalBuilder("q-3")
    waiting.add("signal_sensed", repo="octo/demo", fingerprint="f", kind="check_failure")
    held = waiting.add("held", reason="slot") and waiting.quest
    waiting.add("killed", actor="maya", reason="not now")
    assert bad_ending(held, waiting.quest) is None  # type: ignore[arg-type]  # nothing began


def brute(times: list[datetime], passed: datetime | None, n: int, window: timedelta) -> bool:
    since = [t for t in times if passed is None or t > passed]
    return n > 0 and any(
        sum(1 for t in since if start <= t <= start + window) >= n for start in since)


moments = st.lists(st.integers(0, 200).map(lambda h: T0 + h * HOUR), max_size=12)


@given(moments, st.none() | st.integers(0, 200).map(lambda h: T0 + h * HOUR),
       st.integers(0, 5), st.integers(1, 48).map(lambda h: h * HOUR))
def test_reflection_due_is_n_bad_endings_in_one_window_since_the_last_reflection(
        times: list[datetime], passed: datetime | None, n: int, window: timedelta) -> None:
    due = reflection_due(times, passed, n, window)
    assert due == brute(times, passed, n, window)
    later = max(times, default=T0) + 1000 * HOUR
    assert reflection_due([*times, later], passed, n, window) >= due  # latched: time alone
    if due:  # never lifts it; a reflection passed after them all does
        assert not reflection_due(times, later, n, window)


@given(st.integers(0, 20), st.integers(1, 10), st.booleans())
def test_admission(working: int, cap: int, due: bool) -> None:
    hold = admission(working, cap, due)
    assert (hold is Hold.REFLECTION) == due
    assert (hold is Hold.SLOT) == (not due and working >= cap)


def test_a_held_quest_stays_sensed_says_why_and_is_triaged_later() -> None:
    b = JournalBuilder("q-h")
    b.add("signal_sensed", repo="octo/demo", fingerprint="f", kind="check_failure")
    first = b.add("held", reason="slot")
    assert b.quest is not None and b.quest.state is State.SENSED and b.quest.held is Hold.SLOT
    assert [e.type.value for e in b.effects[-1:]] == ["notify_inbox"]
    again = step(b.quest, b.event("held", reason="slot"), Policy())
    assert again.quest == b.quest and again.effects == ()  # held again: nothing new
    assert first.id != b.event("held", reason="slot").id
    said = status_and_next(b.quest, Policy()).next_action.says
    assert "waits for a free slot" in said and "_" not in said
    b.add("triaged", route="auto_fix")
    assert b.quest.held is None and b.quest.state is State.RESEARCHING
