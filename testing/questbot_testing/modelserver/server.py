"""A local model server speaking OpenAI chat completions and Anthropic Messages, answering from
recorded conversations.

Theory of operation
-------------------

A model API is stateless: every request carries the whole conversation so far. So a recorded
conversation is a list of *turns*, the n-th turn being the answer to a request that already
holds n - 1 answers of the assistant. A request is matched to its turn in three steps:

1. **Which protocol**: ``POST /v1/chat/completions`` is OpenAI's, ``POST /v1/messages``
   Anthropic's, ``POST /v1/responses`` OpenAI's Responses API, which Codex speaks (a query
   string such as ``?beta=true`` is ignored).
2. **Which conversation**: every recorded conversation of that protocol whose ``match``
   strings all occur in the request's first user message (for the Responses API, whose
   clients send the user's context as several messages, the user messages before the first
   answer). Exactly one must match. A conversation marked ``preamble`` (aider's: it sends
   worked examples, user and assistant messages, before the task) may match a later user
   message instead; it starts there, and only the answers after it count as turns.
3. **Which turn**: the number of assistant messages in the request (for the Responses API,
   the assistant's output items: messages and function calls; each recorded turn answers
   one). The turn's ``expect`` says what the request must hold since the last answer
   (``last_contains``: substrings of the tool results or user text sent since), which tools
   it must offer (``tools``) and which it must not (``absent_tools``).

Anything else — no conversation, two, a turn past the end, a missing expectation, a recorded
tool call of a tool the request did not offer — is answered 400 in the protocol's own error
shape, and the reason is kept in ``errors``: ``assert_clean()`` raises with every one of
them, so a test fails loudly rather than on a vague "the agent failed". A 400 also keeps the
SDKs from retrying (they retry 408, 429 and 5xx).

The answers are the recorded JSON bodies, as the real APIs send them (ids, ``tool_calls``
with JSON-string ``arguments`` for OpenAI, ``tool_use`` blocks for Anthropic, ``output``
items for the Responses API, and ``usage``). A request that asks to stream (Claude Code and
Codex always do) gets the same response cut into the events its API documents
(``streams.py``).
Only ``substitutions`` are applied: ``$NAME`` → value, for what differs per machine (the
Python that runs a reproduction). Values must not need JSON escaping.

How a *server* answers — a refusal of ``tool_choice: "required"``, tool calls written as text,
a hang, a rate limit, a context window — is played by ``behaviours`` (``behaviours.py``), each
from a recorded or documented exchange of a real server. Without any, the server answers as
OpenAI's and Anthropic's APIs answer a request they accept. What a behaviour answered instead
of a turn is kept in ``played`` (its fact's name and status), not in ``errors``: it is the
server's behaviour, not a surprise.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aiohttp import web

from questbot_testing.modelserver import streams
from questbot_testing.modelserver.behaviours import HANG, Answer, Behaviour, Request

RECORDED = Path(__file__).parent / "recorded"


@dataclass(frozen=True)
class Conversation:
    name: str
    protocol: str
    match: tuple[str, ...]
    turns: tuple[dict[str, Any], ...]
    preamble: bool = False
    """The client sends example exchanges of its own before the task (aider does)."""

    @classmethod
    def load(cls, path: Path) -> Conversation:
        data = json.loads(path.read_text())
        return cls(name=data.get("name", path.stem), protocol=data["protocol"],
                   match=tuple(data["match"]), turns=tuple(data["turns"]),
                   preamble=bool(data.get("preamble", False)))

    def start(self, first: str, answers: int,
              users: Sequence[tuple[str, int]]) -> int | None:
        """Where this conversation starts in a request (the answers it holds since), or
        ``None`` when it does not match the request."""
        if all(m in first for m in self.match):
            return answers
        for text, after in users if self.preamble else ():
            if all(m in text for m in self.match):
                return after
        return None


def recorded(protocol: str, *names: str) -> list[Conversation]:
    """The conversations ``names`` of ``protocol``: ``recorded/<protocol>/<name>.json``."""
    return [Conversation.load(RECORDED / protocol / f"{name}.json") for name in names]


@dataclass
class Served:
    conversation: str
    turn: int
    request: dict[str, Any]
    headers: dict[str, str]


@dataclass
class ModelServer:
    conversations: Sequence[Conversation]
    substitutions: Mapping[str, str] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    served: list[Served] = field(default_factory=list)
    url: str = ""
    port: int = 0
    """The port to listen on (0: any free one); a test restarts a server on the same one."""
    behaviours: Sequence[Behaviour] = ()
    """How this server answers beyond the recorded turns (``behaviours.py``)."""
    played: list[tuple[str, int]] = field(default_factory=list)
    """``(fact, status)`` of each answer a behaviour gave instead of a turn (``hang``: none)."""
    requests: int = 0
    """Model requests received, answered or not."""
    _runner: web.AppRunner | None = None

    def __post_init__(self) -> None:
        for value in self.substitutions.values():
            assert json.dumps(value)[1:-1] == value, f"{value!r} would need JSON escaping"

    async def start(self) -> ModelServer:
        app = web.Application()
        app.router.add_post("/v1/chat/completions", self._openai)
        app.router.add_post("/v1/messages", self._anthropic)
        app.router.add_post("/v1/responses", self._responses)
        app.router.add_get("/v1/models", self._models)
        app.router.add_get("/props", self._no_props)
        app.router.add_route("*", "/{tail:.*}", self._unknown)
        # a hanging handler never ends by itself: the runner stops waiting for it at once
        self._runner = web.AppRunner(app, access_log=None, shutdown_timeout=0.5)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", self.port)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        self.url = f"http://127.0.0.1:{port}"
        return self

    async def close(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()

    async def __aenter__(self) -> ModelServer:
        return await self.start()

    async def __aexit__(self, *_: object) -> None:
        await self.close()

    def assert_clean(self) -> None:
        if self.errors:
            raise AssertionError("the model server met unexpected requests:\n- "
                                 + "\n- ".join(self.errors))

    def turns_of(self, name: str) -> list[int]:
        return [s.turn for s in self.served if s.conversation == name]

    # --- the two protocols ----------------------------------------------------------------

    async def _openai(self, request: web.Request) -> web.Response:
        body = await request.json()
        messages = body.get("messages", [])
        first = next((_text(m.get("content")) for m in messages if m.get("role") == "user"), "")
        answers = sum(1 for m in messages if m.get("role") == "assistant")
        since: list[str] = []
        for m in reversed(messages):
            if m.get("role") == "assistant":
                break
            since.append(_text(m.get("content")))
        offered = {t["function"]["name"] for t in body.get("tools", []) if "function" in t}
        users = [(_text(m.get("content")),
                  sum(1 for later in messages[n:] if later.get("role") == "assistant"))
                 for n, m in enumerate(messages) if m.get("role") == "user"]
        return await self._answer("openai", request, body, first, answers, since, offered,
                                  users)

    async def _anthropic(self, request: web.Request) -> web.Response:
        body = await request.json()
        messages = body.get("messages", [])
        first = next((_text(m.get("content")) for m in messages if m.get("role") == "user"), "")
        answers = sum(1 for m in messages if m.get("role") == "assistant")
        since = []
        for m in reversed(messages):
            if m.get("role") == "assistant":
                break
            since.append(_text(m.get("content")))
        offered = {t["name"] for t in body.get("tools", []) if "name" in t}
        return await self._answer("anthropic", request, body, first, answers, since, offered)

    async def _responses(self, request: web.Request) -> web.Response:
        body = await request.json()
        items = body.get("input", [])
        if isinstance(items, str):
            items = [{"type": "message", "role": "user", "content": items}]
        answered = [i for i, item in enumerate(items) if _answered(item)]
        first = "\n".join(_text(item.get("content")) for item in
                          items[:answered[0] if answered else len(items)]
                          if item.get("role") == "user")
        since: list[str] = []
        for item in reversed(items):
            if _answered(item):
                break
            since.append(str(item["output"]) if item.get("type") == "function_call_output"
                         else _text(item.get("content")))
        offered = {t["name"] for t in body.get("tools", []) if "name" in t}
        return await self._answer("responses", request, body, first, len(answered), since,
                                  offered)

    async def _models(self, request: web.Request) -> web.Response:
        """``GET /v1/models``: as the first behaviour that knows it answers, else as OpenAI's
        API lists a model (its id and owner, nothing about its context window)."""
        models = {c.protocol for c in self.conversations}
        model = "gpt-4.1-mini" if "openai" in models or not models else "claude-sonnet-4-5"
        for behaviour in self.behaviours:
            listed = behaviour.models(model)
            if listed is not None:
                return web.json_response(listed)
        return web.json_response({"object": "list", "data": [
            {"id": model, "object": "model", "created": 1764000000, "owned_by": "system"}]})

    async def _no_props(self, request: web.Request) -> web.Response:
        """``GET /props`` is llama.cpp's own server's (its context window); the servers played
        here have none and answer as FastAPI does a path it does not serve (llama-cpp-python,
        vLLM): 404 ``{"detail": "Not Found"}``. Asked by ``questbot model check``."""
        return web.json_response({"detail": "Not Found"}, status=404)

    async def _unknown(self, request: web.Request) -> web.Response:
        return self._refuse("openai", f"{request.method} {request.path} is no recorded endpoint")

    async def _answer(self, protocol: str, request: web.Request, body: dict[str, Any],
                      first: str, answers: int, since: list[str],
                      offered: set[str],
                      users: Sequence[tuple[str, int]] = ()) -> web.Response:
        self.requests += 1
        seen = Request(protocol, body, self.requests)
        for behaviour in self.behaviours:
            instead = behaviour.before(seen)
            if instead == HANG:
                self.played.append((behaviour.fact, 0))
                await asyncio.Event().wait()  # no status line, no byte, the connection open
            if isinstance(instead, Answer):
                self.played.append((instead.fact or behaviour.fact, instead.status))
                return web.json_response(instead.body, status=instead.status,
                                         headers=instead.headers)
        starts = {c.name: c.start(first, answers, users) for c in self.conversations
                  if c.protocol == protocol}
        candidates = [c for c in self.conversations
                      if c.protocol == protocol and starts[c.name] is not None]
        if len(candidates) != 1:
            names = [c.name for c in candidates]
            return self._refuse(protocol, f"{protocol} request matches {len(candidates)} "
                                f"recorded conversations {names}; first user message starts "
                                f"{first[:200]!r}")
        conversation = candidates[0]
        answers = starts[conversation.name] or 0
        if answers >= len(conversation.turns):
            return self._refuse(protocol, f"{conversation.name}: the request holds {answers} "
                                f"answers but only {len(conversation.turns)} turns are recorded; "
                                f"it sent {_cut(' | '.join(since))!r}")
        turn = conversation.turns[answers]
        expect = turn.get("expect", {})
        sent = "\n".join(since)
        missing = [s for s in expect.get("last_contains", []) if s not in sent]
        if missing:
            return self._refuse(protocol, f"{conversation.name} turn {answers + 1}: expected "
                                f"{missing} in what was sent since the last answer, got "
                                f"{_cut(sent)!r}")
        wanted = set(expect.get("tools", []))
        if not wanted <= offered:
            return self._refuse(protocol, f"{conversation.name} turn {answers + 1}: tools "
                                f"{sorted(wanted - offered)} not offered (offered "
                                f"{sorted(offered)})")
        unwanted = set(expect.get("absent_tools", [])) & offered
        if unwanted:
            return self._refuse(protocol, f"{conversation.name} turn {answers + 1}: tools "
                                f"{sorted(unwanted)} offered, which this stage must not have")
        text = json.dumps(turn["response"])
        for name, value in self.substitutions.items():
            text = text.replace(f"${name}", value)
        response = json.loads(text)
        called = _called(protocol, response)
        if not called <= offered:
            return self._refuse(protocol, f"{conversation.name} turn {answers + 1} calls "
                                f"{sorted(called - offered)}, which the request did not offer")
        for behaviour in self.behaviours:
            response = behaviour.after(seen, response)
        self.served.append(Served(conversation.name, answers + 1, body, dict(request.headers)))
        if body.get("stream"):
            events = (streams.anthropic(response) if protocol == "anthropic" else
                      streams.responses(response) if protocol == "responses" else
                      streams.openai(response, include_usage=bool(
                          (body.get("stream_options") or {}).get("include_usage"))))
            return web.Response(body=streams.encode(events), content_type="text/event-stream",
                                headers={"Cache-Control": "no-cache"})
        return web.json_response(response)

    def _refuse(self, protocol: str, message: str) -> web.Response:
        self.errors.append(message)
        error: dict[str, Any]
        if protocol == "anthropic":
            error = {"type": "error",
                     "error": {"type": "invalid_request_error", "message": message}}
        else:
            error = {"error": {"message": message, "type": "invalid_request_error",
                               "param": None, "code": None}}
        return web.json_response(error, status=400)


def _text(content: Any) -> str:
    """The text of a message's content: a string, or the text of its blocks (Anthropic's
    ``text`` and ``tool_result`` blocks, OpenAI's content parts)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    parts: list[str] = []
    for block in content:
        if isinstance(block, str):
            parts.append(block)
        elif block.get("type") == "tool_result":
            parts.append(_text(block.get("content")))
        elif block.get("type") == "input_text" or "text" in block:
            parts.append(str(block["text"]))
    return "\n".join(parts)


def _answered(item: dict[str, Any]) -> bool:
    """Whether a Responses API input item is one the assistant gave (a turn's answer)."""
    return item.get("type") == "function_call" or (
        item.get("type", "message") == "message" and item.get("role") == "assistant")


def _called(protocol: str, response: dict[str, Any]) -> set[str]:
    if protocol == "responses":
        return {i["name"] for i in response.get("output", []) if i.get("type") == "function_call"}
    if protocol == "anthropic":
        return {b["name"] for b in response.get("content", []) if b.get("type") == "tool_use"}
    calls = set()
    for choice in response.get("choices", []):
        for call in choice.get("message", {}).get("tool_calls") or []:
            calls.add(call["function"]["name"])
    return calls


def _cut(text: str, limit: int = 600) -> str:
    return text if len(text) <= limit else text[:limit] + "…"
