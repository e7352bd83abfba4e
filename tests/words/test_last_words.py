"""The status comment's fold of what the model said last when a stage failed: the model's words
are untrusted, so they are shown inert — in a fence longer than any inside, no mention, no
HTML, no heading — whatever they hold."""

from __future__ import annotations

import re
from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st

from bot.core import State
from bot.words import status_comment as status
from tests.words.status_scenarios import every_state
from tests.words.surface import problems

PARKED = every_state()[State.PARKED].view
FOLD = re.compile(r"<details><summary>What the model (.*?)</summary>\n\n(.*?)\n\n</details>",
                  re.S)


def fold(view: status.StatusView) -> tuple[str, str]:
    found = FOLD.search(status.status_comment(view))
    assert found is not None
    return found.group(1), found.group(2)


def test_no_fold_without_last_words() -> None:
    assert "What the model" not in status.status_comment(PARKED)


def test_the_fold_shows_the_models_words_and_where_the_rest_is() -> None:
    said = status.LastWords(stage="research", text="To understand why `page_count(10, 3)` "
                            "returns 3, we need to analyze…")
    summary, body = fold(replace(PARKED, last_words=said))
    assert summary == "said last (research)"
    assert body.startswith("```text\nTo understand why `page_count(10, 3)` returns 3")
    assert f"`questbot transcript {PARKED.quest.id} --stage research`" in body
    assert problems(status.status_comment(replace(PARKED, last_words=said))) == []


def test_a_call_is_named_as_a_call() -> None:
    said = status.LastWords(stage="patch", text='{"path": "pager.py"}', tool="read_file")
    summary, body = fold(replace(PARKED, last_words=said))
    assert summary == "called read_file last (patch)"
    assert '```text\n{"path": "pager.py"}\n```' in body


hostile = st.lists(st.sampled_from(["```", "````", "\n", "@org/team", "@alice", "<details>",
                                    "</details>", "<img src=x onerror=alert(1)>", "# Heading",
                                    "\x1b[2J", "\u202e", "✅ verified", "</summary>", " "])
                   | st.text(max_size=40), max_size=30).map("".join)


@settings(max_examples=200, deadline=None)
@given(text=hostile, tool=st.none() | hostile)
def test_whatever_the_model_wrote_stays_inert(text: str, tool: str | None) -> None:
    body = status.status_comment(replace(PARKED, last_words=status.LastWords(
        stage="research", text=text, tool=tool)))
    start = body.index("<details><summary>What the model")
    summary_end = body.index("</summary>", start)
    summary = body[start:summary_end]
    assert "<" not in summary[len("<details><summary>"):] and "@" + "a" not in summary
    fence_open = body.index("\n", summary_end + len("</summary>\n\n"))
    opener = body[summary_end + len("</summary>\n\n"):fence_open]
    fence = opener.removesuffix("text")
    assert set(fence) == {"`"} and len(fence) >= 3
    close = body.index("\n" + fence + "\n", fence_open)
    inside = body[fence_open + 1:close]
    assert fence not in inside  # nothing in it closes the block early
    assert "\x1b" not in inside and "\u202e" not in inside and "✅" not in inside
    after = body[close:]
    assert after.index("</details>") < after.index("<details>") if "<details>" in after \
        else "</details>" in after
