"""The guard on what people read (``tests.words.surface``) knows seed 003's names too: the
reviewer roles questbot runs itself, its effects and outcomes, and where it keeps things."""

from __future__ import annotations

from tests.words.surface import problems


def test_the_guard_finds_the_reviewers_effects_outcomes_and_store_keys() -> None:
    for text in ("the consolidation_reviewer kept it", "reflection\\_reviewer passed it",
                 "then notify_inbox", "its reply_comment was lost",
                 "the claim_owner decides", "see q:{q1}:outbox"):
        assert problems(text) != [], text


def test_the_guard_leaves_words_and_the_roles_a_maintainer_types_alone() -> None:
    for text in ("the reflection reviewer passed it", "ended badly",
                 "`python -m bot review request q1 --role design_reviewer`"):
        assert problems(text) == [], text
