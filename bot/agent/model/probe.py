"""What a model endpoint can do, found by asking it: ``python -m bot model check`` and the
worker at start (``bot.worker.assembly``) run the same probe.

Why ask. An "OpenAI-compatible" server's documentation rarely says whether it takes
``tool_choice: "required"``, whether it parses the model's tool calls, whether it takes an
assistant message with ``content: null``, which output limit field it reads or how large its
context is — and each of these broke a stage on a real server (issue 25). A few small requests
settle them before a quest depends on it.

The requests, over plain HTTP (not the SDKs, which would retry and reshape what the server
said), each with a short output limit, as a conversation of its own (first words ``questbot
model check``):

1. ``GET {url}/models``: the model listed, and its context window where the server says it
   (vLLM's ``max_model_len``, OpenRouter's and LM Studio's ``context_length``); llama.cpp's own
   server says it at ``GET /props`` (``n_ctx``).
2. One tool, ``note``, and ``tool_choice: "required"``: accepted or refused (the server's
   words); then, if refused, ``auto``. The answer's call is parsed (``tool_calls``), written as
   text (``bot.agent.model.textual`` reads it), or absent.
3. The conversation going on: the call as an assistant message with ``content: null`` and its
   result: accepted or refused (and ``""`` tried instead).
4. A long answer with ``max_completion_tokens`` 8, then ``max_tokens`` 8: the field the server
   honours is the one that stops it short.
5. The same asked with ``stream: true``: whether the answer comes as server-sent events
   (``data:`` lines). questbot asks for one JSON answer and never streams, so this is only
   reported — a client that needs streaming (a coding-agent CLI pointed at the endpoint:
   Claude Code and Codex always stream) learns whether it will get it.

Anthropic's Messages API is specified tighter: ``tool_choice`` ``any`` is tried, the limit is
``max_tokens`` (required there), null content does not arise, and the window is the setting.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any

import aiohttp

from bot.agent.model.adaptation import Adaptation, OutputLimitField
from bot.agent.model.endpoint import NO_KEY, ModelEndpoint, Wire
from bot.agent.model.said import quoted, server_message
from bot.agent.model.textual import tool_calls_in

PROBE = "questbot model check"
NOTE_TOOL = {"name": "note", "description": "Write a note.",
             "parameters": {"type": "object", "properties": {"text": {"type": "string"}},
                            "required": ["text"]}}
SYSTEM = "You are being checked by questbot. Do exactly what the user asks."
LIMIT = 8
BUSY = frozenset({408, 429, 502, 503, 504, 529})
"""Answers that say nothing of what the endpoint accepts, only that it is busy now."""


@dataclass
class Facts:
    """What the probe found; ``None`` where it could not tell."""

    url: str
    model: str
    reachable: bool = False
    tool_choice_required: bool | None = None
    tool_calls_parsed: bool | None = None
    tool_calls_as_text: bool | None = None
    null_content: bool | None = None
    output_limit_field: OutputLimitField | None = None
    context_window: int | None = None
    streaming: bool | None = None
    """Answers come as server-sent events when ``stream: true`` asks (questbot never asks)."""
    said: list[str] = field(default_factory=list)
    """What the endpoint answered where it refused or surprised, in its words."""

    def as_json(self) -> dict[str, Any]:
        return asdict(self)

    def adaptation(self, endpoint: ModelEndpoint) -> Adaptation:
        """What questbot will send this endpoint."""
        return Adaptation(
            tool_choice_required=self.tool_choice_required is not False,
            null_content=self.null_content is not False,
            output_limit_field=self.output_limit_field,
            context_window=endpoint.context_window or self.context_window,
            source="probe")


class _Client:
    def __init__(self, session: aiohttp.ClientSession, endpoint: ModelEndpoint) -> None:
        self.session = session
        self.endpoint = endpoint
        key = endpoint.api_key.get_secret_value() if endpoint.api_key else NO_KEY
        self.headers = ({"x-api-key": key, "anthropic-version": "2023-06-01"}
                        if endpoint.wire is Wire.ANTHROPIC else
                        {"authorization": f"Bearer {key}"})

    async def get(self, url: str) -> tuple[int, Any]:
        async with self.session.get(url, headers=self.headers) as response:
            return response.status, await _body(response)

    async def post(self, path: str, body: dict[str, Any]) -> tuple[int, Any]:
        async with self.session.post(self.endpoint.base_url + path, json=body,
                                     headers=self.headers) as response:
            return response.status, await _body(response)


async def _body(response: aiohttp.ClientResponse) -> Any:
    text = await response.text()
    try:
        return json.loads(text)
    except ValueError:
        return text


def _words(status: int, body: Any) -> str:
    return f"HTTP {status} {quoted(server_message(body), 300)}"


async def probe(endpoint: ModelEndpoint, *, timeout_seconds: float = 60.0) -> Facts:
    """Ask the endpoint (the module docs); never raises for what the endpoint does."""
    facts = Facts(url=endpoint.base_url, model=endpoint.model)
    timeout = aiohttp.ClientTimeout(total=min(timeout_seconds, endpoint.request_timeout_seconds))
    async with aiohttp.ClientSession(timeout=timeout) as session:
        client = _Client(session, endpoint)
        try:
            if endpoint.wire is Wire.ANTHROPIC:
                await _anthropic(client, facts)
            else:
                await _window(client, facts)
                await _openai(client, facts)
        except (aiohttp.ClientError, TimeoutError) as exc:
            facts.said.append(f"could not be reached or did not answer: "
                              f"{type(exc).__name__} {str(exc)[:200]}".strip())
    if endpoint.context_window:
        facts.context_window = endpoint.context_window
    return facts


async def _window(client: _Client, facts: Facts) -> None:
    status, body = await client.get(f"{client.endpoint.base_url}/models")
    facts.reachable = True
    listed = body.get("data") if status == 200 and isinstance(body, dict) else None
    models = [m for m in listed or [] if isinstance(m, dict)]
    for model in models:
        if model.get("id") != facts.model and len(models) > 1:
            continue
        for key in ("max_model_len", "context_length", "context_window"):
            if isinstance(model.get(key), int):
                facts.context_window = int(model[key])
    if facts.context_window is None:
        host = client.endpoint.base_url.removesuffix("/v1")
        try:
            status, body = await client.get(f"{host}/props")
        except aiohttp.ClientError:
            return
        if status == 200 and isinstance(body, dict):
            n_ctx = (body.get("default_generation_settings") or {}).get("n_ctx")
            if isinstance(n_ctx, int):
                facts.context_window = n_ctx


def _tools_request(model: str, tool_choice: str) -> dict[str, Any]:
    return {"model": model, "max_tokens": 64,
            "messages": [{"role": "system", "content": SYSTEM},
                         {"role": "user", "content": f"{PROBE}: tools. Call the tool `note` "
                                                     "with the text \"ok\"."}],
            "tools": [{"type": "function", "function": NOTE_TOOL}], "tool_choice": tool_choice}


async def _openai(client: _Client, facts: Facts) -> None:
    model = facts.model
    status, body = await client.post("/chat/completions", _tools_request(model, "required"))
    facts.reachable = True
    choice = "required"
    if status in BUSY:
        facts.said.append(f"busy, so nothing could be learned: {_words(status, body)}")
        return
    if status >= 400:
        facts.tool_choice_required = False
        facts.said.append(f"tool_choice \"required\": {_words(status, body)}")
        choice = "auto"
        status, body = await client.post("/chat/completions", _tools_request(model, choice))
    elif status < 300:
        facts.tool_choice_required = True
    if status >= 300 or not isinstance(body, dict):
        facts.said.append(f"a request with a tool: {_words(status, body)}")
        return
    message = (body.get("choices") or [{}])[0].get("message") or {}
    calls = message.get("tool_calls") or []
    if calls:
        facts.tool_calls_parsed, facts.tool_calls_as_text = True, False
        call = calls[0]
    else:
        written = tool_calls_in(message.get("content") or "", ["note"])
        facts.tool_calls_parsed = False
        facts.tool_calls_as_text = bool(written)
        args = written[0][1] if written else {"text": "ok"}
        call = {"id": "call_questbot_check", "type": "function",
                "function": {"name": "note", "arguments": json.dumps(args)}}
        if not written:
            facts.said.append("the answer held no tool call: "
                              f"\"{' '.join(str(message.get('content') or '').split())[:200]}\"")
    await _history(client, facts, call, choice)
    await _limit(client, facts)
    await _stream(client, facts)


async def _history(client: _Client, facts: Facts, call: dict[str, Any], choice: str) -> None:
    request = _tools_request(facts.model, choice)
    request["messages"] += [
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": call.get("id") or "call_questbot_check",
         "content": "noted"}]
    status, body = await client.post("/chat/completions", request)
    if status < 300:
        facts.null_content = True
        return
    facts.said.append(f"an assistant message with content null: {_words(status, body)}")
    request["messages"][2]["content"] = ""
    status, body = await client.post("/chat/completions", request)
    facts.null_content = False
    if status >= 300:
        facts.said.append(f"the same with content \"\": {_words(status, body)}")


async def _limit(client: _Client, facts: Facts) -> None:
    for name in ("max_completion_tokens", "max_tokens"):
        request = {"model": facts.model, name: LIMIT,
                   "messages": [{"role": "user", "content": f"{PROBE}: limit. Count from 1 to "
                                                            "100, the numbers apart."}]}
        status, body = await client.post("/chat/completions", request)
        if status >= 300 or not isinstance(body, dict):
            facts.said.append(f"the output limit in {name}: {_words(status, body)}")
            continue
        spent = (body.get("usage") or {}).get("completion_tokens")
        if isinstance(spent, int) and spent <= LIMIT:
            facts.output_limit_field = name
            return
    facts.said.append("no output limit field stopped a long answer short")


async def _stream(client: _Client, facts: Facts, path: str = "/chat/completions",
                  request: dict[str, Any] | None = None) -> None:
    """Whether ``stream: true`` gets server-sent events (``data:`` lines), where a server that
    ignores it answers one JSON body."""
    request = request or {
        "model": facts.model, facts.output_limit_field or "max_tokens": LIMIT,
        "messages": [{"role": "user", "content": f"{PROBE}: limit. Count from 1 to 100, the "
                                                 "numbers apart."}]}
    async with client.session.post(client.endpoint.base_url + path,
                                   json={**request, "stream": True},
                                   headers=client.headers) as response:
        text = await response.text()
        kind = response.headers.get("content-type", "")
        status = response.status
    if status >= 300:
        facts.said.append(f"a streamed answer: HTTP {status} {quoted(text, 300)}")
        facts.streaming = False
        return
    facts.streaming = kind.startswith("text/event-stream") or text.lstrip().startswith(
        ("data:", "event:"))


async def _anthropic(client: _Client, facts: Facts) -> None:
    request = {"model": facts.model, "max_tokens": 64, "system": SYSTEM,
               "messages": [{"role": "user", "content": f"{PROBE}: tools. Call the tool "
                                                        "`note` with the text \"ok\"."}],
               "tools": [{"name": NOTE_TOOL["name"], "description": NOTE_TOOL["description"],
                          "input_schema": NOTE_TOOL["parameters"]}],
               "tool_choice": {"type": "any"}}
    status, body = await client.post("/v1/messages", request)
    facts.reachable = True
    facts.output_limit_field = "max_tokens"
    if status in BUSY:
        facts.said.append(f"busy, so nothing could be learned: {_words(status, body)}")
        return
    if status >= 300 or not isinstance(body, dict):
        facts.tool_choice_required = False
        facts.said.append(f"tool_choice any: {_words(status, body)}")
        return
    facts.tool_choice_required = True
    blocks = body.get("content") or []
    facts.tool_calls_parsed = any(b.get("type") == "tool_use" for b in blocks)
    facts.tool_calls_as_text = False
    await _stream(client, facts, "/v1/messages", request)
