"""The model agent against servers as they really answer (issue 25): the real ``start_agent``
adapter, the model agent over pydantic-ai and the SDKs, talking HTTP to the recorded model
server playing a real server's behaviour (``questbot_testing/modelserver/behaviours.py``).

What each proves:

* llama.cpp (chatml-function-calling) refuses ``tool_choice: "required"`` and ``content:
  null`` with HTTP 500: questbot falls back to ``auto`` and ``""`` once each and the stage
  ends with its hypothesis — where it used to be "unavailable", retried 24 times, stuck.
* The model's own template writes tool calls as text, in each shape seen: they are read.
* A server that refuses every request the same way ends the stage at once, with its words,
  parking the quest (``model_failed``) — never "unavailable", never retried by the runner.
* A hang, a rate limit, an overload: retried in one budget (the SDK's own retries off), each
  honouring ``retry-after``; when the budget runs out the quest parks saying so — with the
  tokens the stage spent counted.
* vLLM counts the output limit into its window: questbot lowers the limit to fit.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from decimal import Decimal
from typing import Any

import pytest
from pydantic import SecretStr

from bot.adapters import AdapterContext
from bot.agent import sandbox
from bot.agent.model import ModelEndpoint, Prices, Wire
from bot.agent.model.adaptation import LEARNED
from bot.agent.runs import agent_adapters
from bot.core import EffectType, State
from bot.core.events.bookkeeping import UsageRecorded
from bot.core.quest import ParkReason
from questbot_testing.fakegithub import FakeGitHub
from questbot_testing.modelserver import behaviours as b
from questbot_testing.modelserver.server import ModelServer, recorded
from tests.agent.conftest import REPO, Quests, StaticSettings, only, settings_for

Serve = Callable[..., Any]


@pytest.fixture
async def serve() -> AsyncIterator[Serve]:
    servers: list[ModelServer] = []

    async def start(behaviours: Sequence[b.Behaviour], *names: str,
                    protocol: str = "openai") -> ModelServer:
        server = await ModelServer(recorded(protocol, *names), behaviours=behaviours,
                                   substitutions={"PYTHON": sandbox.python()}).start()
        servers.append(server)
        return server

    yield start
    for server in servers:
        await server.close()
    for server in servers:
        server.assert_clean()


def endpoint(server: ModelServer, protocol: str = "openai", **fields: Any) -> ModelEndpoint:
    url = f"{server.url}/v1" if protocol == "openai" else server.url
    model = "gpt-4.1-mini" if protocol == "openai" else "claude-sonnet-4-5"
    return ModelEndpoint(wire=Wire(protocol), url=url, api_key=SecretStr("sk-test"),
                         model=model, retry_wait_seconds=0.01, **fields)


async def research(ctx: AdapterContext, quests: Quests, settings: StaticSettings,
                   main_sha: str, model: ModelEndpoint) -> list[Any]:
    settings.value = settings_for(kind="model")
    events = await agent_adapters(ctx, model=model)[EffectType.START_AGENT](
        await quests.sense(main_sha))
    await quests.apply(list(events or ()))
    return list(events or ())


async def test_llamacpp_refusing_required_and_null_content_is_met_by_adapting(
        ctx: AdapterContext, quests: Quests, settings: StaticSettings, main_sha: str,
        serve: Serve) -> None:
    server = await serve(b.llamacpp_chatml_function_calling(), "research")
    events = await research(ctx, quests, settings, main_sha, endpoint(server))
    assert [e.type for e in events] == ["hypothesis_written", "usage_recorded"]
    assert quests.now().state is State.HYPOTHESISED
    # each refusal met once, then never sent again: no retry storm
    assert server.played == [("llamacpp-required-500", 500), ("llamacpp-null-content-500", 500)]
    assert server.turns_of("research") == [1, 2, 3, 4]
    sent = [s.request for s in server.served]
    assert all(r["tool_choice"] == "auto" and "max_tokens" in r for r in sent)
    assert "max_completion_tokens" not in sent[0]  # llama.cpp reads max_tokens only
    learned = LEARNED[f"{server.url}/v1"]
    assert not learned.tool_choice_required and not learned.null_content


@pytest.mark.parametrize("style", ["fenced", "lines", "functions", "hermes"])
async def test_tool_calls_written_as_text_are_read(
        ctx: AdapterContext, quests: Quests, settings: StaticSettings, main_sha: str,
        serve: Serve, style: b.TextStyle) -> None:
    server = await serve(b.llamacpp_model_template(style), "research")
    events = await research(ctx, quests, settings, main_sha, endpoint(server))
    assert [e.type for e in events] == ["hypothesis_written", "usage_recorded"]
    assert server.turns_of("research") == [1, 2, 3, 4]


async def test_a_request_refused_again_ends_the_stage_with_the_servers_words(
        ctx: AdapterContext, quests: Quests, settings: StaticSettings, main_sha: str,
        serve: Serve) -> None:
    server = await serve([b.Refuses("llamacpp-null-content-500", times=99)], "research")
    events = await research(ctx, quests, settings, main_sha, endpoint(server))
    assert [e.type for e in events] == ["agent_halted"]
    halted = events[0]
    assert halted.outcome == "endpoint"
    assert "refused the request again: answered HTTP 500" in halted.reason
    assert "Input should be a valid string" in halted.reason and "/resume" in halted.reason
    assert server.requests <= 4  # the same request once more, one adaptation tried: no storm
    quest = quests.now()
    assert (quest.state, quest.park_reason) == (State.PARKED, ParkReason.MODEL_FAILED)
    assert quest.resume_state is State.RESEARCHING


async def test_a_hung_server_parks_the_quest_after_the_retries_with_tokens_counted(
        ctx: AdapterContext, quests: Quests, settings: StaticSettings, main_sha: str,
        serve: Serve) -> None:
    server = await serve([b.Hang(answered=1)], "research")
    events = await research(ctx, quests, settings, main_sha,
                            endpoint(server, request_timeout_seconds=0.5, retries=2))
    assert [e.type for e in events] == ["agent_halted", "usage_recorded"]
    assert events[0].outcome == "endpoint"
    assert "did not answer within 0.5 s" in events[0].reason
    assert "3 tries" in events[0].reason and "QUESTBOT_MODEL_RETRIES" in events[0].reason
    assert server.requests == 4  # one answered, then three tries: no SDK retries inside them
    first = recorded("openai", "research")[0].turns[0]["response"]["usage"]
    assert events[1].tokens == first["prompt_tokens"] + first["completion_tokens"]
    assert quests.now().usage_tokens == events[1].tokens
    assert quests.now().park_reason is ParkReason.MODEL_FAILED


@pytest.mark.parametrize(("protocol", "fact"), [("openai", "openai-429"),
                                                ("anthropic", "anthropic-429"),
                                                ("anthropic", "anthropic-529")])
async def test_rate_limits_and_overloads_are_waited_out_in_one_budget(
        ctx: AdapterContext, quests: Quests, settings: StaticSettings, main_sha: str,
        serve: Serve, protocol: str, fact: str) -> None:
    server = await serve([b.Refuses(fact, times=3, retry_after=0.05)], "research",
                         protocol=protocol)
    events = await research(ctx, quests, settings, main_sha, endpoint(server, protocol))
    assert [e.type for e in events] == ["hypothesis_written", "usage_recorded"]
    assert server.played == [(fact, b.fact(fact)["status"])] * 3
    assert server.requests == 3 + 4  # the SDK retried none of them itself


async def test_a_rate_limit_outlasting_the_budget_parks_the_quest(
        ctx: AdapterContext, quests: Quests, settings: StaticSettings, main_sha: str,
        serve: Serve) -> None:
    server = await serve([b.Refuses("openai-429", times=99, retry_after=0.01)], "research")
    events = await research(ctx, quests, settings, main_sha, endpoint(server, retries=3))
    assert [e.type for e in events] == ["agent_halted"]
    assert "was rate-limiting (HTTP 429" in events[0].reason
    assert "Rate limit reached" in events[0].reason and "4 tries" in events[0].reason
    assert server.requests == 4
    assert quests.now().park_reason is ParkReason.MODEL_FAILED


async def test_vllm_context_window_is_kept_by_lowering_the_output_limit(
        ctx: AdapterContext, quests: Quests, settings: StaticSettings, main_sha: str,
        serve: Serve) -> None:
    server = await serve(b.vllm(8192), "research")
    events = await research(ctx, quests, settings, main_sha,
                            endpoint(server, context_window=8192))
    assert [e.type for e in events] == ["hypothesis_written", "usage_recorded"]
    for served in server.served:
        body = served.request
        asked = body.get("max_tokens") or body.get("max_completion_tokens")
        assert b.prompt_tokens(body) + asked <= 8192


async def test_vllm_naming_its_window_in_a_refusal_is_learned(
        ctx: AdapterContext, quests: Quests, settings: StaticSettings, main_sha: str,
        serve: Serve) -> None:
    server = await serve(b.vllm(8192), "research")
    events = await research(ctx, quests, settings, main_sha, endpoint(server))
    assert [e.type for e in events] == ["hypothesis_written", "usage_recorded"]
    assert server.played == [("vllm-context-400", 400)]  # once, then kept within
    assert LEARNED[f"{server.url}/v1"].context_window == 8192


async def test_receipts_count_every_response_of_the_stage(
        ctx: AdapterContext, quests: Quests, settings: StaticSettings, main_sha: str,
        serve: Serve) -> None:
    server = await serve(b.llamacpp_chatml_function_calling(), "research")
    await research(ctx, quests, settings, main_sha, endpoint(server))
    receipts = [e for e in await ctx.journal.events("q-1") if isinstance(e, UsageRecorded)]
    usage = [t["response"]["usage"] for t in recorded("openai", "research")[0].turns]
    assert sum(r.tokens for r in receipts) == sum(u["prompt_tokens"] + u["completion_tokens"]
                                                  for u in usage)



async def test_a_local_model_priced_at_zero_is_counted_as_no_charge(
        ctx: AdapterContext, quests: Quests, settings: StaticSettings, main_sha: str,
        serve: Serve) -> None:
    server = await serve([b.Hang(answered=2)], "research")
    free = Prices(input=Decimal(0), output=Decimal(0))
    events = await research(ctx, quests, settings, main_sha,
                            endpoint(server, prices=free, request_timeout_seconds=0.3,
                                     retries=0))
    assert [e.type for e in events] == ["agent_halted", "usage_recorded"]
    receipt = events[1]
    assert receipt.free and receipt.cost_cents == 0 and receipt.stage == "research"
    quest = quests.now()
    assert quest.usage_free_tokens == quest.usage_tokens == receipt.tokens > 0


@pytest.mark.parametrize("server_of", [b.llamacpp_chatml_function_calling,
                                       lambda: b.llamacpp_model_template("hermes")],
                         ids=["chatml-function-calling", "model-template"])
async def test_every_stage_through_llamacpp(
        fake: FakeGitHub, ctx: AdapterContext, quests: Quests, settings: StaticSettings,
        main_sha: str, serve: Serve, server_of: Callable[[], list[b.Behaviour]]) -> None:
    """Research, reproduction, a revised plan and the patch, each against llama.cpp's server
    as it answers: its refusals met once, its calls read whatever form they take."""
    settings.value = settings_for(kind="model")
    server = await serve(server_of(), "research", "reproduce", "plan", "patch")
    run = agent_adapters(ctx, model=endpoint(server))
    events = await run[EffectType.START_AGENT](await quests.sense(main_sha))
    await quests.apply(list(events or ()))
    events = await run[EffectType.START_AGENT](only(await quests.decide("A"),
                                                    EffectType.START_AGENT))
    assert [e.type for e in events or ()] == ["reproduced", "plan_written", "usage_recorded"]
    await quests.apply(list(events or ()))
    events = await run[EffectType.START_AGENT](only(
        await quests.decide("B", "revise", reason="mention the empty list"),
        EffectType.START_AGENT))
    assert [e.type for e in events or ()] == ["plan_written", "usage_recorded"]
    await quests.apply(list(events or ()))
    events = await run[EffectType.START_AGENT](only(await quests.decide("B"),
                                                    EffectType.START_AGENT))
    assert [e.type for e in events or ()] == ["patch_pushed", "usage_recorded"]
    assert b"-(-total // per_page)" in (fake.repo(REPO).git.read(events[0].head, "pager.py")
                                        or b"")
    assert len(server.played) <= 2  # each refusal met once in the whole quest


async def test_a_model_that_answers_in_prose_is_said_to_have_done_so(
        ctx: AdapterContext, quests: Quests, settings: StaticSettings, main_sha: str,
        serve: Serve) -> None:
    """Issue 25: "Exceeded maximum output retries (3)" was honest, but nobody could tell the
    model had answered in words; now the reason says so and quotes the start of it."""
    prose = b.AnswersInProse()
    server = await serve([prose], "research")
    events = await research(ctx, quests, settings, main_sha, endpoint(server))
    assert [e.type for e in events] == ["agent_halted", "usage_recorded"]
    reason = events[0].reason
    assert "answered in words, with no tool call" in reason
    assert "To understand why `page_count(10, 3)` returns 3" in reason
    assert quests.now().park_reason is ParkReason.AGENT_FAILED
    assert len(prose.counted) == server.requests
    assert events[1].tokens == sum(prose.counted)  # every prose answer counted


@pytest.mark.parametrize("num_ctx", [2048, 2400])
async def test_ollama_cutting_a_long_conversation_ends_the_stage_saying_so(
        ctx: AdapterContext, quests: Quests, settings: StaticSettings, main_sha: str,
        serve: Serve, num_ctx: int) -> None:
    """Ollama past its context window drops the oldest messages — the task first — and
    answers anyway, the cut seen only in the prompt tokens it counts. The recorded turns stand
    in for the answers of a model that lost its task: taken, they would have made a
    hypothesis of a conversation the model never read whole. questbot sees the count fall
    short and ends the stage with what happened and what to set."""
    ollama = b.ollama(num_ctx)
    server = await serve(ollama, "research")
    events = await research(ctx, quests, settings, main_sha, endpoint(server))
    (cut,) = ollama
    assert isinstance(cut, b.Truncates) and any(cut.cut)  # the server did cut, silently
    assert [e.type for e in events] == ["agent_halted", "usage_recorded"]
    halted = events[0]
    assert halted.outcome == "endpoint"
    assert "did not show the model the whole conversation" in halted.reason
    assert "questbot did not use the answer" in halted.reason
    assert "QUESTBOT_MODEL_CONTEXT_WINDOW" in halted.reason
    assert "OLLAMA_CONTEXT_LENGTH" in halted.reason and "/resume" in halted.reason
    quest = quests.now()
    assert (quest.state, quest.park_reason) == (State.PARKED, ParkReason.MODEL_FAILED)
    assert quest.hypothesis is None
    assert quest.usage_tokens == events[1].tokens > 0  # what the cut requests spent, counted


@pytest.mark.parametrize(("num_ctx", "ends"), [(3400, "hypothesis_written"),
                                               (2400, "agent_halted")])
async def test_ollama_is_never_cut_with_its_window_set(
        ctx: AdapterContext, quests: Quests, settings: StaticSettings, main_sha: str,
        serve: Serve, num_ctx: int, ends: str) -> None:
    """``QUESTBOT_MODEL_CONTEXT_WINDOW`` set to Ollama's window: questbot keeps every request
    within it (the oldest tool results cut with a note), so Ollama never cuts and the model
    reads every request whole; a conversation that cannot fit even so ends saying that."""
    ollama = b.ollama(num_ctx)
    server = await serve(ollama, "research")
    events = await research(ctx, quests, settings, main_sha,
                            endpoint(server, context_window=num_ctx))
    (cut,) = ollama
    assert isinstance(cut, b.Truncates)
    assert cut.cut and not any(cut.cut)
    assert [e.type for e in events] == [ends, "usage_recorded"]
    if ends == "agent_halted":
        assert f"no longer fits the model's context window of {num_ctx:,} tokens" in \
            events[0].reason
    for served in server.served:
        body = served.request
        assert b.prompt_tokens(body) + int(body["max_tokens"]) <= num_ctx
