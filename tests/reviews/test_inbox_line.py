"""The inbox's line on how often automatic reviews agreed with people."""

from __future__ import annotations

from bot.words import render


def test_the_inbox_says_how_often_automatic_reviews_agreed() -> None:
    body = render.inbox_body([], agreement=(3, 4))
    assert "Automatic reviews agreed with people's decisions 3 of 4 times" in body
    assert "_" not in body.split("Automatic reviews")[1].split("\n")[0]  # no identifiers


def test_no_line_before_anything_was_compared() -> None:
    assert "Automatic reviews" not in render.inbox_body([], agreement=(0, 0))
    assert render.inbox_body([]) == render.inbox_body([], agreement=(0, 0))


def test_one_comparison_is_said_in_the_singular() -> None:
    assert "decisions 1 of 1 time. Make" in render.inbox_body([], agreement=(1, 1))
    assert "decisions 0 of 1 time. Make" in render.inbox_body([], agreement=(0, 1))


def test_the_line_has_a_heading_of_its_own_not_the_flaky_quests_one() -> None:
    body = render.inbox_body([], agreement=(3, 4))
    above = body.split("Automatic reviews agreed")[0].rstrip("\n").split("\n")
    assert above[-1] == "### Automatic reviews"
