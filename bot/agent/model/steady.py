"""Every model request questbot makes, made steady: tried again only where that can help, in
one budget, fitted to the endpoint, and its tool calls read whatever form they came in.

Theory of operation
-------------------

``Steady`` wraps the pydantic-ai model of an endpoint (``ModelEndpoint.chat_model``). For each
request the conversation makes it:

1. builds the inner model for the endpoint's adaptation as it stands now
   (``ModelEndpoint.chosen``: ``tool_choice`` ``auto`` where ``required`` is refused, ``""``
   where null content is, the output limit's field), with the SDK's own retries off;
2. fits the request to the context window when one is known: the output limit is lowered to
   what the window leaves, and when the conversation itself has grown too long, the oldest
   tool results are cut until it fits (``_fit``);
3. sends it, and sorts a failure (``faults.classify``):

   * *unavailable* — the connection refused or dropped, no answer within the request timeout,
     429, 502/503/504, an overload (529): tried again after a wait (``retry-after`` when the
     endpoint sends one, else doubling from ``retry_wait_seconds``), up to ``retries`` more
     times; then ``ModelUnavailable`` with what happened, how often and for how long;
   * *refused* — 4xx, or a 500 that comes back the same for the same request: first, if the
     refusal is one an adaptation answers (``required``, null content, a context window it
     names), the adaptation is learned for the endpoint and the request sent again, once per
     adaptation; otherwise ``EndpointRefused`` with the server's own words. A plain 500 is sent
     once more before it counts as a refusal: it may have been a passing fault;

4. holds the endpoint to having read the whole conversation (``_whole``): a server that cuts
   a conversation past its context window without an error (Ollama does, from the front:
   ``questbot_testing/modelserver/recorded/real/ollama-truncation.json``) answers a
   conversation whose task it never saw, and says so only in the prompt tokens it counts.
   Within one conversation each request holds the one before whole, and more, so its count
   must grow; and a first request must count at least one token per eight non-blank
   characters of its text, a bound no tokenizer questbot knows comes near. A count below
   either was of a cut conversation: ``EndpointRefused`` says so with the counts and the
   settings that end it (``QUESTBOT_MODEL_CONTEXT_WINDOW`` keeps the conversation within the
   window; the server's own window raised). The first cut may pass unseen when what was added
   outweighs what was dropped; the next cannot, as the count stays under the window while
   the conversation grows. Checked on the ``openai`` wire, where the prompt tokens are the
   whole prompt's (cached ones included); skipped for a request questbot cut itself;
5. reads tool calls the model wrote as text in an answer without tool calls
   (``bot.agent.model.textual``), so the conversation sees the calls it meant.

Each retry and adaptation is logged and told to ``ModelEndpoint.observer`` (the worker's
``/metrics``). Usage is the conversation's: every response that came back is in its messages,
and a failed request spent nothing the endpoint reported.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
import time
import uuid
import weakref
from collections.abc import Sequence
from typing import Any, cast

from pydantic_ai.exceptions import ModelAPIError
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models import Model, ModelRequestParameters
from pydantic_ai.models.wrapper import WrapperModel
from pydantic_ai.settings import ModelSettings

from bot.agent.model import faults
from bot.agent.model.adaptation import Adaptation, learn
from bot.agent.model.endpoint import NO_KEY, ModelEndpoint, Wire
from bot.agent.model.errors import EndpointRefused, ModelUnavailable
from bot.agent.model.textual import tool_calls_in

log = logging.getLogger(__name__)

MAX_WAIT_SECONDS = 60.0
SAFETY_TOKENS = 64
"""Room left in the context window beyond the estimate: the template's own tokens."""
MIN_OUTPUT_TOKENS = 512
"""Less room than this for an answer, and the conversation is cut to make some."""
WORST_CHARS_PER_TOKEN = 8
"""Non-blank characters of text a token holds at most, for the tokenizers of the servers
questbot names (about four is usual; eight leaves room for long words): a prompt counted below
this was not read whole."""
CUT = ("(cut by questbot to keep the conversation within the model's context window; call "
       "the tool again if you need this)")


class Steady(WrapperModel):
    """``endpoint``'s model ``name``, made steady (the module docs)."""

    def __init__(self, endpoint: ModelEndpoint, name: str) -> None:
        self.endpoint = endpoint
        self.name = name
        self._built: tuple[Adaptation, Model] | None = None
        self._provider = _provider(endpoint)
        """One provider whatever the adaptation, on the HTTP client every conversation at the
        endpoint shares (``http_client``), which entering and leaving it does not close."""
        self._ratio = 1.0
        """How many tokens the endpoint counted per token estimated, at most (≥ 1)."""
        self._counted: tuple[int, int] | None = None
        """The last request's messages and the prompt tokens the endpoint counted for it
        (``_whole``); ``None`` before one, or after questbot cut one."""
        self._cut_now = False
        super().__init__(self._inner())

    def _inner(self) -> Model:
        chosen = self.endpoint.chosen
        if self._built is None or self._built[0] != chosen:
            self._built = (chosen, _build(self.endpoint, self.name, chosen, self._provider))
            self.wrapped = self._built[1]
        return self._built[1]

    def _tell(self, kind: str, what: str) -> None:
        if self.endpoint.observer is not None:
            self.endpoint.observer(kind, what)

    async def request(self, messages: list[ModelMessage], model_settings: ModelSettings | None,
                      model_request_parameters: ModelRequestParameters) -> ModelResponse:
        params = model_request_parameters
        tries, started, last_refusal = 0, time.monotonic(), ""
        tried: set[str] = set()
        while True:
            sent, settings = self._fit(messages, dict(model_settings or {}), params)
            try:
                response = await self._inner().request(sent, cast(ModelSettings, settings),
                                                       params)
            except ModelAPIError as exc:
                fault = faults.classify(exc, self.endpoint.request_timeout_seconds)
                if fault.kind == "unavailable":
                    tries += 1
                    wait = self._wait(fault, tries, started)
                    await asyncio.sleep(wait)
                    continue
                if self._adapt(fault, params, tried):
                    continue
                if fault.kind == "server_error" and fault.signature != last_refusal:
                    last_refusal = fault.signature  # a passing fault, or a refusal: ask again
                    log.info("the model endpoint answered %s; sending the same request once "
                             "more", fault.words)
                    continue
                self._tell("refused", fault.kind)
                again = " again" if fault.signature == last_refusal else ""
                raise EndpointRefused(f"the model endpoint at {self.endpoint.base_url} refused "
                                      f"the request{again}: {fault.words}. {fault.next_step}"
                                      ) from exc
            self._calibrate(sent, params, response)
            self._whole(sent, response)
            return self._read_text_calls(response, params)

    def _wait(self, fault: faults.Fault, tries: int, started: float) -> float:
        """How long to wait before try ``tries + 1``; raises ``ModelUnavailable`` when the
        budget is spent."""
        budget = self.endpoint.retries
        elapsed = time.monotonic() - started
        if tries > budget:
            self._tell("gave_up", fault.reason)
            raise ModelUnavailable(
                f"the model endpoint at {self.endpoint.base_url} {fault.words}, on each of "
                f"{tries} tries over {elapsed:.0f} s (QUESTBOT_MODEL_RETRIES allows "
                f"{budget} retries). Check that the endpoint is up and answering, then "
                "/resume")
        wait = self.endpoint.retry_wait_seconds * 2 ** (tries - 1)
        if fault.retry_after is not None:
            wait = fault.retry_after
        wait = min(float(wait), MAX_WAIT_SECONDS)
        self._tell("retry", fault.reason)
        log.warning("the model endpoint %s; try %d of %d in %.1f s", fault.words, tries + 1,
                    budget + 1, wait)
        return wait

    def _adapt(self, fault: faults.Fault, params: ModelRequestParameters,
               tried: set[str]) -> bool:
        """Learn what the refusal teaches, if anything new; whether to send again."""
        if self.endpoint.wire is not Wire.OPENAI:
            return False
        chosen = self.endpoint.chosen
        base = self.endpoint.base_url
        if fault.null_content and chosen.null_content and "null" not in tried:
            tried.add("null")
            learn(base, null_content=False)
            self._told("null_content", f"the endpoint refused content null ({fault.words}); "
                       "questbot sends \"\" instead")
            return True
        forced = bool(params.output_tools) and not params.allow_text_output
        if (fault.kind in ("server_error", "refused") and forced
                and chosen.tool_choice_required and "required" not in tried):
            tried.add("required")
            learn(base, tool_choice_required=False)
            self._told("tool_choice", "the endpoint refused tool_choice \"required\" "
                       f"({fault.words}); questbot sends \"auto\" and asks for the answer as "
                       "a tool call")
            return True
        if fault.kind == "context" and fault.window and "window" not in tried and (
                chosen.context_window is None or fault.window < chosen.context_window):
            tried.add("window")
            learn(base, context_window=fault.window)
            self._told("context_window", f"the endpoint's context window is {fault.window:,} "
                       "tokens (it said so refusing a request); questbot keeps within it")
            return True
        return False

    def _told(self, what: str, words: str) -> None:
        log.warning("model endpoint %s: %s", self.endpoint.base_url, words)
        self._tell("adapted", what)

    # --- the context window -----------------------------------------------------------------

    def _estimate(self, messages: Sequence[ModelMessage], params: ModelRequestParameters
                  ) -> int:
        """The prompt's tokens, erring high: three characters a token of what is sent, times
        the most the endpoint ever counted over an estimate."""
        chars = sum(len(_text_of(part)) for message in messages for part in message.parts)
        chars += len(_instructions([m for m in messages if isinstance(m, ModelRequest)]))
        chars += len(json.dumps([t.parameters_json_schema for t in
                                 [*params.function_tools, *params.output_tools]]))
        chars += sum(len(t.description or "") + len(t.name) for t in
                     [*params.function_tools, *params.output_tools])
        return int(chars / 3 * self._ratio) + 8 * len(messages)

    def _calibrate(self, sent: Sequence[ModelMessage], params: ModelRequestParameters,
                   response: ModelResponse) -> None:
        counted = response.usage.input_tokens
        estimate = self._estimate(sent, params) / self._ratio
        if counted and estimate and counted > estimate * self._ratio:
            self._ratio = min(4.0, counted / estimate * 1.05)

    def _fit(self, messages: list[ModelMessage], settings: dict[str, Any],
             params: ModelRequestParameters) -> tuple[list[ModelMessage], dict[str, Any]]:
        window = self.endpoint.chosen.context_window
        if window is None:
            return messages, settings
        limit = int(settings.get("max_tokens") or self.endpoint.max_tokens)
        room = window - SAFETY_TOKENS - self._estimate(messages, params)
        if room < MIN_OUTPUT_TOKENS:
            messages = self._cut(messages, params, window)
            room = window - SAFETY_TOKENS - self._estimate(messages, params)
        if room < min(MIN_OUTPUT_TOKENS, limit) and room < 64:
            raise EndpointRefused(
                f"the conversation no longer fits the model's context window of {window:,} "
                "tokens, even with the oldest tool results cut. A model or server with a "
                "larger window (QUESTBOT_MODEL_CONTEXT_WINDOW, and the server's own: vLLM "
                "--max-model-len, llama.cpp --ctx-size, Ollama num_ctx) is needed; then "
                "/resume")
        if room < limit:
            settings = {**settings, "max_tokens": max(room, 64)}
        return messages, settings

    def _cut(self, messages: list[ModelMessage], params: ModelRequestParameters,
             window: int) -> list[ModelMessage]:
        """The oldest tool results replaced by a note until the conversation leaves room
        for an answer; the latest request (what the model must answer now) is kept whole."""
        self._cut_now = True
        out = list(messages)
        for index, message in enumerate(out[:-1]):
            if window - SAFETY_TOKENS - self._estimate(out, params) >= MIN_OUTPUT_TOKENS:
                break
            if not isinstance(message, ModelRequest):
                continue
            parts = [_cut_part(p) for p in message.parts]
            out[index] = dataclasses.replace(message, parts=parts)
        return out

    # --- the whole conversation read --------------------------------------------------------

    def _whole(self, sent: Sequence[ModelMessage], response: ModelResponse) -> None:
        """Raise ``EndpointRefused`` when the endpoint counted less of the prompt than it was
        sent (the module docs, step 4)."""
        cut, self._cut_now = self._cut_now, False
        counted = response.usage.input_tokens
        if self.endpoint.wire is not Wire.OPENAI or not counted:
            self._counted = None
            return
        before, self._counted = self._counted, (None if cut else (len(sent), counted))
        if cut:
            return
        chars = _nonblank(sent)
        if before is None or before[0] >= len(sent):
            least = chars // WORST_CHARS_PER_TOKEN
            what = f"where {chars:,} characters of text make at least {least:,}"
        else:  # it holds the request before whole, and more
            least = before[1]
            what = (f"for a conversation that holds the one before whole, for which it "
                    f"counted {before[1]:,}")
        if counted >= least:
            return
        self._tell("refused", "truncated")
        raise EndpointRefused(
            f"the model endpoint at {self.endpoint.base_url} did not show the model the whole "
            f"conversation: it counted {counted:,} prompt tokens {what}. It cut the "
            "conversation to fit its context window without saying so "
            "(Ollama does, past its context length), so the model answered without the start "
            "of its task, and questbot did not use the answer. Set "
            "QUESTBOT_MODEL_CONTEXT_WINDOW to the server's window so questbot keeps the "
            "conversation within it, or raise the server's (Ollama: OLLAMA_CONTEXT_LENGTH, or "
            "num_ctx in the model's Modelfile); then /resume")

    # --- tool calls written as text ---------------------------------------------------------

    def _read_text_calls(self, response: ModelResponse, params: ModelRequestParameters
                         ) -> ModelResponse:
        if any(isinstance(p, ToolCallPart) for p in response.parts):
            return response
        text = "\n".join(p.content for p in response.parts if isinstance(p, TextPart))
        offered = [t.name for t in [*params.function_tools, *params.output_tools]]
        calls = tool_calls_in(text, offered)
        if not calls:
            return response
        self._tell("text_tool_calls", "read")
        log.info("the model wrote %d tool call(s) as text (%s); questbot reads them as calls",
                 len(calls), ", ".join(name for name, _ in calls))
        kept = [p for p in response.parts if not isinstance(p, TextPart)]
        made = [ToolCallPart(tool_name=name, args=args,
                             tool_call_id=f"call_text_{uuid.uuid4().hex[:20]}")
                for name, args in calls]
        return dataclasses.replace(response, parts=[*kept, *made])


def _nonblank(messages: Sequence[ModelMessage]) -> int:
    """The non-blank characters of what questbot sent in ``messages``: its instructions (the
    latest request's: each request carries them, one copy is sent), prompts, tool results and
    retries (the model's own turns aside: a server may render them otherwise, or drop its
    thinking)."""
    requests = [m for m in messages if isinstance(m, ModelRequest)]
    chars = _count_nonblank(_instructions(requests))
    for message in requests:
        chars += sum(_count_nonblank(_text_of(part)) for part in message.parts)
    return chars


def _instructions(requests: Sequence[ModelRequest]) -> str:
    """The instructions sent with a conversation: its latest request's."""
    return next((m.instructions for m in reversed(requests) if m.instructions), "")


def _count_nonblank(text: str) -> int:
    return len("".join(text.split()))


def _cut_part(part: Any) -> Any:
    """A tool's result replaced by ``CUT`` when it is longer; anything else as it is."""
    if type(part) is ToolReturnPart and len(_text_of(part)) > len(CUT):
        return dataclasses.replace(part, content=CUT)
    return part


def _text_of(part: object) -> str:
    content = getattr(part, "content", None)
    if content is None:
        args = getattr(part, "args", None)
        return json.dumps(args) if isinstance(args, dict) else str(args or "")
    return content if isinstance(content, str) else json.dumps(content, default=str)


_HTTP: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[str, Any]] = (
    weakref.WeakKeyDictionary())


def http_client(base_url: str) -> Any | None:
    """The one HTTP client the conversations at ``base_url`` share in this event loop
    (``None`` outside one: the provider then makes its own).

    Why. A provider makes an HTTP client of its own when given none, and a conversation
    builds a provider (``Steady``), so every conversation made a client — its connection
    pool, its TLS context — and closed it after. A worker's memory grew with them: a loop of
    conversations on a stub endpoint (``scripts/probe_model_memory.py``) climbed 20 MB over
    the first fifty and ~28 KB a conversation after, and stayed flat with one client shared
    (``docs/performance.md``, the soak). A client handed to a provider is never closed by it,
    so this one lives as long as its loop; it is kept per loop because a client's connections
    belong to the loop that made them (the tests run many)."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return None
    from pydantic_ai.models import create_async_httpx2_client

    clients = _HTTP.setdefault(loop, {})
    client = clients.get(base_url)
    if client is None or client.is_closed:
        client = clients[base_url] = create_async_httpx2_client()
    return client


def _provider(endpoint: ModelEndpoint) -> Any:
    from pydantic_ai.providers.anthropic import AnthropicProvider
    from pydantic_ai.providers.openai import OpenAIProvider

    key = endpoint.api_key.get_secret_value() if endpoint.api_key is not None else NO_KEY
    if endpoint.wire is Wire.ANTHROPIC:  # its SDK takes another client: one a conversation
        return AnthropicProvider(api_key=key, base_url=endpoint.base_url)
    return OpenAIProvider(base_url=endpoint.base_url, api_key=key,
                          http_client=http_client(endpoint.base_url))


def _build(endpoint: ModelEndpoint, name: str, chosen: Adaptation, provider: Any) -> Model:
    """The pydantic-ai model at ``endpoint`` as ``chosen`` says to speak to it."""
    from pydantic_ai.models.anthropic import AnthropicModel

    from bot.agent.model.wire import AdaptedChatModel

    if endpoint.wire is Wire.ANTHROPIC:
        return AnthropicModel(name, provider=provider)
    return AdaptedChatModel(name, chosen, endpoint.base_url, provider=provider)
