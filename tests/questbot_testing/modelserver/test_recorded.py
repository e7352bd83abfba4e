"""The model server: recordings as committed, turns matched, anything unexpected refused loudly."""

from __future__ import annotations

import json

import aiohttp
import pytest

from questbot_testing.modelserver.make_recorded import documents
from questbot_testing.modelserver.server import ModelServer, recorded


def test_the_recordings_are_what_the_script_writes() -> None:
    for path, text in documents().items():
        assert path.read_text() == text, (
            f"{path}: python -m questbot_testing.modelserver.make_recorded")


def openai_request(first: str, *, answers: int = 0, tools: tuple[str, ...] = ()) -> dict:
    messages: list[dict] = [{"role": "system", "content": "x"}, {"role": "user", "content": first}]
    for n in range(answers):
        messages.append({"role": "assistant", "content": None, "tool_calls": [
            {"id": f"call_{n}", "type": "function",
             "function": {"name": "read_file", "arguments": "{}"}}]})
        messages.append({"role": "tool", "tool_call_id": f"call_{n}", "content": "nothing"})
    return {"model": "m", "messages": messages,
            "tools": [{"type": "function", "function": {"name": t, "parameters": {}}}
                      for t in tools]}


TOOLS = ("list_files", "read_file", "search", "read_log", "run_command", "answer", "halt")


async def post(server: ModelServer, path: str, body: dict) -> tuple[int, dict]:
    async with aiohttp.ClientSession() as session, session.post(server.url + path,
                                                                json=body) as response:
        return response.status, await response.json()


async def test_a_request_gets_its_recorded_turn() -> None:
    async with ModelServer(recorded("openai", "research")) as server:
        status, body = await post(server, "/v1/chat/completions",
                                  openai_request("stage: research; quest: q", tools=TOOLS))
        assert status == 200
        assert body["choices"][0]["message"]["tool_calls"][0]["function"]["name"] == "read_log"
        assert body["usage"]["prompt_tokens"] == 1850
        server.assert_clean()


@pytest.mark.parametrize(("request_body", "why"), [
    (openai_request("stage: nothing;", tools=TOOLS), "matches 0 recorded conversations"),
    (openai_request("stage: research;", answers=9, tools=TOOLS), "only 4 turns are recorded"),
    (openai_request("stage: research;", tools=("read_file",)), "not offered"),
    (openai_request("stage: research;", answers=1, tools=TOOLS), "expected ['pager.py'"),
    (openai_request("stage: research;", tools=(*TOOLS, "write_file")), "must not have"),
])
async def test_an_unexpected_request_is_refused_loudly(request_body: dict, why: str) -> None:
    async with ModelServer(recorded("openai", "research")) as server:
        status, body = await post(server, "/v1/chat/completions", request_body)
        assert status == 400  # the SDKs do not retry a 400
        assert why in body["error"]["message"]
        with pytest.raises(AssertionError, match="unexpected requests"):
            server.assert_clean()


async def test_a_streamed_request_gets_the_recorded_turn_as_its_api_streams_it() -> None:
    """Claude Code and Codex always stream: the whole recorded response, cut into the events
    the API documents, carries the same tool call and usage."""
    async with ModelServer(recorded("openai", "research")) as server, \
            aiohttp.ClientSession() as session:
        body = {**openai_request("stage: research; quest: q", tools=TOOLS), "stream": True,
                "stream_options": {"include_usage": True}}
        async with session.post(server.url + "/v1/chat/completions", json=body) as response:
            assert response.headers["Content-Type"].startswith("text/event-stream")
            lines = [line for line in (await response.text()).splitlines() if line]
        chunks = [json.loads(line[6:]) for line in lines[:-1]]
        assert lines[-1] == "data: [DONE]"
        calls = [c for chunk in chunks for choice in chunk["choices"]
                 for c in choice["delta"].get("tool_calls", [])]
        assert [c["function"]["name"] for c in calls] == ["read_log", "list_files"]
        assert chunks[-1]["usage"]["prompt_tokens"] == 1850
        server.assert_clean()


async def test_anthropic_errors_have_anthropic_shape() -> None:
    async with ModelServer(recorded("anthropic", "research")) as server:
        status, body = await post(server, "/v1/messages", {
            "model": "m", "max_tokens": 10,
            "messages": [{"role": "user", "content": [{"type": "text", "text": "hello"}]}]})
        assert status == 400
        assert body["type"] == "error" and body["error"]["type"] == "invalid_request_error"
        assert server.errors
