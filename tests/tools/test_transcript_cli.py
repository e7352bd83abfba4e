"""``python -m bot transcript QUEST``: a quest's model conversations from Redis, for a terminal
(the model's words inert) or as JSON; one line and exit 2 when Redis is away or holds no such
quest, exit 1 when it holds no transcript of what was asked."""

from __future__ import annotations

import asyncio
import json
import socket
from datetime import UTC, datetime

import pytest
import redis
import redis.asyncio

from bot.__main__ import main
from bot.agent.transcript import Ending, Kind, Recorder, TranscriptStore, Turn
from bot.core import Policy
from bot.journal import Journal
from questbot_testing.journals import JournalBuilder

KEY = "sk-cli-test-key-abcdef0123456789"
HOSTILE = "All done.\x1b]0;owned\x07\x1b[2J\rpass\u202e @maintainers <script>"


def store(url: str, *, turns: list[Turn], stage: str = "research",
          ended: Ending = Ending.FAILED, revision: int = 1) -> None:
    async def go() -> None:
        client = redis.asyncio.Redis.from_url(url)
        try:
            if await Journal(client).snapshot("q-t") == (0, None):
                await Journal(client).apply_many(JournalBuilder("q-t").sense().events,
                                                 Policy())
            recorder = Recorder(TranscriptStore(client), "q-t", revision, secrets=(KEY,),
                                clock=lambda: datetime(2026, 12, 2, 6, 0, tzinfo=UTC))
            await recorder.keep(stage=stage, ended=ended, turns=turns, model="qwen2.5-coder",
                                reason="the model did not give a usable answer")
        finally:
            await client.aclose()

    asyncio.run(go())


CONVERSATION = [
    Turn(kind=Kind.PROMPT, text="stage: research; the tests fail"),
    Turn(kind=Kind.CALL, tool="read_file", text='{"path": "pager.py"}'),
    Turn(kind=Kind.RESULT, tool="read_file", text=f"1 | KEY = '{KEY}'\n2 | def pages():"),
    Turn(kind=Kind.RETRY, text="Please call a tool: answer or halt."),
    Turn(kind=Kind.TEXT, text=HOSTILE),
]


def test_a_quests_conversation_reads_as_turns_in_a_terminal(
        redis_sync: redis.Redis, redis_url: str, capsys: pytest.CaptureFixture[str]) -> None:
    store(redis_url, turns=CONVERSATION)
    assert main(["transcript", "q-t", "--redis", redis_url]) == 0
    out = capsys.readouterr().out
    assert out.startswith("quest q-t: research at revision 1 — the stage failed: the model "
                          "did not give a usable answer\n")
    assert "model qwen2.5-coder · ended 2026-12-02 06:00 UTC · 5 turns" in out
    assert ("questbot asked:\n    stage: research; the tests fail\n\n"
            "the model called read_file:\n    {\"path\": \"pager.py\"}\n\n"
            "read_file answered:\n    1 | KEY = '[redacted]'\n    2 | def pages():\n\n"
            "questbot sent the answer back:\n    Please call a tool") in out
    assert out.rstrip().endswith("the model said:\n    All done.\n    pass @maintainers <script>")
    for raw in ("\x1b", "\x07", "\r", "\u202e", "]0;owned", "[2J", KEY):
        assert raw not in out


def test_json_and_one_stage(redis_sync: redis.Redis, redis_url: str,
                            capsys: pytest.CaptureFixture[str]) -> None:
    store(redis_url, turns=CONVERSATION)
    store(redis_url, stage="reproduce", ended=Ending.ANSWERED,
          turns=[Turn(kind=Kind.CALL, tool="answer", text="{}")])
    assert main(["transcript", "q-t", "--redis", redis_url, "--json"]) == 0
    kept = json.loads(capsys.readouterr().out)
    assert [(t["stage"], t["ended"]) for t in kept] == [("research", "failed"),
                                                        ("reproduce", "answered")]
    assert kept[0]["turns"][-1] == {"kind": "text", "tool": None,
                                    "text": "All done.\npass @maintainers <script>"}
    assert main(["transcript", "q-t", "--redis", redis_url, "--stage", "reproduce"]) == 0
    out = capsys.readouterr().out
    assert "reproduce at revision 1" in out and "research" not in out
    assert main(["transcript", "q-t", "--redis", redis_url, "--stage", "patch"]) == 1
    err = capsys.readouterr().err
    assert err == ("transcript: no model conversation is kept for the patch stage of quest "
                   "q-t (one is kept when a model agent's stage ends; once an ended quest is "
                   "compacted, only the stages that did not answer keep theirs)\n")


def test_an_unknown_quest_is_one_line(redis_sync: redis.Redis, redis_url: str,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["transcript", "q-nobody", "--redis", redis_url]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.count("\n") == 1 and "Redis holds no quest q-nobody" in captured.err


def test_redis_away_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    assert main(["transcript", "q-t", "--redis", f"redis://127.0.0.1:{port}/0"]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1
    assert captured.err.startswith("transcript: could not read quest q-t from Redis (")
    assert "check REDIS_URL or --redis" in captured.err
