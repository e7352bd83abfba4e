"""The recorded model server plays real servers: each behaviour as its recorded or documented
exchange shows it (``questbot_testing/modelserver/behaviours.py``, ``recorded/real``)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import aiohttp
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from questbot_testing.modelserver import behaviours as b
from questbot_testing.modelserver.server import ModelServer, recorded
from tests.questbot_testing.modelserver.test_recorded import TOOLS, openai_request, post


def test_every_real_fact_names_its_source() -> None:
    facts = sorted(b.REAL.glob("*.json"))
    assert len(facts) >= 12
    for path in facts:
        doc = json.loads(path.read_text())
        assert doc["name"] == path.stem
        assert len(doc["source"]) > 80, f"{path.name}: say where it was seen"


def test_the_null_content_refusal_is_the_recorded_body_to_the_byte() -> None:
    recorded_fact = b.fact("llamacpp-null-content-500")
    request = recorded_fact["request"]
    assert b.null_content_body(request["message_index"], request["message"]) == \
        recorded_fact["body"]


def test_a_call_written_as_text_is_what_the_model_wrote() -> None:
    seen = b.fact("llamacpp-tool-call-as-text")["responses"]
    fenced = seen["fenced"]["choices"][0]["message"]["content"]
    assert b.call_as_text("fenced", "list_files", {"directory": ".", "pattern": "*"}) == fenced
    functions = seen["functions"]["choices"][0]["message"]["content"]
    assert b.call_as_text("functions", "read_log", {}) == functions
    line = seen["lines"]["choices"][0]["message"]["content"].splitlines()[1]
    assert json.loads(b.call_as_text("lines", "read_log", json.loads(line)["arguments"])) == \
        json.loads(line)


async def serve(*behaviours: b.Behaviour, names: tuple[str, ...] = ("research",),
                protocol: str = "openai") -> ModelServer:
    return await ModelServer(recorded(protocol, *names), behaviours=behaviours).start()


async def test_llamacpp_refuses_required_and_answers_auto() -> None:
    server = await serve(*b.llamacpp_chatml_function_calling())
    try:
        required = {**openai_request("stage: research;", tools=TOOLS), "tool_choice": "required"}
        status, body = await post(server, "/v1/chat/completions", required)
        assert (status, body) == (500, b.fact("llamacpp-required-500")["body"])
        status, body = await post(server, "/v1/chat/completions",
                                  {**required, "tool_choice": "auto"})
        assert status == 200 and body["choices"][0]["message"]["tool_calls"]
        assert server.played == [("llamacpp-required-500", 500)]
        server.assert_clean()
    finally:
        await server.close()


async def test_llamacpp_refuses_an_assistant_message_with_null_content() -> None:
    server = await serve(*b.llamacpp_model_template())
    try:
        request = openai_request("stage: research;", answers=1, tools=TOOLS)
        status, body = await post(server, "/v1/chat/completions", request)
        assert status == 500
        assert "'msg': 'Input should be a valid string', 'input': None" in \
            body["error"]["message"]
    finally:
        await server.close()


async def test_the_model_template_writes_tool_calls_as_text() -> None:
    server = await serve(*b.llamacpp_model_template("hermes"))
    try:
        status, body = await post(server, "/v1/chat/completions",
                                  openai_request("stage: research;", tools=TOOLS))
        assert status == 200
        choice = body["choices"][0]
        assert choice["finish_reason"] == "stop" and set(choice["message"]) == {"content",
                                                                                 "role"}
        assert '<tool_call>\n{"name": "read_log", "arguments": {}}\n</tool_call>' in \
            choice["message"]["content"]
    finally:
        await server.close()


async def test_a_hung_server_answers_once_then_never() -> None:
    server = await serve(b.Hang(answered=1))
    try:
        status, _ = await post(server, "/v1/chat/completions",
                               openai_request("stage: research;", tools=TOOLS))
        assert status == 200
        timeout = aiohttp.ClientTimeout(total=0.5)
        async with aiohttp.ClientSession(timeout=timeout) as session:
            with pytest.raises(asyncio.TimeoutError):
                async with session.post(server.url + "/v1/chat/completions",
                                        json=openai_request("stage: research;",
                                                            tools=TOOLS)) as response:
                    await response.read()
        assert server.played == [("llamacpp-hang", 0)]
    finally:
        await server.close()


@pytest.mark.parametrize(("fact", "protocol", "path"), [
    ("openai-429", "openai", "/v1/chat/completions"),
    ("anthropic-429", "anthropic", "/v1/messages"),
    ("anthropic-529", "anthropic", "/v1/messages"),
])
async def test_rate_limits_and_overloads_then_the_answer(fact: str, protocol: str,
                                                         path: str) -> None:
    server = await serve(b.Refuses(fact, times=1, retry_after=2), protocol=protocol)
    request: dict[str, Any] = openai_request("stage: research;", tools=TOOLS)
    if protocol == "anthropic":
        request = {"model": "m", "max_tokens": 100, "messages": [
            {"role": "user", "content": [{"type": "text", "text": "stage: research; q"}]}],
            "tools": [{"name": t, "input_schema": {"type": "object"}} for t in TOOLS]}
    try:
        async with aiohttp.ClientSession() as session:
            async with session.post(server.url + path, json=request) as response:
                assert response.status == b.fact(fact)["status"]
                assert (await response.json())["error"]["type"] in (
                    "tokens", "rate_limit_error", "overloaded_error")
                if fact.endswith("429"):
                    assert response.headers["retry-after"] == "2"
            async with session.post(server.url + path, json=request) as response:
                assert response.status == 200
        server.assert_clean()
    finally:
        await server.close()


async def test_vllm_counts_the_output_limit_into_its_window() -> None:
    server = await serve(*b.vllm(4096))
    try:
        async with aiohttp.ClientSession() as session, \
                session.get(server.url + "/v1/models") as response:
            assert (await response.json())["data"][0]["max_model_len"] == 4096
        request = openai_request("stage: research;", tools=TOOLS)
        status, body = await post(server, "/v1/chat/completions",
                                  {**request, "max_completion_tokens": 8192})
        assert status == 400 and body["type"] == "BadRequestError"
        assert "This model's maximum context length is 4096 tokens" in body["message"]
        assert "8192 in the completion" in body["message"]
        status, _ = await post(server, "/v1/chat/completions",
                               {**request, "max_completion_tokens": 1024})
        assert status == 200
    finally:
        await server.close()


async def test_openai_and_anthropic_refuse_a_prompt_past_the_window() -> None:
    server = await serve(b.ContextLimit(100, "openai"))
    try:
        status, body = await post(server, "/v1/chat/completions",
                                  openai_request("stage: research; " + "x" * 1000, tools=TOOLS))
        assert status == 400 and body["error"]["code"] == "context_length_exceeded"
    finally:
        await server.close()


async def test_llamacpp_reads_max_tokens_and_not_max_completion_tokens() -> None:
    server = await serve(*b.llamacpp_chatml_function_calling(), names=("probe-limit",))
    try:
        limit = openai_request("questbot model check: limit")
        status, body = await post(server, "/v1/chat/completions",
                                  {**limit, "max_completion_tokens": 8})
        assert status == 200 and body["usage"]["completion_tokens"] == 292
        status, body = await post(server, "/v1/chat/completions", {**limit, "max_tokens": 8})
        assert body["usage"]["completion_tokens"] == 8
        assert body["choices"][0]["finish_reason"] == "length"
        async with aiohttp.ClientSession() as session, \
                session.get(server.url + "/v1/models") as response:
            assert await response.json() == b.fact("llamacpp-models")["body"]
    finally:
        await server.close()


# --- Ollama's silent cut ----------------------------------------------------------------------

ROLES = st.sampled_from(["user", "assistant", "tool", "call"])


@st.composite
def conversations(draw: st.DrawFn) -> list[dict[str, Any]]:
    """A system message, then user messages, answers, tool calls and their results."""
    messages: list[dict[str, Any]] = [{"role": "system", "content": "rules " * draw(
        st.integers(0, 40))}]
    for role in draw(st.lists(ROLES, min_size=1, max_size=12)):
        text = "w " * draw(st.integers(0, 120))
        if role == "call":
            messages.append({"role": "assistant", "content": "", "tool_calls": [
                {"id": "c", "type": "function", "function": {"name": "f", "arguments": "{}"}}]})
        else:
            messages.append({"role": role, "content": text, "tool_call_id": "c"}
                            if role == "tool" else {"role": role, "content": text})
    return messages


@settings(max_examples=300, deadline=None)
@given(messages=conversations(), num_ctx=st.integers(20, 600))
def test_ollama_keeps_the_system_the_latest_and_the_newest_that_fit(
        messages: list[dict[str, Any]], num_ctx: int) -> None:
    """``chatPrompt``'s rule (``ollama-truncation``): system messages kept; the rest a suffix
    of the conversation, the longest that fits, never starting at a tool result whose call is
    just before it; the latest message always."""
    body = {"messages": messages}
    kept = b.ollama_kept(body, num_ctx)

    def from_(start: int) -> list[dict[str, Any]]:
        return [m for m in messages[:start] if m["role"] == "system"] + messages[start:]

    starts = sorted({b.tool_block_start(messages, i) for i in range(len(messages))})
    # a start Ollama may take (no orphaned tool result), the system messages before it kept
    start = max(s for s in starts if from_(s) == kept)
    assert kept[-1] is messages[-1]
    assert all(m in kept for m in messages if m["role"] == "system")
    fits = b.prompt_tokens({"messages": kept}) <= num_ctx
    assert fits or start == starts[-1]
    earlier = [s for s in starts if s < start and from_(s) != kept]
    if earlier:  # the longest that fits: one start earlier does not
        assert b.prompt_tokens({"messages": from_(earlier[-1])}) > num_ctx


async def test_ollama_cuts_silently_and_counts_what_it_kept() -> None:
    truncates = b.Truncates(num_ctx=300)
    server = await serve(truncates)
    try:
        long = openai_request("stage: research; " + "x " * 1000, tools=TOOLS)
        status, body = await post(server, "/v1/chat/completions", long)
        assert status == 200 and body["choices"][0]["message"]["tool_calls"]  # no error
        assert body["usage"]["prompt_tokens"] == 300  # cut to the window by the runner
        short = openai_request("stage: research; look", tools=TOOLS)
        status, body = await post(server, "/v1/chat/completions", short)
        assert body["usage"]["prompt_tokens"] == b.prompt_tokens(short) < 300
        assert truncates.cut == [0, 0]  # one message each: the latest is always kept
        assert server.played == []  # no refusal: nothing but the count says it
    finally:
        await server.close()
