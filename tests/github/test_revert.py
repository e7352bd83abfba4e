"""The revert tree undoes exactly the quest's changes and keeps what others merged."""

from __future__ import annotations

from bot.github.revert import revert_entries


def test_revert_undoes_the_quest_diff_and_keeps_other_changes() -> None:
    base = {"pager.py": "b1", "README.md": "r1", "old.py": "o1"}
    head = {"pager.py": "b2", "README.md": "r1", "tests/test_new.py": "t1"}  # old.py removed
    merged = {"pager.py": "b2", "README.md": "r2", "tests/test_new.py": "t1", "other.py": "x"}
    assert revert_entries(base, head, merged) == {
        "pager.py": "b1",  # changed by the quest: back to the base
        "old.py": "o1",  # removed by the quest: restored
        "README.md": "r2",  # changed by someone else since: kept
        "other.py": "x",  # added by someone else: kept
    }  # tests/test_new.py, added by the quest, is gone


def test_revert_of_a_quest_that_changed_nothing_is_the_merge() -> None:
    files = {"a": "1"}
    assert revert_entries(files, files, {"a": "1", "b": "2"}) == {"a": "1", "b": "2"}
