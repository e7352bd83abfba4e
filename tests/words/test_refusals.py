"""Refusals in people's words: every command in every state, refused the way the core refuses
it, gets a reply that names the command, says why without the table's identifiers, and says
what to do next — only commands the quest would take."""

from __future__ import annotations

import re
from datetime import UTC, datetime

from hypothesis import given, settings
from hypothesis import strategies as st

from bot.core import InvalidTransition, Policy, Quest, Refusal, State, step
from bot.core.events import (
    CheckpointDecided,
    Claimed,
    Event,
    Killed,
    Paused,
    Released,
    Resumed,
    Triaged,
)
from bot.core.policy import Checkpoint
from bot.core.quest import Outcome, ParkReason
from bot.core.states import CHECKPOINT_AT
from bot.words.commands import USAGE, Command, CommandName, QuestMode, parse_commands, render
from bot.words.refusals import EVENT_OF, Precheck, now_commands, refusal_words
from tests.core.quests import quest_in

AT = datetime(2026, 1, 1, tzinfo=UTC)
SNAKE = re.compile(r"[A-Za-z0-9]+_[A-Za-z0-9_]+")
CODE = re.compile(r"`([^`]+)`")


def _variants() -> list[Quest]:
    quests = [quest_in(s) for s in State]
    parked = quest_in(State.PARKED)
    quests += [parked.evolve({"park_reason": r}) for r in ParkReason]
    ended = quest_in(State.ABANDONED)
    quests += [ended.evolve({"outcome": o}) for o in Outcome]
    ready = quest_in(State.READY)
    quests.append(ready.evolve({"state": State.HANDED_OFF, "owner": "alice",
                                "claimed_from": State.READY}))
    quests.append(ready.evolve({"head_pusher": "maintainer"}))
    return quests


QUESTS = _variants()

commands = st.one_of(
    st.builds(lambda cp: Command(name=CommandName.APPROVE, checkpoint=cp, line=1),
              st.none() | st.sampled_from(list(Checkpoint))),
    st.builds(lambda n: Command(name=n, reason="not now", line=1),
              st.sampled_from([CommandName.REVISE, CommandName.REJECT, CommandName.PAUSE,
                               CommandName.KILL])),
    st.builds(lambda n: Command(name=n, line=1),
              st.sampled_from([CommandName.CLAIM, CommandName.RELEASE, CommandName.RESUME])),
    st.builds(lambda m: Command(name=CommandName.QUEST, mode=m, line=1),
              st.sampled_from(list(QuestMode))),
)


def event_for(command: Command, quest: Quest, actor: str) -> Event:
    """What intake makes of a command (``bot.commands.events.command_event``)."""
    kw = {"id": "e-1", "quest_id": quest.id, "at": AT, "actor": actor}
    name = command.name
    if name in (CommandName.APPROVE, CommandName.REVISE, CommandName.REJECT):
        checkpoint = command.checkpoint or CHECKPOINT_AT.get(quest.checkpoint_state, Checkpoint.A)
        return CheckpointDecided(**kw, checkpoint=checkpoint, verdict=name.value,
                                 reason=command.reason or "")
    if name is CommandName.QUEST:
        return Triaged(**kw, route="research_only" if command.mode == "research" else "auto_fix")
    if name is CommandName.PAUSE:
        return Paused(**kw, reason=command.reason or "")
    if name is CommandName.KILL:
        return Killed(**kw, reason=command.reason or "")
    return {CommandName.CLAIM: Claimed, CommandName.RELEASE: Released,
            CommandName.RESUME: Resumed}[name](**kw)


def check_words(text: str, command: Command, quest: Quest | None, actor: str,
                button: bool = False) -> None:
    assert not SNAKE.search(text), text
    named = (f"**{command.name.value.capitalize()}** on the `questbot` check run" if button
             else f"`{render(command)}`")
    assert named in text
    assert text.startswith(f"@{actor} ")
    spans = [s for s in CODE.findall(text) if s.startswith("/")]
    assert len(spans) >= 2 - button, f"says nothing to do next: {text}"  # the command, a way on
    for span in spans:  # every command it shows is one questbot reads
        assert parse_commands(span.replace("<why>", "x").replace("[A|B|C]", "")), span
    if quest is not None:
        now = now_commands(quest, actor)
        assert now[-1] == USAGE[CommandName.STATUS]


@settings(max_examples=400, deadline=None)
@given(commands, st.sampled_from(QUESTS), st.sampled_from(["maintainer", "alice", "bob"]))
def test_every_refusal_the_core_makes_is_told_in_words(command: Command, quest: Quest,
                                                       actor: str) -> None:
    try:
        step(quest, event_for(command, quest, actor), Policy())
    except InvalidTransition as exc:
        check_words(refusal_words(command, quest, exc.code, actor=actor), command, quest,
                    actor)


@settings(max_examples=300, deadline=None)
@given(commands, st.none() | st.sampled_from(QUESTS),
       st.sampled_from([*Refusal, *Precheck, None]), st.booleans(), st.booleans())
def test_any_refusal_code_reads_in_words(command: Command, quest: Quest | None,
                                         why: Refusal | Precheck | None, on_pull: bool,
                                         button: bool) -> None:
    check_words(refusal_words(command, quest, why, actor="bob", on_pull=on_pull,
                              button=button), command, quest, "bob", button)


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(QUESTS), st.sampled_from(["maintainer", "alice", "bob"]))
def test_what_it_offers_now_the_core_takes(quest: Quest, actor: str) -> None:
    """Every command the reply offers is one ``step`` would apply from this person now."""
    for usage in now_commands(quest, actor)[:-1]:
        command = parse_commands(usage.replace("<why>", "because"))[0]
        assert isinstance(command, Command)
        assert EVENT_OF[command.name]
        step(quest, event_for(command, quest, actor), Policy())  # does not raise


def test_approve_while_proving_says_when_it_opens() -> None:
    quest = quest_in(State.PROVING)
    command = Command(name=CommandName.APPROVE, checkpoint=Checkpoint.C, line=1)
    try:
        step(quest, event_for(command, quest, "maintainer"), Policy())
    except InvalidTransition as exc:
        text = refusal_words(command, quest, exc.code, actor="maintainer")
    assert f"the proof of head `{(quest.head or '')[:7]}` is still running" in text
    assert "`/approve C` opens when it finishes" in text
    assert "`/pause <why>`" in text


def test_a_claimed_review_names_its_owner() -> None:
    ready = quest_in(State.READY)
    held = ready.evolve({"state": State.HANDED_OFF, "owner": "alice",
                         "claimed_from": State.READY})
    command = Command(name=CommandName.APPROVE, line=1)
    try:
        step(held, event_for(command, held, "bob"), Policy())
        raise AssertionError("bob's approval of alice's review was applied")
    except InvalidTransition as exc:
        assert exc.code is Refusal.CLAIMED
        text = refusal_words(command, held, exc.code, actor="bob")
    assert "@alice holds the review" in text and "`/release`" in text
