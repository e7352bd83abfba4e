"""A recorded whole response, sent as the event stream the API sends when asked to stream.

The coding-agent CLIs stream: Claude Code always asks Anthropic's Messages API for
``stream: true``, Codex always streams the Responses API. The recordings stay whole responses
(what a non-streaming request gets, readable and diffable); when a request asks to stream,
the server cuts the recorded response into the server-sent events each API documents, in
their order, carrying the same content and usage:

* **Anthropic Messages** (docs.anthropic.com, "Streaming Messages"): ``message_start`` (the
  message with empty content and the input usage), per content block ``content_block_start``,
  one ``content_block_delta`` (``text_delta``, or ``input_json_delta`` with the tool input as
  JSON text) and ``content_block_stop``, then ``message_delta`` (``stop_reason``, the output
  usage) and ``message_stop``.
* **OpenAI chat completions** (platform.openai.com, "The chat completion chunk object"):
  ``chat.completion.chunk`` objects — the role and content, each tool call with its index, id,
  name and arguments, the ``finish_reason`` — then, when ``stream_options.include_usage`` asked
  for it, a chunk with empty ``choices`` and the usage, and ``data: [DONE]``.
* **OpenAI Responses** (platform.openai.com, "Streaming events"): ``response.created`` and
  ``response.in_progress`` (the response with no output yet), per output item
  ``response.output_item.added``, for a message ``response.output_text.delta`` and
  ``.done``, ``response.output_item.done``, then ``response.completed`` with the whole
  response and its usage.

Each event is one ``event: TYPE`` line (Anthropic and Responses name it; chat completions do
not) and one ``data:`` line of JSON, separated by a blank line.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from typing import Any

Event = tuple[str | None, Any]
"""An SSE event: its name (``None``: a bare ``data:``) and its data (JSON, or ``[DONE]``)."""


def encode(events: Iterator[Event]) -> bytes:
    """The events as an ``text/event-stream`` body."""
    out: list[str] = []
    for name, data in events:
        if name is not None:
            out.append(f"event: {name}\n")
        text = data if isinstance(data, str) else json.dumps(data)
        out.append(f"data: {text}\n\n")
    return "".join(out).encode()


def anthropic(message: dict[str, Any]) -> Iterator[Event]:
    """A Messages API response as its documented stream."""
    usage = dict(message.get("usage") or {})
    start = copy.deepcopy(message) | {"content": [], "stop_reason": None,
                                      "stop_sequence": None}
    start["usage"] = usage | {"output_tokens": min(1, usage.get("output_tokens", 0))}
    yield "message_start", {"type": "message_start", "message": start}
    for index, block in enumerate(message.get("content") or []):
        kind = block.get("type")
        if kind == "tool_use":
            yield "content_block_start", {"type": "content_block_start", "index": index,
                                          "content_block": block | {"input": {}}}
            yield "content_block_delta", {"type": "content_block_delta", "index": index,
                                          "delta": {"type": "input_json_delta",
                                                    "partial_json": json.dumps(block["input"])}}
        else:
            yield "content_block_start", {"type": "content_block_start", "index": index,
                                          "content_block": block | {"text": ""}}
            yield "content_block_delta", {"type": "content_block_delta", "index": index,
                                          "delta": {"type": "text_delta",
                                                    "text": block.get("text", "")}}
        yield "content_block_stop", {"type": "content_block_stop", "index": index}
    yield "message_delta", {"type": "message_delta",
                            "delta": {"stop_reason": message.get("stop_reason"),
                                      "stop_sequence": message.get("stop_sequence")},
                            "usage": {"output_tokens": usage.get("output_tokens", 0)}}
    yield "message_stop", {"type": "message_stop"}


def openai(completion: dict[str, Any], *, include_usage: bool) -> Iterator[Event]:
    """A chat completion as its documented chunks."""
    head = {k: completion[k] for k in ("id", "created", "model", "system_fingerprint")
            if k in completion} | {"object": "chat.completion.chunk"}
    for choice in completion.get("choices") or []:
        index, message = choice.get("index", 0), choice.get("message") or {}
        first: dict[str, Any] = {"role": "assistant", "content": message.get("content") or ""}
        yield None, head | {"choices": [{"index": index, "delta": first,
                                         "finish_reason": None}]}
        for n, call in enumerate(message.get("tool_calls") or []):
            yield None, head | {"choices": [{"index": index, "delta": {"tool_calls": [
                {"index": n, "id": call["id"], "type": "function",
                 "function": call["function"]}]}, "finish_reason": None}]}
        yield None, head | {"choices": [{"index": index, "delta": {},
                                         "finish_reason": choice.get("finish_reason")}]}
    if include_usage:
        yield None, head | {"choices": [], "usage": completion.get("usage")}
    yield None, "[DONE]"


def responses(response: dict[str, Any]) -> Iterator[Event]:
    """A Responses API response as its documented stream."""
    sequence = iter(range(1_000_000))
    pending = copy.deepcopy(response) | {"status": "in_progress", "output": [],
                                         "usage": None}
    for kind in ("response.created", "response.in_progress"):
        yield kind, {"type": kind, "sequence_number": next(sequence), "response": pending}
    for index, item in enumerate(response.get("output") or []):
        yield "response.output_item.added", {
            "type": "response.output_item.added", "sequence_number": next(sequence),
            "output_index": index, "item": item | ({"content": []} if item.get("type") ==
                                                   "message" else {})}
        if item.get("type") == "message":
            for part_index, part in enumerate(item.get("content") or []):
                if part.get("type") != "output_text":
                    continue
                where = {"item_id": item.get("id"), "output_index": index,
                         "content_index": part_index}
                yield "response.output_text.delta", {
                    "type": "response.output_text.delta", "sequence_number": next(sequence),
                    **where, "delta": part.get("text", "")}
                yield "response.output_text.done", {
                    "type": "response.output_text.done", "sequence_number": next(sequence),
                    **where, "text": part.get("text", "")}
        yield "response.output_item.done", {
            "type": "response.output_item.done", "sequence_number": next(sequence),
            "output_index": index, "item": item}
    yield "response.completed", {"type": "response.completed",
                                 "sequence_number": next(sequence), "response": response}
