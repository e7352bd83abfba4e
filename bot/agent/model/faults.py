"""A failed model request, sorted by what helps, and told in the endpoint's own words.

``classify`` reads pydantic-ai's exception (which sorts the SDKs' errors by status and body)
into a ``Fault``:

* ``unavailable`` — nobody answered, or the endpoint said it was busy: a refused or dropped
  connection, no answer within the request timeout, 429 (not an exhausted quota), 502, 503,
  504, 529. Waiting can help; ``retry_after`` is what the endpoint asked for.
* ``server_error`` — a plain 500: a passing fault or a refusal in a 500's clothes
  (llama-cpp-python answers a request it cannot serve with 500: ``tool_choice: "required"``,
  ``content: null``). Sent once more; the same answer again is a refusal.
* ``context`` — the prompt, or prompt plus output limit, does not fit the context window
  (OpenAI's ``context_length_exceeded``, vLLM's "maximum context length is N tokens",
  Anthropic's "prompt is too long"); ``window`` when the words name it.
* ``refused`` — anything else the endpoint refused (4xx, an exhausted quota): the same
  request would be refused again.

``words`` is what happened as a maintainer reads it, the server's message quoted; a message
that is only whitespace is said to be empty, so "HTTP 500 with no message" is not left blank.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from pydantic_ai.exceptions import (
    ModelAPIError,
    ModelAuthenticationError,
    ModelConnectionError,
    ModelContextWindowExceededError,
    ModelHTTPError,
    ModelNotFoundError,
    ModelQuotaExceededError,
    ModelRateLimitError,
    ModelRequestTimeout,
    ModelTimeoutError,
    ModelUnavailableError,
)

from bot.agent.model.said import quoted, server_message

Kind = Literal["unavailable", "server_error", "context", "refused"]
_WINDOW = re.compile(r"maximum context length is (\d+)|> ?(\d+) maximum")
_CONTEXT = ("maximum context length", "context_length_exceeded", "prompt is too long",
            "exceeds model's maximum context length", "context window")
_NULL_CONTENT = "input should be a valid string"


@dataclass(frozen=True)
class Fault:
    kind: Kind
    words: str
    """What happened, e.g. "answered HTTP 500 with no message" (after "the model endpoint")."""
    reason: str
    """A short label for metrics: timeout, connection, rate_limit, overloaded, http_500 …"""
    status: int | None = None
    retry_after: float | None = None
    signature: str = ""
    """Status and body: the same refusal, met again, has the same signature."""
    window: int | None = None
    null_content: bool = False
    """The refusal is of an assistant message's null content (llama-cpp-python's words)."""

    @property
    def next_step(self) -> str:
        if self.kind == "context":
            return ("The conversation does not fit the model's context window: set "
                    "QUESTBOT_MODEL_CONTEXT_WINDOW to the server's window (or raise the "
                    "server's own: vLLM --max-model-len, llama.cpp --ctx-size, Ollama "
                    "num_ctx), or lower QUESTBOT_MODEL_MAX_TOKENS; then /resume")
        if self.status in (401, 403):
            return "Check QUESTBOT_MODEL_API_KEY and what it may use; then /resume"
        if self.status == 404:
            return ("Check QUESTBOT_MODEL (the model's name) and QUESTBOT_MODEL_URL; then "
                    "/resume")
        return ("Fix the endpoint or questbot's settings for it (`questbot model check` "
                "shows what the endpoint accepts); then /resume")


def classify(exc: ModelAPIError, timeout_seconds: float) -> Fault:
    status = exc.status_code if isinstance(exc, ModelHTTPError) else None
    message = server_message(exc.body)
    signature = f"{status}:{exc.body!r}"
    lowered = message.lower()
    if isinstance(exc, ModelRequestTimeout | ModelTimeoutError):
        return Fault("unavailable", f"did not answer within {timeout_seconds:g} s "
                     "(QUESTBOT_MODEL_TIMEOUT)", "timeout")
    if isinstance(exc, ModelConnectionError):
        cause = exc.__cause__ or exc
        return Fault("unavailable", f"could not be reached ({type(cause).__name__}: "
                     f"{str(cause)[:200] or 'no detail'})", "connection")
    if isinstance(exc, ModelContextWindowExceededError) or any(m in lowered for m in _CONTEXT):
        found = _WINDOW.search(message)
        window = int(next(g for g in found.groups() if g)) if found else None
        return Fault("context", f"answered HTTP {status} {quoted(message)}", "context",
                     status, signature=signature, window=window)
    if isinstance(exc, ModelQuotaExceededError):
        return Fault("refused", f"answered HTTP {status}: the account's quota is spent "
                     f"({quoted(message)})", "quota", status, signature=signature)
    if isinstance(exc, ModelRateLimitError) or status == 429:
        return Fault("unavailable", f"was rate-limiting (HTTP 429 {quoted(message)})",
                     "rate_limit", status, exc.retry_after, signature)
    if isinstance(exc, ModelUnavailableError) or status in (502, 503, 504, 529):
        label = "overloaded" if status == 529 else f"http_{status or 'unavailable'}"
        return Fault("unavailable", f"was unavailable (HTTP {status} {quoted(message)})",
                     label, status, exc.retry_after, signature)
    null = _NULL_CONTENT in lowered and "content" in lowered
    if status is not None and status >= 500:
        return Fault("server_error", f"answered HTTP {status} {quoted(message)}",
                     f"http_{status}", status, signature=signature, null_content=null)
    what = ("the key was refused" if isinstance(exc, ModelAuthenticationError) else
            "the model was not found" if isinstance(exc, ModelNotFoundError) else "")
    words = f"answered HTTP {status} {quoted(message)}" if status else \
        f"failed: {quoted(message or str(exc))}"
    return Fault("refused", f"{words}{f' ({what})' if what else ''}",
                 f"http_{status}" if status else "refused", status, signature=signature,
                 null_content=null)
