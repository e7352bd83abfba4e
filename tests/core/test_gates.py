"""Seed 003's ``status_and_next``: its gates, allowed actions and next action agree with what
the lifecycle does — on every state, on random journals, and on the shipped examples through
``python -m bot status``."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
import redis
import redis.asyncio
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.__main__ import main
from bot.core import (
    ANY_PERSON,
    EVENT_TYPES,
    InvalidTransition,
    Policy,
    Quest,
    State,
    accepts,
    step,
)
from bot.core.gates import PERSON_EVENTS, REQUIRED, Role, status_and_next
from bot.core.policy import Checkpoint, CheckpointMode
from bot.core.states import CHECKPOINT_AT, TERMINAL
from bot.core.table import TABLE
from bot.journal import Journal
from bot.tools.replay import read_journal, replay
from questbot_testing.journals import JournalBuilder
from tests.core.quests import builder_in, plausible

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
ADVISORY_B = Policy(checkpoints={Checkpoint.A: CheckpointMode(), Checkpoint.B:
                                 CheckpointMode(blocking=False), Checkpoint.C: CheckpointMode()})


def check_invariants(quest: Quest, policy: Policy) -> None:
    status = status_and_next(quest, policy)
    assert status.state is quest.state
    open_gates = [g for g in status.gates if g.position == "open"]
    at = CHECKPOINT_AT.get(quest.checkpoint_state)
    if at is not None and quest.state not in TERMINAL:
        # a gate is open only where its checkpoint is, and only with its evidence on record
        assert [g.name for g in open_gates] == [at]
        assert open_gates[0].satisfied, (quest.state, open_gates[0])
    else:
        assert open_gates == []
    for gate in status.gates:
        assert gate.required == REQUIRED[gate.name]
        assert set(gate.present) <= set(gate.required)
        assert gate.satisfied == (gate.present == gate.required)
        assert gate.blocking == policy.blocking(gate.name)
    for role, actions in status.allowed_actions.items():
        for action in actions:
            assert action.event in TABLE[quest.state]  # never an action the table lacks
            assert "_" not in action.says  # plain words, never an identifier
            actor = (None if role is Role.QUESTBOT
                     else quest.owner if role is Role.CLAIM_OWNER
                     or (role is Role.REVIEWER and quest.state is State.HANDED_OFF)
                     else ANY_PERSON)
            assert accepts(quest, action.event, actor)
    decides = [a.event for a in status.allowed_actions[Role.REVIEWER]]
    assert decides == (["checkpoint_decided"] if open_gates and accepts(
        quest, "checkpoint_decided", quest.owner or ANY_PERSON) else [])
    nxt = status.next_action
    assert (nxt.role is None) == (quest.state in TERMINAL)
    assert "_" not in nxt.says


@pytest.mark.parametrize("state", list(State))
@pytest.mark.parametrize("policy", [Policy(), ADVISORY_B, Policy(shadow=True)],
                         ids=["blocking", "advisory-B", "shadow"])
def test_every_state(state: State, policy: Policy) -> None:
    quest = builder_in(state, policy).quest
    assert quest is not None
    check_invariants(quest, policy)


@pytest.mark.parametrize("state", list(State))
def test_what_a_person_may_do_is_offered(state: State) -> None:
    """Completeness: every person's action ``step`` takes from a maintainer now is offered to
    the maintainer (or, on a claimed review, to its owner)."""
    b = builder_in(state)
    quest = b.quest
    assert quest is not None
    status = status_and_next(quest, b.policy)
    offered = {a.event for a in status.allowed_actions[Role.MAINTAINER]}
    offered |= {a.event for a in status.allowed_actions[Role.CLAIM_OWNER]}
    for event_type in PERSON_EVENTS:
        actor = quest.owner or "maintainer"
        try:
            taken = not step(quest, plausible(b, event_type, actor=actor), b.policy).absorbed
        except InvalidTransition:
            taken = False
        if taken:
            assert event_type in offered, (state, event_type)


def test_a_claim_moves_the_decision_to_its_owner() -> None:
    b = builder_in(State.PLANNED)
    b.add("claimed", actor="alice")
    assert b.quest is not None
    status = status_and_next(b.quest, b.policy)
    assert [a.event for a in status.allowed_actions[Role.MAINTAINER]] == ["human_revision"]
    owner = [a.event for a in status.allowed_actions[Role.CLAIM_OWNER]]
    assert "checkpoint_decided" in owner and "released" in owner
    assert status.next_action.role is Role.CLAIM_OWNER and "alice" in status.next_action.says
    assert [g.position for g in status.gates] == ["passed", "open", "ahead"]


def test_an_advisory_gate_says_a_review_may_pass_it() -> None:
    quest = builder_in(State.PLANNED, ADVISORY_B).quest
    assert quest is not None
    status = status_and_next(quest, ADVISORY_B)
    assert not status.gates[1].blocking and "advisory" in status.next_action.says
    blocking = status_and_next(quest, Policy())
    assert "a person decides checkpoint B" in blocking.next_action.says


@st.composite
def journals(draw: st.DrawFn) -> JournalBuilder:
    """A journal of plausible events, each taken only if the lifecycle takes it."""
    b = JournalBuilder("q-prop").sense()
    for _ in range(draw(st.integers(0, 30))):
        quest = b.quest
        assert quest is not None
        candidates = [t for t in EVENT_TYPES if t != "signal_sensed"
                      and accepts(quest, t, quest.owner or "maintainer")]
        if draw(st.integers(0, 9)) > 0:  # mostly onward: kill and pause end most walks early
            candidates = [t for t in candidates if t not in {"killed", "paused"}] or candidates
        if not candidates:
            break
        event_type = draw(st.sampled_from(sorted(candidates)))
        event = plausible(b, event_type, actor=quest.owner or "maintainer")
        try:
            step(quest, event, b.policy)
        except InvalidTransition:
            continue
        b.add(event_type, **{k: v for k, v in event.model_dump().items()
                             if k not in {"type", "id", "quest_id", "at"}})
    return b


@settings(max_examples=150)
@given(journals())
def test_random_journals(b: JournalBuilder) -> None:
    assert b.quest is not None
    check_invariants(b.quest, b.policy)


@pytest.mark.parametrize("name", sorted(p.name for p in EXAMPLES.glob("*.jsonl")))
def test_the_status_command_on_every_example(name: str,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["status", "--journal", str(EXAMPLES / name), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    quest = replay(read_journal(EXAMPLES / name), Policy()).quest
    assert quest is not None
    assert out["state"] == quest.state.value
    assert [(g["name"], g["satisfied"]) for g in out["gates"]] == [
        (g.name.value, g.satisfied) for g in status_and_next(quest, Policy()).gates]
    assert set(out["allowed_actions"]) == {r.value for r in Role}
    assert set(out["next_action"]) == {"role", "says"}
    assert main(["status", "--journal", str(EXAMPLES / name)]) == 0
    text = capsys.readouterr().out
    assert f"quest {quest.id}: {quest.state.value}" in text and "next:" in text


def test_the_status_command_reads_a_stored_quest(redis_sync: redis.Redis, redis_url: str,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    b = builder_in(State.READY, ADVISORY_B)

    async def store() -> None:
        client = redis.asyncio.Redis.from_url(redis_url)
        try:
            await Journal(client).apply_many(b.events, ADVISORY_B)
        finally:
            await client.aclose()

    asyncio.run(store())
    assert b.quest is not None
    assert main(["status", b.quest.id, "--redis", redis_url, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["state"] == "ready" and out["next_action"]["role"] == "reviewer"
    assert [g["blocking"] for g in out["gates"]] == [True, False, True]  # the recorded policy
    assert [g["position"] for g in out["gates"]] == ["passed", "passed", "open"]
    assert main(["status", "q-nothing", "--redis", redis_url]) == 2
    assert "no quest q-nothing" in capsys.readouterr().err


def test_every_park_reason_has_words() -> None:
    from bot.core.gates import PARKED_WORDS
    from bot.core.quest import ParkReason

    assert set(PARKED_WORDS) == set(ParkReason)
    assert all("_" not in words for words in PARKED_WORDS.values())
