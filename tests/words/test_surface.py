"""The guard on what people read (``tests.words.surface``) knows seed 003's names too: the
reviewer roles questbot runs itself, its effects and outcomes, and where it keeps things."""

from __future__ import annotations

from tests.words.surface import problems, words_problems


def test_the_guard_finds_the_reviewers_effects_outcomes_and_store_keys() -> None:
    for text in ("the consolidation_reviewer kept it", "reflection\\_reviewer passed it",
                 "then notify_inbox", "its reply_comment was lost",
                 "the claim_owner decides", "see q:{q1}:outbox"):
        assert problems(text) != [], text


def test_the_guard_leaves_words_and_the_roles_a_maintainer_types_alone() -> None:
    for text in ("the reflection reviewer passed it", "ended badly",
                 "`python -m bot review request q1 --role design_reviewer`"):
        assert problems(text) == [], text


def test_the_guard_finds_the_jargon_digests_and_ids_issue_24_took_out() -> None:
    """Each of these was on GitHub once (issue 24): they cannot come back."""
    for text in ("waiting for the rollback receipt", "its seal is current", "Sealed as before",
                 "A signal arrived.", "the proof digest",
                 "its evidence is on record and fixed as `fdd8f5f60e10`",
                 "### questbot quest `q1f38d17fd2`: `check tests failed`",
                 "<details><summary>quest q1f38d17fd2</summary>"):
        assert words_problems(text) != [], text
        assert problems(text, commits=()) != [], text


def test_the_guard_finds_a_quest_named_by_its_id_where_people_look_for_what_it_is() -> None:
    """The old ``/status`` reply, inbox entry and first commit (issue 24, item 3)."""
    for text in ("Quest `q1f38d17fd2`, revision 1: checkpoint A is open.",
                 "Quest `q-7`, revision 2: the quest has ended.",
                 "- #7 `check tests failed`, quest `q-7`: checkpoint A is open.",
                 "- [ ] <!-- questbot:inbox-entry=q-8 --> #8 `x`, quest `q-8`: parked.",
                 "Start questbot quest q1f38d17fd2\n\ncheck tests failed"):
        assert words_problems(text) != [], text
    for text in ("**Now:** Checkpoint A is open: the hypothesis waits for a decision.",
                 "- #7 **check tests failed**: checkpoint A is open.",
                 "questbot: start work on the failing `tests` check",
                 "a lesson (quest `q-0`, landed, then rolled back after a regression)"):
        assert words_problems(text) == [], text


def test_the_guard_leaves_commits_links_code_and_commands_alone() -> None:
    commit = "4f1c2a9e0b7d4c3a2f1e0d9c8b7a6f5e4d3c2b1a"
    for text in (f"merged as `{commit[:12]}`", "[`fdd8f5f60e10`](https://github.com/o/r/pull/1)",
                 "```text\nkilled by signal 9\n```", "it printed `SIGNAL 9`",
                 "`/approve A` on quest q1f38d17fd2", "### questbot: check tests failed"):
        assert words_problems(text, [commit]) == [], text
