"""Choosing the merge method and reading GitHub's merge refusals (``bot.pulls.landing``); the
flows themselves run end to end in ``tests/e2e/test_landing.py``."""

from __future__ import annotations

import pytest

from bot.github.forge import RepoInfo
from bot.pulls.landing import MethodRefused, choose, refusal_kind
from bot.settings.repository.schema import MergeMethod

ALL = RepoInfo(("merge", "squash", "rebase"))
SQUASH_ONLY = RepoInfo(("squash",))


def test_the_repository_decides_unless_the_settings_choose() -> None:
    assert choose(None, ALL, "o/r") == "merge"
    assert choose(None, SQUASH_ONLY, "o/r") == "squash"
    assert choose(None, RepoInfo(("rebase",)), "o/r") == "rebase"
    assert choose(MergeMethod.REBASE, ALL, "o/r") == "rebase"


def test_a_chosen_method_the_repository_forbids_is_said_in_peoples_words() -> None:
    with pytest.raises(MethodRefused) as caught:
        choose(MergeMethod.MERGE, SQUASH_ONLY, "octo/sample")
    message = str(caught.value)
    assert "`merge_method: merge`" in message and "octo/sample" in message
    assert "it allows squash merging" in message and "/resume the quest" in message
    assert "405" not in message


def test_linear_history_rules_out_merge_commits() -> None:
    assert choose(None, ALL, "o/r", avoid=frozenset({"merge"})) == "squash"
    with pytest.raises(MethodRefused, match="requires linear history"):
        choose(MergeMethod.MERGE, ALL, "o/r", avoid=frozenset({"merge"}))
    with pytest.raises(MethodRefused, match="allow squash or rebase"):
        choose(None, RepoInfo(("merge",)), "o/r", avoid=frozenset({"merge"}))


def test_repository_info_reads_githubs_flags_and_defaults() -> None:
    assert RepoInfo.of({}) == RepoInfo(("merge", "squash", "rebase"), False)
    assert RepoInfo.of({"allow_merge_commit": False, "allow_rebase_merge": False,
                        "allow_auto_merge": True}) == RepoInfo(("squash",), True)


@pytest.mark.parametrize(("message", "kind"), [
    ("Merge commits are not allowed on this repository.", "method"),
    ("Squash merges are not allowed on this repository.", "method"),
    ("This branch must not contain merge commits.", "linear"),
    ("Changes must be made through the merge queue", "queue"),
    ("At least 1 approving review is required by reviewers with write access.", "review"),
    ('Required status check "tests" is expected.', "checks"),
    ("Repository rule violations found\n\nRequired status check \"tests\" is expected.",
     "checks"),
    ("Base branch was modified. Review and try the merge again.", "base"),
    ("Pull Request is not mergeable", "other"),
])
def test_each_405_names_its_rule(message: str, kind: str) -> None:
    """BEHAVIOUR §5's messages, as GitHub words them."""
    assert refusal_kind(message) == kind
