"""How real inference servers answer, played by the recorded model server.

The recorded conversations (``recorded/openai|anthropic``) say what a careful model answers;
how a *server* answers — what it refuses, how it hands over a tool call, when it stops
answering, how it counts its context — is the server's, and no two agree. Each behaviour here
plays one such fact, and each fact is a recorded or documented exchange kept in
``recorded/real/<fact>.json`` with its source (a real server recorded through a logging proxy,
a vendor's documentation, an issue quoting the body). The server follows real servers, never
the reverse: a behaviour plays only what its fact shows, and ``tests/questbot_testing/
modelserver/test_behaviours.py`` holds each one to its fact.

A behaviour sees every request before the recorded turn is looked up (``before``: it may answer
instead — a refusal, a rate limit, a hang) and the recorded answer after (``after``: it may
reshape it — the tool call as text, the output cut at the limit the server honours). The
servers people run are named sets of them (``llamacpp_chatml_function_calling()``,
``llamacpp_model_template()``, ``vllm()``, ``ollama()``, ``openai()``).

Tokens: a real server counts the prompt with its tokenizer; here four characters of the
request's messages and tools are one token (``prompt_tokens``), a stand-in questbot cannot
know and must not rely on.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

REAL = Path(__file__).parent / "recorded" / "real"

HANG = "hang"
"""``before``'s answer for a server that never answers: no status line, no byte, no close."""


def fact(name: str) -> dict[str, Any]:
    """The recorded or documented exchange ``recorded/real/<name>.json``."""
    return dict(json.loads((REAL / f"{name}.json").read_text()))


def filled(value: Any, values: Mapping[str, object]) -> Any:
    """``value`` with ``$NAME`` placeholders replaced: a whole-string placeholder by the value
    itself (a number stays a number), one inside a string by its text."""
    if isinstance(value, dict):
        return {k: filled(v, values) for k, v in value.items()}
    if isinstance(value, list):
        return [filled(v, values) for v in value]
    if isinstance(value, str):
        for name, replacement in values.items():
            if value == f"${name}":
                return replacement
            value = value.replace(f"${name}", str(replacement))
    return value


@dataclass(frozen=True)
class Request:
    protocol: str
    body: dict[str, Any]
    number: int
    """The n-th model request this server was sent (1-based)."""


@dataclass(frozen=True)
class Answer:
    status: int
    body: dict[str, Any]
    headers: dict[str, str] = field(default_factory=dict)
    fact: str = ""


def prompt_tokens(body: Mapping[str, Any]) -> int:
    """The prompt's size as this server counts it: four characters a token."""
    text = json.dumps(body.get("messages", [])) + json.dumps(body.get("tools", [])) + \
        json.dumps(body.get("system", ""))
    return len(text) // 4


class Behaviour:
    """One way a real server answers (the module docs); by default it changes nothing."""

    fact: str = ""

    def before(self, request: Request) -> Answer | Literal["hang"] | None:
        return None

    def after(self, request: Request, response: dict[str, Any]) -> dict[str, Any]:
        return response

    def models(self, model: str) -> dict[str, Any] | None:
        """``GET /v1/models`` as this server answers it; ``None``: not this behaviour's."""
        return None


# --- llama.cpp (llama-cpp-python's server) ---------------------------------------------------


class RefusesRequired(Behaviour):
    """chatml-function-calling: ``tool_choice: "required"`` is an HTTP 500 with no message."""

    fact = "llamacpp-required-500"

    def before(self, request: Request) -> Answer | None:
        if request.protocol == "openai" and request.body.get("tool_choice") == "required":
            recorded = fact(self.fact)
            return Answer(recorded["status"], recorded["body"], fact=self.fact)
        return None


def null_content_body(index: int, message: Mapping[str, Any]) -> dict[str, Any]:
    """llama-cpp-python's 500 for an assistant message whose content is null: its request
    model tries each message type in turn and reports every one's failure (pydantic's own
    words, the input as Python shows it)."""
    loc = f"('body', 'messages', {index}, "
    lines = [
        f"{{'type': 'literal_error', 'loc': {loc}'ChatCompletionRequestSystemMessage', 'role')"
        f", 'msg': \"Input should be 'system'\", 'input': 'assistant', 'ctx': {{'expected': "
        f"\"'system'\"}}}}",
        f"{{'type': 'literal_error', 'loc': {loc}'ChatCompletionRequestUserMessage', 'role'), "
        f"'msg': \"Input should be 'user'\", 'input': 'assistant', 'ctx': {{'expected': "
        f"\"'user'\"}}}}",
        f"{{'type': 'string_type', 'loc': {loc}'ChatCompletionRequestAssistantMessage', "
        f"'content'), 'msg': 'Input should be a valid string', 'input': None}}",
        f"{{'type': 'literal_error', 'loc': {loc}'ChatCompletionRequestToolMessage', 'role'), "
        f"'msg': \"Input should be 'tool'\", 'input': 'assistant', 'ctx': {{'expected': "
        f"\"'tool'\"}}}}",
        f"{{'type': 'missing', 'loc': {loc}'ChatCompletionRequestToolMessage', "
        f"'tool_call_id'), 'msg': 'Field required', 'input': {dict(message)!r}}}",
        f"{{'type': 'literal_error', 'loc': {loc}'ChatCompletionRequestFunctionMessage', "
        f"'role'), 'msg': \"Input should be 'function'\", 'input': 'assistant', 'ctx': "
        f"{{'expected': \"'function'\"}}}}",
        f"{{'type': 'missing', 'loc': {loc}'ChatCompletionRequestFunctionMessage', 'name'), "
        f"'msg': 'Field required', 'input': {dict(message)!r}}}",
    ]
    message_text = ("7 validation errors:\n" + "".join(f"  {line}\n" for line in lines)
                    + "\n  File \"site-packages/llama_cpp/server/app.py\", line 376, in "
                      "create_chat_completion\n    POST /v1/chat/completions")
    return {"error": {"message": message_text, "type": "internal_server_error", "param": None,
                      "code": None}}


class RefusesNullContent(Behaviour):
    """An assistant message with ``content: null`` (valid OpenAI) is an HTTP 500."""

    fact = "llamacpp-null-content-500"

    def before(self, request: Request) -> Answer | None:
        if request.protocol != "openai":
            return None
        for index, message in enumerate(request.body.get("messages", [])):
            if message.get("role") == "assistant" and "content" in message \
                    and message["content"] is None:
                return Answer(500, null_content_body(index, message), fact=self.fact)
        return None


TextStyle = Literal["fenced", "lines", "functions", "hermes"]


def call_as_text(style: TextStyle, name: str, arguments: Mapping[str, Any]) -> str:
    """One tool call written as the model wrote it (``llamacpp-tool-call-as-text``,
    ``hermes-tool-call-as-text``)."""
    if style == "fenced":  # jinja/026: a JSON object, indented two, in a json fence
        return "```json\n" + json.dumps({"name": name, "arguments": arguments}, indent=2) + \
            "\n```"
    if style == "lines":  # full/004: a JSON object on a line
        return json.dumps({"name": name, "arguments": arguments})
    if style == "functions":  # chatml-function-calling's own format: the name, then the JSON
        return f"functions.{name}:" + (f"\n{json.dumps(arguments)}" if arguments else "")
    template = fact("hermes-tool-call-as-text")["template"]
    return template.replace("$NAME", name).replace("$ARGUMENTS", json.dumps(arguments))


class ToolCallsAsText(Behaviour):
    """The model's own chat template: the tool calls come back written in ``content``,
    ``tool_calls`` absent, ``finish_reason`` stop."""

    fact = "llamacpp-tool-call-as-text"

    def __init__(self, style: TextStyle = "fenced") -> None:
        self.style: TextStyle = style

    def after(self, request: Request, response: dict[str, Any]) -> dict[str, Any]:
        if request.protocol != "openai":
            return response
        out = json.loads(json.dumps(response))
        for choice in out.get("choices", []):
            message = choice["message"]
            calls = message.pop("tool_calls", None) or []
            if not calls:
                continue
            texts = [message.get("content") or ""] if message.get("content") else []
            texts += [call_as_text(self.style, c["function"]["name"],
                                   json.loads(c["function"]["arguments"] or "{}"))
                      for c in calls]
            choice["message"] = {"content": "\n".join(texts), "role": "assistant"}
            choice["finish_reason"] = "stop"
        return out


class AnswersInProse(Behaviour):
    """The model's own template on a model that does not call tools: whatever is asked, an
    answer in prose, no tool call in any form (``llamacpp-prose``). The answer and its output
    tokens are the recorded ones; the prompt is counted as this server counts every prompt
    (``prompt_tokens``) — the recorded count was of the recorded request's prompt, not of the
    one asked now. ``counted`` keeps each answer's total."""

    fact = "llamacpp-prose"

    def __init__(self) -> None:
        self.counted: list[int] = []

    def before(self, request: Request) -> Answer | None:
        if request.protocol != "openai":
            return None
        recorded = fact(self.fact)
        prompt, completion = prompt_tokens(request.body), recorded["usage"]["completion_tokens"]
        self.counted.append(prompt + completion)
        return Answer(200, {
            "id": f"chatcmpl-prose-{request.number}", "object": "chat.completion",
            "created": 1796168516, "model": request.body.get("model", "m"),
            "choices": [{"index": 0, "message": {"content": recorded["content"],
                                                 "role": "assistant"},
                         "logprobs": None, "finish_reason": recorded["finish_reason"]}],
            "usage": {"prompt_tokens": prompt, "completion_tokens": completion,
                      "total_tokens": prompt + completion}}, fact=self.fact)


class OutputLimit(Behaviour):
    """The output limit the server reads (``llamacpp-output-limit``): a field it does not know
    is ignored; one it honours cuts the answer at that many tokens, ``finish_reason`` length."""

    fact = "llamacpp-output-limit"

    def __init__(self, honours: Collection[str] = ("max_tokens",)) -> None:
        self.honours = frozenset(honours)

    def after(self, request: Request, response: dict[str, Any]) -> dict[str, Any]:
        limits = [int(request.body[f]) for f in self.honours if request.body.get(f)]
        usage = response.get("usage", {})
        spent = usage.get("completion_tokens", usage.get("output_tokens", 0))
        if not limits or min(limits) >= spent:
            return response
        limit = min(limits)
        out = json.loads(json.dumps(response))
        if request.protocol == "openai":
            for choice in out.get("choices", []):
                text = choice["message"].get("content") or ""
                choice["message"] = {"content": text[:limit * 4], "role": "assistant"}
                choice["finish_reason"] = "length"
            out["usage"]["completion_tokens"] = limit
            out["usage"]["total_tokens"] = out["usage"]["prompt_tokens"] + limit
        else:
            out["content"] = [b for b in out["content"] if b.get("type") == "text"]
            out["stop_reason"] = "max_tokens"
            out["usage"]["output_tokens"] = limit
        return out


class ModelsOf(Behaviour):
    """``GET /v1/models``: what the server says of its models (``$MODEL`` the model's id)."""

    def __init__(self, fact_name: str, key: str = "body", **values: object) -> None:
        self.fact = fact_name
        self.key = key
        self.values = values

    def models(self, model: str) -> dict[str, Any]:
        return dict(filled(fact(self.fact)[self.key], {"MODEL": model, **self.values}))


class Hang(Behaviour):
    """Answers ``answered`` requests, then never answers again (``llamacpp-hang``)."""

    fact = "llamacpp-hang"

    def __init__(self, answered: int = 1) -> None:
        self.answered = answered

    def before(self, request: Request) -> Literal["hang"] | None:
        return HANG if request.number > self.answered else None


# --- what the hosted APIs and vLLM answer ---------------------------------------------------


class Refuses(Behaviour):
    """Answers the first ``times`` requests with a recorded refusal: a rate limit (429 with
    ``retry-after``) or an overload (Anthropic's 529) — then as usual."""

    def __init__(self, fact_name: str, times: int = 1, retry_after: float = 0.05) -> None:
        self.fact = fact_name
        self.left = times
        self.retry_after = retry_after

    def before(self, request: Request) -> Answer | None:
        if self.left <= 0:
            return None
        self.left -= 1
        recorded = fact(self.fact)
        headers = filled(recorded.get("headers", {}), {"RETRY_AFTER": f"{self.retry_after:g}"})
        return Answer(recorded["status"], recorded["body"], dict(headers), fact=self.fact)


class ContextLimit(Behaviour):
    """A context window of ``window`` tokens, refused as ``style``'s server refuses it: vLLM
    counts the prompt plus the output limit asked for (``vllm-context-400``); OpenAI and
    Anthropic the prompt (``openai-context-400``, ``anthropic-context-400``)."""

    def __init__(self, window: int, style: Literal["vllm", "openai", "anthropic"]) -> None:
        self.window = window
        self.style = style
        self.fact = f"{style}-context-400"

    def before(self, request: Request) -> Answer | None:
        prompt = prompt_tokens(request.body)
        completion = 0
        if self.style == "vllm":
            completion = int(request.body.get("max_tokens")
                             or request.body.get("max_completion_tokens") or 0)
        if prompt + completion <= self.window:
            return None
        recorded = fact(self.fact)
        body = filled(recorded["body"], {"WINDOW": self.window, "PROMPT": prompt,
                                         "COMPLETION": completion,
                                         "TOTAL": prompt + completion})
        return Answer(recorded["status"], body, fact=self.fact)

    def models(self, model: str) -> dict[str, Any] | None:
        if self.style != "vllm":
            return None
        return dict(filled(fact(self.fact)["models"], {"MODEL": model, "WINDOW": self.window}))


# --- Ollama -----------------------------------------------------------------------------------


def tool_block_start(messages: list[dict[str, Any]], index: int) -> int:
    """Ollama's ``toolBlockStartIndex``: where a conversation may start at ``index`` without
    orphaning a tool result from the assistant call that produced it."""
    if index <= 0 or index >= len(messages) or messages[index].get("role") != "tool":
        return index
    start = index
    while start > 0 and messages[start - 1].get("role") == "tool":
        start -= 1
    call = start - 1
    if call >= 0 and messages[call].get("role") == "assistant" and messages[call].get(
            "tool_calls"):
        return call
    return index


def ollama_kept(body: Mapping[str, Any], num_ctx: int) -> list[dict[str, Any]]:
    """The messages Ollama's ``chatPrompt`` gives the model of ``body`` within ``num_ctx``:
    from the front, the first start from which the rest fits, system messages kept; the
    latest message (with its call) always, fitting or not."""
    messages = list(body.get("messages", []))
    for index in range(len(messages)):
        start = tool_block_start(messages, index)
        kept = [m for m in messages[:start] if m.get("role") == "system"] + messages[start:]
        if prompt_tokens({**body, "messages": kept}) <= num_ctx or index == len(messages) - 1:
            return kept
    return messages


class Truncates(Behaviour):
    """Ollama past its context window (``ollama-truncation``): the conversation is cut from the
    front — system messages kept, the oldest others dropped until the rest fits ``num_ctx``,
    a prompt still too long cut to ``num_ctx`` by the runner — with no error and nothing in the
    answer but ``usage.prompt_tokens``, the tokens of what the model was shown. Every answer
    counts its prompt so (four characters a token, ``prompt_tokens``).

    Sources (quoted in the fact): Ollama's ``server/prompt.go`` ``chatPrompt`` ("truncates
    any messages that exceed the context window of the model, making sure to always include
    1) the latest message and 2) system messages"), ``server/routes.go`` ``ChatHandler``
    (``truncate := req.Truncate == nil || *req.Truncate``: on unless asked off, and the
    OpenAI-compatible endpoint never asks), ollama/ollama issues 4967 and 14259 (silent, no
    field in the answer says so) and 3427 (``prompt_eval_count`` is what fit), and
    ``docs/context-length.mdx`` (4k by default below 24 GiB of VRAM).

    What the model then answers is the model's; the recorded turn stands in for it, as if it
    had not noticed — the silently wrong answer a real server leaves questbot to find.
    ``cut`` keeps how many messages each request lost (0: none)."""

    fact = "ollama-truncation"

    def __init__(self, num_ctx: int = 4096) -> None:
        self.num_ctx = num_ctx
        self.cut: list[int] = []

    def after(self, request: Request, response: dict[str, Any]) -> dict[str, Any]:
        if request.protocol != "openai":
            return response
        kept = ollama_kept(request.body, self.num_ctx)
        self.cut.append(len(request.body.get("messages", [])) - len(kept))
        counted = min(prompt_tokens({**request.body, "messages": kept}), self.num_ctx)
        out = json.loads(json.dumps(response))
        usage = out.setdefault("usage", {})
        usage["prompt_tokens"] = counted
        usage["total_tokens"] = counted + int(usage.get("completion_tokens", 0))
        return out


# --- the servers people run ------------------------------------------------------------------


def openai() -> list[Behaviour]:
    """OpenAI's API: both output limit fields honoured (``max_tokens`` deprecated but read)."""
    return [OutputLimit(("max_completion_tokens", "max_tokens"))]


def llamacpp_chatml_function_calling() -> list[Behaviour]:
    """llama-cpp-python's server with ``--chat_format chatml-function-calling``: ``required``
    refused, null content refused, ``max_tokens`` the only limit read; ``auto`` and a named
    tool answer parsed tool calls (the direct probe)."""
    return [RefusesRequired(), RefusesNullContent(), OutputLimit(("max_tokens",)),
            ModelsOf("llamacpp-models")]


def llamacpp_model_template(style: TextStyle = "fenced") -> list[Behaviour]:
    """The same server with the model's own chat template (its default): ``required``
    accepted, tool calls written as text, null content refused, ``max_tokens`` read."""
    return [RefusesNullContent(), ToolCallsAsText(style), OutputLimit(("max_tokens",)),
            ModelsOf("llamacpp-models")]


def ollama(num_ctx: int = 4096) -> list[Behaviour]:
    """Ollama's OpenAI-compatible endpoint with the model's context window ``num_ctx`` (its
    default below 24 GiB of VRAM is 4096: ``ollama-truncation``)."""
    return [Truncates(num_ctx)]


def vllm(window: int) -> list[Behaviour]:
    """vLLM's OpenAI-compatible server with ``--max-model-len window``."""
    return [ContextLimit(window, "vllm"), OutputLimit(("max_completion_tokens", "max_tokens"))]
