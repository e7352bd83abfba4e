"""Structured logs: one JSON object a line, with the delivery and quest they concern, and no secret.

Every line carries ``time`` (UTC, ISO 8601), ``level``, ``logger`` and ``message``, then the
context bound where the line was written (``delivery_id``, ``quest_id``, ``event``, …) and any
``extra=`` fields. Context lives in a ``ContextVar``: aiohttp runs each request in its own task,
which copies the context, so ``with bind(delivery_id=...)`` in a handler labels every line that
handler (and whatever it awaits) writes without passing ids down the call chain.

Redaction is a ``logging.Filter`` on the handler, so it sees every record whatever logger wrote
it (ours, aiohttp's, redis-py's) before anything is formatted. It rewrites the message, the
formatted traceback and the bound context, removing:

* the configured secrets verbatim (the webhook secret, the App's private key);
* PEM blocks (``-----BEGIN … PRIVATE KEY-----`` … ``-----END …-----``, or to the end if cut);
* GitHub tokens (``ghs_``, ``ghp_``, ``gho_``, ``ghu_``, ``ghr_``, ``github_pat_``) and JWTs
  (the App's own ``eyJ…`` tokens);
* ``Authorization:`` header values and any ``Bearer …`` credential;
* the value of anything named like ``secret``, ``password``, ``token``, ``private_key``;
* the password in a URL (``redis://:pass@host``).

A pattern that removes a bit too much costs a less useful log line; one that misses leaks a
credential to every log store it reaches, so the patterns err on the side of removing.
"""

from __future__ import annotations

import json
import logging
import re
import sys
from collections.abc import Iterable, Mapping
from contextvars import ContextVar, Token
from datetime import UTC, datetime
from types import MappingProxyType
from typing import Any, TextIO

from bot.control_chars import for_terminal, json_safe

REDACTED = "[redacted]"

_CONTEXT: ContextVar[Mapping[str, object]] = ContextVar(
    "questbot_log_context", default=MappingProxyType({})
)

_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"-----BEGIN [A-Z0-9 ]*-----.*?(?:-----END [A-Z0-9 ]*-----|\Z)", re.DOTALL),
     REDACTED),
    # no word boundary asked for: a token glued to a word ("0ghs_…", a model's output) is one
    (re.compile(r"(?:gh[pousr]_[A-Za-z0-9_]{16,}|github_pat_[A-Za-z0-9_]{16,})"), REDACTED),
    (re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*"), REDACTED),
    (re.compile(r"(?i)(authorization[\"']?\s*[:=]\s*[\"']?)[^\"'\n,}]+"), r"\1" + REDACTED),
    (re.compile(r"(?i)\b(bearer)\s+[A-Za-z0-9._~+/=-]{8,}"), r"\1 " + REDACTED),
    (re.compile(r"(?i)\b([a-z_]*(?:secret|password|passwd|token|private_key|api_key))"
                r"([\"']?\s*[:=]\s*[\"']?)(?!\[redacted\])[^\s\"',}]+"), r"\1\2" + REDACTED),
    (re.compile(r"(://[^/\s:@]*:)[^@\s/]+@"), r"\1" + REDACTED + "@"),
)


def redact(text: str, secrets: Iterable[str] = ()) -> str:
    """``text`` with every configured secret and everything that looks like a credential
    replaced by ``[redacted]``."""
    for secret in secrets:
        if secret and secret in text:
            text = text.replace(secret, REDACTED)
    for pattern, replacement in _PATTERNS:
        text = pattern.sub(replacement, text)
    return text


def current_context() -> Mapping[str, object]:
    """The context bound here: what a log line written now would carry."""
    return _CONTEXT.get()


class bind:  # lower case: used like the function it replaced, ``with bind(...):``
    """Add ``fields`` (``delivery_id=…``, ``quest_id=…``) to every log line written inside.

    A class rather than a ``@contextmanager`` generator: it runs once per webhook delivery,
    and the generator machinery cost several times the ``ContextVar`` set and reset it wraps.
    """

    __slots__ = ("_fields", "_token")

    def __init__(self, **fields: object) -> None:
        self._fields = fields
        self._token: Token[Mapping[str, object]] | None = None

    def __enter__(self) -> None:
        self._token = bind_context(**self._fields)

    def __exit__(self, *_: object) -> None:
        if self._token is not None:
            _CONTEXT.reset(self._token)
            self._token = None


def bind_context(**fields: object) -> Token[Mapping[str, object]]:
    """``bind`` without the ``with``, for code that cannot nest (pass the token to
    ``unbind``); ``None`` values are left out."""
    if None in fields.values():
        fields = {k: v for k, v in fields.items() if v is not None}
    current = _CONTEXT.get()
    return _CONTEXT.set({**current, **fields} if current else fields)


def unbind(token: Token[Mapping[str, object]]) -> None:
    _CONTEXT.reset(token)


class ContextFilter(logging.Filter):
    """Copies the bound context onto the record, so it survives a handler that formats later
    (a ``QueueHandler``) in a thread that does not share the writer's context."""

    def filter(self, record: logging.LogRecord) -> bool:
        context = _CONTEXT.get()
        if context and not hasattr(record, "questbot_context"):
            record.__dict__["questbot_context"] = dict(context)
        return True


class RedactingFilter(logging.Filter):
    """Removes secrets from the record before any formatter sees it (see the module doc)."""

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        super().__init__()
        self.secrets: tuple[str, ...] = tuple(s for s in secrets if s)

    def filter(self, record: logging.LogRecord) -> bool:
        if getattr(record, "questbot_redacted", False):
            return True
        record.msg = redact(record.getMessage(), self.secrets)
        record.args = None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = redact(record.exc_text, self.secrets)
        if record.stack_info:
            record.stack_info = redact(record.stack_info, self.secrets)
        context = getattr(record, "questbot_context", None)
        if context:
            record.__dict__["questbot_context"] = {
                k: redact(v, self.secrets) if isinstance(v, str) else v for k, v in context.items()
            }
        for key in _extra_keys(record):
            value = record.__dict__[key]
            if isinstance(value, str):
                record.__dict__[key] = redact(value, self.secrets)
        record.__dict__["questbot_redacted"] = True
        return True


_STANDARD = frozenset(logging.LogRecord("", 0, "", 0, "", None, None).__dict__) | {
    "message", "asctime", "questbot_context", "questbot_redacted", "taskName",
}


def _extra_keys(record: logging.LogRecord) -> list[str]:
    return [key for key in record.__dict__ if key not in _STANDARD]


class JsonFormatter(logging.Formatter):
    """One JSON object a line: time, level, logger, message, bound context, ``extra`` fields,
    and ``exception`` when there is one."""

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        line.update(getattr(record, "questbot_context", None) or {})
        for key in _extra_keys(record):
            line[key] = record.__dict__[key]
        if record.exc_info and not record.exc_text:
            record.exc_text = self.formatException(record.exc_info)
        if record.exc_text:
            line["exception"] = record.exc_text
        if record.stack_info:
            line["stack"] = record.stack_info
        # ensure_ascii=False keeps people's words readable, and leaves DEL, C1 and the bidi
        # controls raw: a repository's or a model's text in a message would reach whatever
        # terminal shows the log; json_safe escapes them
        return json_safe(json.dumps(line, default=str, ensure_ascii=False))


class TerminalFormatter(logging.Formatter):
    """A plain-text formatter for a command's own stderr (``python -m bot receive --local``):
    the line as ``logging.Formatter`` makes it, with escape sequences and control
    characters removed (``bot.control_chars.for_terminal``)."""

    def format(self, record: logging.LogRecord) -> str:
        return for_terminal(super().format(record))


_HANDLER_NAME = "questbot-json"


def configure_logging(
    level: int | str = logging.INFO,
    *,
    secrets: Iterable[str] = (),
    stream: TextIO | None = None,
) -> logging.Handler:
    """Send every log record to ``stream`` (default stderr) as JSON lines, redacted.

    Replaces a handler an earlier call installed, so it is safe to call twice (tests do).
    Returns the handler, whose ``RedactingFilter`` can learn more secrets later.
    """
    root = logging.getLogger()
    for old in [h for h in root.handlers if h.get_name() == _HANDLER_NAME]:
        root.removeHandler(old)
    handler = logging.StreamHandler(stream if stream is not None else sys.stderr)
    handler.set_name(_HANDLER_NAME)
    handler.addFilter(ContextFilter())
    handler.addFilter(RedactingFilter(secrets))
    handler.setFormatter(JsonFormatter())
    root.addHandler(handler)
    root.setLevel(level)
    return handler
