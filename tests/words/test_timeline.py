"""The whole timeline in the status comment: the newest entries open, every earlier one folded
under its count, and, past its share of GitHub's 65,536 characters, the first few and the
newest that fit, with the rest counted — never silently dropped (issue 24: the failure, the
research and approval of A were gone by ``closed``)."""

from __future__ import annotations

import re
from datetime import UTC, datetime

from hypothesis import given, settings
from hypothesis import strategies as st

from bot.core import State
from bot.words.timeline import FIRST_KEPT, SHOWN, TimelineEntry, line, timeline_fold
from tests.words.gfm import leaks
from tests.words.status_scenarios import every_state

AT = datetime(2026, 1, 1, tzinfo=UTC)


def entries(n: int, words: str = "did step") -> list[TimelineEntry]:
    return [TimelineEntry(AT, "x", None, None, f"questbot {words} {i}") for i in range(n)]


def test_a_short_timeline_has_no_fold() -> None:
    shown = timeline_fold(entries(SHOWN))
    assert "earlier event" not in "\n".join(shown)
    assert shown.count("<details><summary>Timeline</summary>") == 1


def test_the_earlier_events_are_folded_under_their_count_and_all_kept() -> None:
    all_ = entries(SHOWN + 7)
    text = "\n".join(timeline_fold(all_))
    assert "<details><summary>7 earlier events</summary>" in text
    for entry in all_:
        assert line(entry) in text
    earlier, newest = text.split("</details>", 1)
    assert line(all_[0]) in earlier and line(all_[-1]) in newest
    assert leaks(text) == []


def test_one_earlier_event_is_said_in_the_singular() -> None:
    assert "<summary>1 earlier event</summary>" in "\n".join(timeline_fold(entries(SHOWN + 1)))


def test_the_closed_quest_keeps_its_failure_and_first_approval() -> None:
    """The scenario's closed quest has 14 events: what failed is in the fold."""
    view = every_state()[State.CLOSED].view
    assert len(view.timeline) > SHOWN
    from bot.words.status_comment import status_comment

    body = status_comment(view)
    assert f"{len(view.timeline) - SHOWN} earlier events" in body
    assert "questbot saw check tests failed" in body and "approved checkpoint A" in body


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 3000), st.integers(500, 30_000), st.integers(1, 200))
def test_every_event_is_shown_or_counted_within_the_budget(n: int, budget: int,
                                                           width: int) -> None:
    all_ = entries(n, "x" * width)
    text = "\n".join(timeline_fold(all_, budget=budget))
    shown = sum(1 for e in all_ if line(e) + "\n" in text + "\n")
    left = re.search(r"… ([\d,]+) more events?, left out", text)
    counted = int(left.group(1).replace(",", "")) if left else 0
    assert shown + counted == n
    if n > SHOWN:
        assert f"<summary>{n - SHOWN:,} earlier event" in text
        earlier = text.split("</summary>", 2)[2].split("</details>")[0]
        assert len(earlier) <= budget + 200  # the line that counts the rest, beyond the share
        if left:  # the oldest are kept first: what failed, how it was routed
            assert counted > 0 and line(all_[0]) in earlier
            assert sum(line(e) in earlier for e in all_[:FIRST_KEPT]) >= 1
    assert text.count("<details>") == text.count("</details>")


def test_a_status_comment_with_thousands_of_events_stays_within_githubs_limit() -> None:
    from dataclasses import replace

    from bot.words.github_limits import BODY_LIMIT
    from bot.words.status_comment import status_comment

    view = every_state()[State.CLOSED].view
    many = [*view.timeline[:3], *entries(5000, "y" * 100), *view.timeline[3:]]
    body = status_comment(replace(view, timeline=many))
    assert len(body) <= BODY_LIMIT
    assert "<summary>5,004 earlier events</summary>" in body
    assert "questbot saw check tests failed" in body  # the failure is kept, first
    assert "more events, left out to keep this comment within GitHub's size limit" in body
    assert "the watch after the merge ended clean" in body  # and the newest
    assert leaks(body) == []
