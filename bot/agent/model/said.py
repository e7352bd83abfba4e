"""What a model endpoint said when it refused: the message of an error body of any shape the
servers send, told short enough to read (a validation report by its complaints). Shared by the
conversation (``faults``) and the probe (``probe``); imports nothing heavy."""

from __future__ import annotations

import re
from typing import Any


def server_message(body: Any) -> str:
    """The message in an error body of any of the shapes servers send."""
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict):
            message = inner.get("message", inner.get("detail", ""))
            return str(message) if message is not None else ""
        return str(inner)
    return "" if body is None else str(body)


_PYDANTIC_MSG = re.compile(r"""'msg': (?:'([^']*)'|"([^"]*)")""")


def quoted(message: str, limit: int = 400) -> str:
    """The server's message, short enough to read: a validation report (pydantic's, as
    FastAPI servers send it) is told by its first line and each distinct complaint."""
    complaints = list(dict.fromkeys(a or b for a, b in _PYDANTIC_MSG.findall(message)))
    if complaints:
        message = f"{message.splitlines()[0].rstrip(':')}: " + "; ".join(complaints)
    text = " ".join(message.split())
    if not text:
        return "with no message"
    return f"saying \"{text[:limit]}{'…' if len(text) > limit else ''}\""
