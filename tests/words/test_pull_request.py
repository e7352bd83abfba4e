"""The quest's pull request title and description at every state, as snapshots, and what they
promise whatever the quest holds: a title on one line within its limit, saying what failed and
then what questbot thinks; a description within GitHub's limit, with no internal identifier and
no host path; the hypothesis and the plan quoted, inert; and text that changes at checkpoints,
not at every state a quest passes through.

Snapshots are in ``tests/words/snapshots/pull-<state>.md``; regenerate them after a meant change
with ``UPDATE_SNAPSHOTS=1 python -m pytest tests/words/test_pull_request.py``.
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot.core import Quest, State
from bot.core.events import SignalKind
from bot.core.proof import CheckRecord
from bot.words import pull_request as pr
from bot.words.github_limits import BODY_LIMIT
from tests.words.status_scenarios import FAILED, PULL, every_state
from tests.words.surface import problems
from tests.words.test_status_comment import snapshot

STATES = every_state()
REPO_URL = "https://github.com/octo/demo"


def view_at(state: State) -> pr.PullView:
    at = STATES[state]
    return pr.PullView(at.quest, FAILED, at.view.evidence, PULL)


def markdown(view: pr.PullView) -> str:
    return f"# {pr.pull_title(view)}\n\n{pr.pull_body(view)}"


@pytest.mark.parametrize("state", list(State), ids=lambda s: s.value)
def test_the_pull_request_at_each_state_matches_its_snapshot(state: State) -> None:
    snapshot(f"pull-{state.value.replace('_', '-')}.md", markdown(view_at(state)))
    assert problems(markdown(view_at(state)), commits=()) == []


@pytest.mark.parametrize("state", list(State), ids=lambda s: s.value)
def test_no_internal_identifier_or_host_path_is_shown(state: State) -> None:
    assert problems(markdown(view_at(state))) == []


def test_the_title_says_what_failed_then_what_questbot_thinks() -> None:
    before = pr.pull_title(view_at(State.RESEARCHING))
    after = pr.pull_title(view_at(State.HYPOTHESISED))
    assert not before.lower().startswith("questbot")
    assert STATES[State.RESEARCHING].quest.title.lower() in before.lower()
    assert "base0"[:7] in before  # the commit it failed on: two quests of a check read apart
    hypothesis = STATES[State.HYPOTHESISED].quest.hypothesis
    assert hypothesis is not None
    assert " — " in after and hypothesis.split()[0] in after
    assert after.startswith(before)


def test_the_description_tells_the_story_at_each_checkpoint() -> None:
    researching = pr.pull_body(view_at(State.RESEARCHING))
    assert "Not known yet" in researching and "Nothing yet: questbot is researching" in researching
    assert "[the failed check](https://github.com/octo/demo/runs/11)" in researching
    a = pr.pull_body(view_at(State.HYPOTHESISED))
    thinks = a.split("### What questbot thinks", 1)[1].split("###", 1)[0].strip()
    assert thinks.startswith("> ") and "`" not in thinks  # a quote a person reads, no chip
    assert "rounds down" in thinks
    assert "**Checkpoint A — the hypothesis.**" in a and "`/approve A`" in a
    b = pr.pull_body(view_at(State.PLANNED))
    assert "**Checkpoint B — the plan.**" in b and "None yet: a plan" not in b
    c = pr.pull_body(view_at(State.READY))
    assert "**Checkpoint C — the change.**" in c and f"{PULL}/files" in c
    assert "none yet for this revision" not in c
    closed = pr.pull_body(view_at(State.CLOSED))
    assert "the fix is merged" in closed and "`/approve" not in closed


def test_the_text_changes_at_checkpoints_not_at_every_state() -> None:
    """Each state's text, in the main line's order: a new text only where a checkpoint's
    facts arrive (the hypothesis, the plan, the change and its proof, the merge), so the
    pull request is written a few times per quest, not once per event."""
    line = [State.RESEARCHING, State.HYPOTHESISED, State.REPRODUCING, State.PLANNED,
            State.PATCHING, State.PROVING, State.READY, State.LANDING, State.WATCHING,
            State.CLOSED]
    texts = [markdown(view_at(s)) for s in line]
    changes = [s.value for s, before, after in zip(line[1:], texts[:-1], texts[1:], strict=True)
               if before != after]
    assert changes == ["hypothesised", "planned", "ready", "watching"]


def test_a_regression_links_the_earlier_fix_and_where_it_came_back() -> None:
    base = view_at(State.RESEARCHING)
    quest = base.quest.evolve({"revision": 2})
    earlier = pr.EarlierFix(pull_number=3, pull_url=f"{REPO_URL}/pull/3",
                            merge_sha="m" * 40, back_on="b" * 40, repo_url=REPO_URL)
    view = replace(base, quest=quest, earlier=earlier)
    body = pr.pull_body(view)
    assert pr.pull_title(view).startswith("Regression: ")
    assert f"[#3]({REPO_URL}/pull/3)" in body
    assert f"[mmmmmmm]({REPO_URL}/commit/{'m' * 40})" in body
    assert f"[bbbbbbb]({REPO_URL}/commit/{'b' * 40})" in body
    assert f"({REPO_URL}/compare/{'m' * 40}...{'b' * 40})" in body
    assert "This failure came back" not in pr.pull_body(base)


def test_an_issue_quest_is_titled_by_its_issue() -> None:
    base = view_at(State.RESEARCHING)
    quest = base.quest.evolve({"kind": SignalKind.ISSUE, "title": "the last page is missing"})
    assert pr.pull_title(replace(base, quest=quest)) == "Fix the last page is missing"


@given(st.text(max_size=600), st.text(max_size=3000), st.text(max_size=3000))
def test_any_outside_text_stays_within_limits_and_inert(title: str, hypothesis: str,
                                                         plan: str) -> None:
    base = view_at(State.PLANNED)
    quest: Quest = base.quest.evolve({"title": title, "hypothesis": hypothesis or None,
                                      "plan": plan or None})
    view = replace(base, quest=quest, evidence=None)
    shown = pr.pull_title(view)
    assert len(shown) <= pr.TITLE_LIMIT and "\n" not in shown and "\r" not in shown
    assert not any(ord(c) < 32 or 0x7f <= ord(c) < 0xa0 for c in shown)
    body = pr.pull_body(view)
    assert len(body) <= BODY_LIMIT
    for line in body.split("### The plan", 1)[1].split("###", 1)[0].strip().splitlines():
        assert line.startswith(">") or line.startswith("None yet")


def test_the_revert_says_what_it_undoes_in_words_and_closes_nothing() -> None:
    quest = STATES[State.ROLLED_BACK].quest.evolve({"title": "Fixes #1 for @octo-org/admins"})
    title = pr.revert_title(quest)
    assert title.startswith("Revert the fix for ") and title.endswith("the failure came back")
    assert quest.id not in title and problems("# " + title, commits=()) == []
    message = pr.revert_message(quest, "merge1abcdef012")
    assert message.startswith("Revert merge1abcdef: ") and "#1" not in message
    assert "@octo-org" not in message and "#1" not in title
    body = pr.revert_body("merge1abcdef012")
    assert "`merge1abcdef`" in body and problems(body, commits=()) == []


def test_the_proof_reads_as_a_sentence_whatever_it_found() -> None:
    """Under "The proof" the description says where the proof ran and what it found in a
    sentence of its own (issue 24, item 3), not a fragment after a missing label."""
    view = view_at(State.READY)
    assert view.evidence is not None
    one = view.evidence.checks[0]
    failing = one.model_copy(update={"name": "lint", "exit_code": 1})

    def with_checks(*checks: CheckRecord, confirmed: bool = True) -> str:
        ev = view.evidence
        assert ev is not None and ev.reproduction is not None
        result = ev.result.model_copy(update={"checks": checks})
        repro = ev.reproduction.model_copy(update={"head_exit_code": 0 if confirmed else 1})
        shown = pr.pull_body(replace(view, evidence=ev.model_copy(
            update={"result": result, "reproduction": repro})))
        return shown.split("### The proof\n\n", 1)[1].split("\n", 1)[0]

    head = f"`{view.quest.head and view.quest.head[:12]}`"
    assert with_checks(one) == (f"On the fix as it is now ({head}), your one check passed, and "
                                "the new test fails on the base and passes with the fix.")
    assert with_checks(one, one).startswith(f"On the fix as it is now ({head}), all 2 of "
                                             "your checks passed, and")
    assert "1 of your 2 checks passed, but the new test does not show the fix." in \
        with_checks(one, failing, confirmed=False)
    for sentence in (with_checks(one), with_checks(one, failing), with_checks()):
        assert sentence[:1].isupper() and sentence.endswith(".")
        assert "reproduction" not in sentence
        assert problems(sentence, commits=[view.quest.head or ""]) == []
