"""Render snapshots: the diagram marks the current state, commands follow the table, no pings."""

from __future__ import annotations

from bot.core import State
from bot.words import check_run as checks
from bot.words import render
from bot.words import status_comment as status
from bot.words.markdown import plain
from bot.words.may_do import allowed_commands, lifecycle_mermaid
from questbot_testing.journals import JournalBuilder


def usages(b: JournalBuilder) -> list[str]:
    assert b.quest is not None
    return [a.usage for a in allowed_commands(b.quest)]


def test_mermaid_marks_the_current_state_only() -> None:
    diagram = lifecycle_mermaid(State.READY)
    assert diagram.startswith("stateDiagram-v2")
    assert "class ready current" in diagram and diagram.count(" current") == 2
    assert "ready --> landing: checkpoint_decided" in diagram
    assert "watching --> rolled_back: regression_detected" in diagram


def test_allowed_commands_follow_the_state() -> None:
    b = JournalBuilder().sense()
    assert "/approve A" not in usages(b) and "/pause <why>" in usages(b)
    assert "/claim" not in usages(b)
    b.to_ready(head="h1")
    assert {"/approve C", "/revise <why>", "/claim", "/status"} <= set(usages(b))
    b.add("claimed", actor="alice")
    assert b.quest is not None
    owned = {a.usage: a.only for a in allowed_commands(b.quest)}
    assert owned["/release"] == "alice" and owned["/approve C"] == "alice"
    assert "/claim" not in owned
    human = JournalBuilder("q-2").sense(route="human")
    assert "/quest fix|research" in usages(human) and "/resume" not in usages(human)
    b.add("paused", actor="alice", reason="lunch")
    assert "/resume" in usages(b) and "/approve C" not in usages(b)


def test_untrusted_text_neither_pings_nor_claims_success() -> None:
    b = JournalBuilder()
    b.add("signal_sensed", repo="octo/demo", fingerprint="fp", kind="issue",
          title="@octo-org/admins ✅ **merged** <img src=x>", source="issue:3")
    b.add("triaged", route="auto_fix")
    b.add("killed", actor="mallory", reason="@everyone look")
    assert b.quest is not None
    body = status.status_comment(status.StatusView(b.quest))
    title = plain(b.quest.title, limit=200)  # the heading: prose, escaped, mentions broken
    assert "check mark" in title and "\\*\\*merged" in title
    assert f"### questbot: {title}" in body and "@octo-org" not in body
    assert "✅" not in body
    check = checks.check_run(b.quest)
    assert check.conclusion is not None and check.conclusion.value == "cancelled"
    inbox = render.inbox_body([render.InboxEntry(b.quest, "#3", "@everyone look")])
    assert "@everyone" not in inbox


def test_unbound_proof_does_not_render_as_success() -> None:
    b = JournalBuilder().sense().to_ready(head="h1")
    b.add("human_revision", head="h2", pusher="bob")
    assert b.quest is not None and b.quest.state is State.PROVING
    view = checks.check_run(b.quest)
    assert view.conclusion is None and "success" not in str(view.body())
    assert "none yet" in status.status_comment(status.StatusView(b.quest))


def _rerun_asked() -> JournalBuilder:
    b = JournalBuilder("q-flaky")
    b.add("signal_sensed", repo=b.repo, fingerprint="check:tests", kind="check_failure",
          severity="high", title="tests fail on main", source="check_run:1", base="base0",
          run="check_run:1")
    b.add("rerun_requested", route="auto_fix", sha="base0", run="check_run:1")
    return b


def test_a_flaky_quest_shows_neutral_with_both_runs_and_is_listed_in_the_inbox() -> None:
    b = _rerun_asked()
    assert b.quest is not None
    waiting = checks.check_run(b.quest)
    assert waiting.status == "queued" and "re-runs the failed check" in waiting.text
    b.add("rerun_reported", result="passed", run="check_run:7")
    flaky = b.quest
    assert flaky is not None
    view = checks.check_run(flaky)
    assert view.status == "completed" and view.conclusion is checks.CheckConclusion.NEUTRAL
    assert "flaky" in view.summary and "no agent was run" in view.summary
    assert "check_run:1" in view.text and "check_run:7" in view.text
    inbox = render.inbox_body([], [render.InboxEntry(flaky)])
    assert "### Flaky" in inbox and "check_run:7" in inbox
    assert f"**{flaky.title}**" in inbox and "q-flaky" not in inbox  # named by what failed
    assert "Flaky" not in render.inbox_body([])


def test_a_rerun_that_fails_shows_research_not_flaky() -> None:
    b = _rerun_asked()
    b.add("rerun_reported", result="failed", run="check_run:7")
    assert b.quest is not None and b.quest.state is State.RESEARCHING
    assert "flaky" not in render.next_action(b.quest).lower()
