"""``python -m bot model check`` against every behaviour the recorded model server can play:
what it reports of the endpoint, and what questbot will do with it (``bot.agent.model.probe``,
``bot.tools.model_check``)."""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
from collections.abc import Sequence
from typing import Any

import pytest
from pydantic import SecretStr

from bot.__main__ import main
from bot.agent.model import ModelEndpoint, Wire
from bot.agent.model.probe import Facts, probe
from bot.tools.model_check import check_text, usable
from questbot_testing.modelserver import behaviours as b
from questbot_testing.modelserver.server import ModelServer, recorded
from questbot_testing.stack import free_port

PROBES = ("probe-tools", "probe-limit")


async def checked(behaviours: Sequence[b.Behaviour], protocol: str = "openai",
                  **fields: Any) -> tuple[Facts, ModelEndpoint, ModelServer]:
    server = await ModelServer(recorded(protocol, *PROBES), behaviours=behaviours).start()
    url = f"{server.url}/v1" if protocol == "openai" else server.url
    endpoint = ModelEndpoint(wire=Wire(protocol), url=url, api_key=SecretStr("sk-test"),
                             model="m", **fields)
    try:
        return await probe(endpoint), endpoint, server
    finally:
        await server.close()


async def test_openais_api() -> None:
    facts, endpoint, server = await checked(b.openai())
    assert (facts.tool_choice_required, facts.tool_calls_parsed, facts.null_content) == (
        True, True, True)
    assert facts.output_limit_field == "max_completion_tokens"
    assert facts.context_window is None and usable(facts)
    server.assert_clean()
    text = check_text(endpoint, facts)
    assert "tool_choice \"required\": accepted" in text
    assert "set QUESTBOT_MODEL_CONTEXT_WINDOW" in text
    assert facts.streaming is True  # issue 25.2: streaming probed, and only reported
    assert "- streamed answers: given when asked (questbot asks for one JSON answer" in text


async def test_llamacpp_chatml_function_calling() -> None:
    facts, endpoint, server = await checked(b.llamacpp_chatml_function_calling())
    assert (facts.tool_choice_required, facts.tool_calls_parsed, facts.null_content) == (
        False, True, False)
    assert facts.output_limit_field == "max_tokens"
    assert any("HTTP 500 with no message" in s for s in facts.said)
    assert any("Input should be a valid string" in s for s in facts.said)
    adaptation = facts.adaptation(endpoint)
    assert (adaptation.tool_choice_required, adaptation.null_content) == (False, False)
    text = check_text(endpoint, facts)
    assert "sends tool_choice \"auto\"" in text and "sends content \"\"" in text
    server.assert_clean()


@pytest.mark.parametrize("style", ["fenced", "lines", "functions", "hermes"])
async def test_llamacpp_with_the_models_template(style: b.TextStyle) -> None:
    facts, _endpoint, server = await checked(b.llamacpp_model_template(style))
    assert (facts.tool_choice_required, facts.tool_calls_parsed, facts.tool_calls_as_text) == (
        True, False, True)
    assert facts.null_content is False and facts.output_limit_field == "max_tokens"
    assert usable(facts)
    server.assert_clean()


async def test_vllm_says_its_window() -> None:
    facts, endpoint, _server = await checked(b.vllm(32768))
    assert facts.context_window == 32768
    assert facts.adaptation(endpoint).context_window == 32768


async def test_the_window_setting_wins() -> None:
    facts, endpoint, _server = await checked(b.vllm(32768), context_window=16384)
    assert facts.context_window == 16384
    assert facts.adaptation(endpoint).context_window == 16384


@pytest.mark.parametrize(("fact", "protocol"), [("openai-429", "openai"),
                                                ("anthropic-529", "anthropic")])
async def test_a_busy_endpoint_teaches_nothing(fact: str, protocol: str) -> None:
    facts, endpoint, _server = await checked([b.Refuses(fact, times=99)], protocol)
    assert facts.tool_choice_required is None and facts.tool_calls_parsed is None
    assert any("busy" in s for s in facts.said)
    assert facts.adaptation(endpoint).tool_choice_required  # nothing refused: defaults stand
    assert not usable(facts)


async def test_a_hung_endpoint_is_said_to_not_answer() -> None:
    facts, _endpoint, _server = await checked([b.Hang(answered=0)],
                                              request_timeout_seconds=0.5)
    assert any("did not answer" in s for s in facts.said) and not usable(facts)


async def test_anthropics_api() -> None:
    facts, _endpoint, server = await checked([], "anthropic")
    assert (facts.tool_choice_required, facts.tool_calls_parsed) == (True, True)
    assert facts.null_content is None and facts.output_limit_field == "max_tokens"
    assert facts.streaming is True
    server.assert_clean()


async def test_the_command_prints_json_and_exits_by_what_it_found(
        monkeypatch: pytest.MonkeyPatch) -> None:
    server = await ModelServer(recorded("openai", *PROBES),
                               behaviours=b.llamacpp_chatml_function_calling()).start()
    monkeypatch.delenv("QUESTBOT_MODEL", raising=False)
    monkeypatch.setenv("QUESTBOT_ENV_FILE", "/nonexistent/.env")
    out = io.StringIO()

    def run(*argv: str) -> int:
        with contextlib.redirect_stdout(out):
            return main(["model", "check", *argv])

    try:
        code = await asyncio.to_thread(run, "--url", f"{server.url}/v1", "--model", "qwen",
                                       "--json")
        assert code == 0
        shown = json.loads(out.getvalue())
        assert {k: shown[k] for k in ("tool_calls_parsed", "tool_choice_required",
                                      "null_content", "context_window")} == {
            "tool_calls_parsed": True, "tool_choice_required": False,
            "null_content": False, "context_window": None}
        assert shown["streaming"] is True
        assert shown["questbot"]["tool_choice_required"] is False
    finally:
        await server.close()
    nowhere = f"http://127.0.0.1:{free_port()}/v1"
    assert await asyncio.to_thread(run, "--url", nowhere, "--model", "m") == 2
    assert "could not be asked" in out.getvalue()
