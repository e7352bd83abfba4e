"""The quest branch's first commit says in words what the work is for (issue 24, item 3):
"questbot: start work on the failing `tests` check", not "Start questbot quest q…"."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from bot.core import State
from bot.core.events import SignalKind
from bot.words.commits import first_commit_message, work_words
from tests.core.quests import quest_in
from tests.words.surface import QUEST_ID, problems


def test_a_failing_check_is_named_as_a_person_reads_it() -> None:
    quest = quest_in(State.RESEARCHING).evolve({"fingerprint": "check:tests",
                                                "title": "check tests failed"})
    message = first_commit_message(quest)
    subject, _, body = message.partition("\n\n")
    assert subject == "questbot: start work on the failing `tests` check"
    assert "changes no file" in body and message.endswith("\n")
    assert quest.id not in message and not QUEST_ID.search(message)
    assert problems(message, commits=()) == []


def test_workflows_suites_and_issues() -> None:
    base = quest_in(State.RESEARCHING)
    said = {fp: work_words(base.evolve({"fingerprint": fp, "title": title,
                                        "kind": SignalKind.ISSUE if fp.startswith("issue")
                                        else SignalKind.CHECK_FAILURE}))
            for fp, title in (("workflow:ci", "workflow ci failed"),
                              ("suite:build", "check suite build failed"),
                              ("issue:12", "the last page is missing"),
                              ("issue:13", "issue #13"))}
    assert said == {"workflow:ci": "the failing `ci` workflow",
                    "suite:build": "the failing `build` check suite",
                    "issue:12": "issue 12: the last page is missing",
                    "issue:13": "issue 13"}


@given(name=st.text(max_size=300), title=st.text(max_size=300))
def test_any_name_or_title_makes_one_inert_subject_line(name: str, title: str) -> None:
    """Names and titles are other people's text: whatever they hold, the subject is one
    line, mentions and issue references are broken, and the quest's id never appears."""
    quest = quest_in(State.RESEARCHING).evolve({"fingerprint": f"check:{name}",
                                                "title": title})
    subject = first_commit_message(quest).split("\n\n", 1)[0]
    assert "\n" not in subject and subject.startswith("questbot: start work on ")
    assert quest.id not in subject or quest.id in name or quest.id in title
    assert not re.search(r"@[A-Za-z0-9]|#\d", subject)  # no mention, no issue reference
