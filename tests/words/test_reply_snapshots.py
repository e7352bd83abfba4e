"""The inbox issue and the replies to commands, as snapshots (with the status comment, the
check run and the pull request in ``tests/words/snapshots/``): every body questbot writes,
compared exactly, and held to the guard on what people read (``tests.words.surface``).
``UPDATE_SNAPSHOTS=1`` regenerates them; look at the diff first."""

from __future__ import annotations

import pytest

from bot.commands.replies import reply_body, status_text
from bot.core import InvalidTransition, Policy, State, step
from bot.core.policy import Checkpoint
from bot.words.commands import Command, CommandName
from bot.words.refusals import refusal_words
from bot.words.render import InboxEntry, inbox_body
from tests.words.status_scenarios import every_state
from tests.words.surface import problems
from tests.words.test_refusals import event_for
from tests.words.test_status_comment import snapshot

STATES = every_state()


def inbox() -> str:
    """The inbox with a quest at each kind of wait: a checkpoint, a pause, a claimed review."""
    entries = [InboxEntry(STATES[State.HYPOTHESISED].quest, "#7"),
               InboxEntry(STATES[State.PARKED].quest.evolve({"id": "q-8"}), "#8",
                          "paused by a person: lunch"),
               InboxEntry(STATES[State.HANDED_OFF].quest.evolve({"id": "q-9"}), "#9")]
    return inbox_body(entries, agreement=(3, 4))


def refused() -> str:
    """``/approve C`` while the quest waits at checkpoint A: the core refuses, in words."""
    quest = STATES[State.HYPOTHESISED].quest
    command = Command(name=CommandName.APPROVE, checkpoint=Checkpoint.C, line=1)
    try:
        step(quest, event_for(command, quest, "bob"), Policy())
    except InvalidTransition as exc:
        return reply_body(refusal_words(command, quest, exc.code, actor="bob"), "k")
    raise AssertionError("the core took /approve C at checkpoint A")


BODIES = {
    "inbox.md": inbox,
    "inbox-empty.md": lambda: inbox_body([]),
    "reply-status-hypothesised.md": lambda: reply_body(
        status_text(STATES[State.HYPOTHESISED].quest), "k"),
    "reply-status-parked.md": lambda: reply_body(status_text(STATES[State.PARKED].quest), "k"),
    "reply-status-closed.md": lambda: reply_body(status_text(STATES[State.CLOSED].quest), "k"),
    "reply-status-no-quest.md": lambda: reply_body(status_text(None), "k"),
    "reply-refused.md": refused,
}


@pytest.mark.parametrize("name", sorted(BODIES))
def test_the_inbox_and_the_replies_match_their_snapshots(name: str) -> None:
    body = BODIES[name]()
    snapshot(name, body)
    assert problems(body, commits=()) == []
