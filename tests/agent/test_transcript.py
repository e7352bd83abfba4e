"""The stage's model conversation kept with the quest (issue 25, item 6): on every ending — an
answer, a failure, the endpoint giving up, the deadline — through the real ``start_agent``
adapter, the model agent over pydantic-ai and the SDK, and the recorded model server playing
a real server; and what is kept is bounded, redacted and inert whatever the model wrote.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import SecretStr

from bot.adapters import AdapterContext
from bot.agent import sandbox
from bot.agent.model import ModelEndpoint, Wire
from bot.agent.runs import agent_adapters
from bot.agent.transcript import (
    MAX_CHARS,
    TURN_CHARS,
    Ending,
    Kind,
    Recorder,
    StageTranscript,
    TranscriptStore,
    Turn,
    bounded,
    clean,
    keep_what_explains,
)
from bot.core import EffectType
from bot.journal.keys import transcript_key
from bot.journal.wire import RedisClient
from questbot_testing.modelserver import behaviours as b
from questbot_testing.modelserver.server import ModelServer, recorded
from tests.agent.conftest import Quests, StaticSettings, settings_for

KEY = "sk-live-transcript-test-key-0123456789"
Serve = Callable[..., Any]


@pytest.fixture
async def serve() -> AsyncIterator[Serve]:
    servers: list[ModelServer] = []

    async def start(behaviours: Sequence[b.Behaviour], *names: str) -> ModelServer:
        server = await ModelServer(recorded("openai", *names), behaviours=behaviours,
                                   substitutions={"PYTHON": sandbox.python()}).start()
        servers.append(server)
        return server

    yield start
    for server in servers:
        await server.close()
    for server in servers:
        server.assert_clean()


def endpoint(server: ModelServer, **fields: Any) -> ModelEndpoint:
    return ModelEndpoint(wire=Wire.OPENAI, url=f"{server.url}/v1", api_key=SecretStr(KEY),
                         model="gpt-4.1-mini", retry_wait_seconds=0.01, **fields)


async def research(ctx: AdapterContext, quests: Quests, settings: StaticSettings,
                   main_sha: str, model: ModelEndpoint) -> list[Any]:
    settings.value = settings_for(kind="model")
    events = await agent_adapters(ctx, model=model)[EffectType.START_AGENT](
        await quests.sense(main_sha))
    await quests.apply(list(events or ()))
    return list(events or ())


async def kept(ctx: AdapterContext) -> StageTranscript:
    (transcript,) = await TranscriptStore(ctx.journal.client).transcripts("q-1")
    return transcript


async def test_an_answered_stage_keeps_every_turn_in_order(
        ctx: AdapterContext, quests: Quests, settings: StaticSettings, main_sha: str,
        serve: Serve) -> None:
    server = await serve([], "research")
    events = await research(ctx, quests, settings, main_sha, endpoint(server))
    assert events[0].type == "hypothesis_written"
    t = await kept(ctx)
    assert (t.stage, t.revision, t.ended, t.elided) == ("research", 1, Ending.ANSWERED, 0)
    assert t.model == "gpt-4.1-mini"
    kinds = [turn.kind for turn in t.turns]
    assert kinds[0] is Kind.PROMPT and "stage: research;" in t.turns[0].text
    # the recorded conversation's first answer: its words, then its two calls and results
    assert t.turns[1] == Turn(kind=Kind.TEXT, text="I will look at the log and files.")
    assert [(x.kind, x.tool) for x in t.turns[2:4]] == [(Kind.CALL, "read_log"),
                                                       (Kind.CALL, "list_files")]
    assert {x.tool for x in t.turns if x.kind is Kind.RESULT} >= {"read_log", "list_files",
                                                                  "read_file"}
    assert t.last_said is not None and t.last_said.tool == "answer"
    assert KEY not in t.model_dump_json()


async def test_a_stage_answered_in_prose_keeps_what_the_model_said(
        ctx: AdapterContext, quests: Quests, settings: StaticSettings, main_sha: str,
        serve: Serve) -> None:
    server = await serve([b.AnswersInProse()], "research")
    events = await research(ctx, quests, settings, main_sha, endpoint(server))
    assert events[0].type == "agent_halted"
    t = await kept(ctx)
    assert t.ended is Ending.FAILED and "did not give a usable answer" in t.reason
    prose = b.fact("llamacpp-prose")["content"]
    said = [x for x in t.turns if x.kind is Kind.TEXT]
    assert len(said) == server.requests and all(x.text == prose for x in said)
    # between them, questbot's retries asking for a tool call
    assert any(x.kind is Kind.RETRY for x in t.turns)
    assert t.last_said == Turn(kind=Kind.TEXT, text=prose)


async def test_a_stage_the_endpoint_ended_keeps_the_conversation_until_then(
        ctx: AdapterContext, quests: Quests, settings: StaticSettings, main_sha: str,
        serve: Serve) -> None:
    server = await serve([b.Hang(answered=1)], "research")
    events = await research(ctx, quests, settings, main_sha,
                            endpoint(server, request_timeout_seconds=0.3, retries=0))
    assert [e.type for e in events] == ["agent_halted", "usage_recorded"]
    t = await kept(ctx)
    assert t.ended is Ending.ENDPOINT and "did not answer within 0.3 s" in t.reason
    assert t.last_said is not None and t.last_said.tool == "list_files"  # its first answer
    assert t.turns[-1].kind is Kind.RESULT  # the results it was sent, unanswered


async def test_a_stage_past_its_deadline_keeps_the_conversation_until_then(
        ctx: AdapterContext, quests: Quests, settings: StaticSettings, main_sha: str,
        serve: Serve) -> None:
    server = await serve([b.Hang(answered=1)], "research")
    events = await research(ctx, quests, settings, main_sha,
                            endpoint(server, request_timeout_seconds=30, stage_seconds=1.5))
    assert events[0].type == "agent_halted"
    t = await kept(ctx)
    assert t.ended is Ending.TIMED_OUT and "deadline of 1.5 s" in t.reason
    assert t.last_said is not None and t.last_said.kind is Kind.CALL


async def test_a_stage_run_again_replaces_its_transcript(redis_async: RedisClient) -> None:
    store = TranscriptStore(redis_async)
    first = Recorder(store, "q-9", 1)
    await first.keep(stage="research", ended=Ending.FAILED, turns=[Turn(kind=Kind.TEXT,
                                                                        text="one")])
    await first.keep(stage="research", ended=Ending.ANSWERED, turns=[Turn(kind=Kind.TEXT,
                                                                          text="two")])
    await Recorder(store, "q-9", 2).keep(stage="research", ended=Ending.HALTED, turns=[])
    found = await store.transcripts("q-9")
    assert [(t.revision, t.ended) for t in found] == [(1, Ending.ANSWERED), (2, Ending.HALTED)]
    latest = await store.latest("q-9", revision=1)
    assert latest is not None and latest.turns[0].text == "two"
    assert await store.latest("q-nothing") is None


async def test_an_ended_quest_keeps_only_the_conversations_that_explain_an_ending(
        redis_async: RedisClient) -> None:
    """Before compaction the answered stages' conversations go (their results are on record);
    a stage that failed, halted or timed out keeps its own, and the record then holds it."""
    store = TranscriptStore(redis_async)
    said = [Turn(kind=Kind.TEXT, text="said")]
    await Recorder(store, "q-5", 1).keep(stage="research", ended=Ending.ANSWERED, turns=said)
    await Recorder(store, "q-5", 1).keep(stage="reproduce", ended=Ending.FAILED, turns=said)
    await Recorder(store, "q-5", 2).keep(stage="research", ended=Ending.TIMED_OUT, turns=said)
    await Recorder(store, "q-5", 2).keep(stage="reproduce", ended=Ending.ANSWERED, turns=said)
    assert await keep_what_explains(redis_async, "q-5") == 2
    left = await store.transcripts("q-5")
    assert [(t.revision, t.stage, t.ended) for t in left] == [
        (1, "reproduce", Ending.FAILED), (2, "research", Ending.TIMED_OUT)]
    # a quest whose every stage answered keeps no key at all, not an empty hash
    await Recorder(store, "q-6", 1).keep(stage="research", ended=Ending.ANSWERED, turns=said)
    assert await keep_what_explains(redis_async, "q-6") == 1
    assert await redis_async.exists(transcript_key("q-6")) == 0
    assert await keep_what_explains(redis_async, "q-none") == 0


# --- what is kept is safe to show ---------------------------------------------------------

SECRETS = [KEY, "ghs_" + "A" * 36, "-----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA "
           "PRIVATE KEY-----", " Bearer abcdefghijklmnop"]
"""Glued to whatever comes before them, but a credential named by the word before it, as the
logs read them."""
CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")

texts = st.lists(st.text(alphabet=st.characters(), max_size=300)
                 | st.sampled_from(SECRETS)
                 | st.sampled_from(["\x1b]0;owned\x07", "\x1b[2J", "\u202e", "\r"]), max_size=6
                 ).map("".join)
turn_lists = st.lists(st.builds(Turn, kind=st.sampled_from(list(Kind)), text=texts,
                                tool=st.none() | texts), max_size=12)


@settings(max_examples=150, deadline=None)
@given(turns=turn_lists, big=st.integers(0, 3))
def test_kept_turns_are_bounded_redacted_and_inert(turns: list[Turn], big: int) -> None:
    turns = turns + [Turn(kind=Kind.RESULT, text="x" * 25_000)] * big
    kept, elided = bounded(turns, [KEY])
    assert elided + len(kept) == len(turns)
    if turns:
        assert kept, "the newest turn is always kept"
        assert kept[-1].kind is turns[-1].kind
    assert sum(len(t.text) for t in kept) <= max(MAX_CHARS, len(kept[-1].text) if kept else 0)
    for t in kept:
        assert len(t.text) <= TURN_CHARS + 60
        for shown in (t.text, t.tool or ""):
            assert KEY not in shown and "ghs_" + "A" * 36 not in shown
            assert "MIIE" not in shown and "abcdefghijklmnop" not in shown
            assert not CONTROLS.search(shown), repr(shown)
            assert "]0;owned" not in shown and "[2J" not in shown


def test_a_long_turn_keeps_its_start_and_end() -> None:
    text = "start " + "m" * 20_000 + " end"
    out = clean(text)
    assert out.startswith("start ") and out.endswith(" end")
    assert "characters left out" in out and len(out) < TURN_CHARS + 60
