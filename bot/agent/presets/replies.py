"""From a CLI's final message back to the stage's typed reply, and what it cost.

A CLI's final message is prose a model wrote, ending — as the prompt asks — in one JSON object
in a fenced ``json`` block. ``reply_in`` takes the last such block (or, failing that, the
last JSON object standing alone at the end of the text) and validates it as an
``AgentReply``; no JSON, JSON that is not a reply, or a reply of the wrong shape is a
``failed`` reply saying which, so garbage never reads as success. Nothing in the text is
executed: it is parsed as JSON and nothing else.

``usage`` turns what a CLI reports (tokens, a cost in US dollars) into the ``Usage`` the
stage adds to the quest's receipts: whole cents, rounded up, as the model agent counts them.
"""

from __future__ import annotations

import json
import math
import re

from pydantic import ValidationError

from bot.agent.task import AgentReply, Usage

FENCED = re.compile(r"```json[ \t]*\n(.*?)\n[ \t]*```", re.DOTALL | re.IGNORECASE)
"""A ``json``-labelled block only: an edit block (```` ```python ````) is not an answer."""
SHOWN = 300
"""Characters of an unusable final message quoted in the reason people read."""


def usage(tokens: int = 0, cost_usd: float | None = None) -> Usage | None:
    """The receipt for what a CLI reported; ``None`` when it reported nothing."""
    if not tokens and (cost_usd is None or not math.isfinite(cost_usd)):
        return None
    cost = max(cost_usd, 0.0) if cost_usd is not None and math.isfinite(cost_usd) else None
    cents = math.ceil(round(cost * 100, 6)) if cost is not None else 0
    return Usage(tokens=max(tokens, 0), cost_cents=cents, cost_usd=cost)


def _trailing_object(text: str) -> str | None:
    """The JSON object the text ends with, found by trying each ``{`` from the last back."""
    end = text.rstrip()
    if not end.endswith("}"):
        return None
    decoder = json.JSONDecoder()
    start = end.rfind("{")
    while start != -1:
        try:
            _, stop = decoder.raw_decode(end, start)
        except ValueError:
            stop = -1
        if stop == len(end):
            return end[start:]
        start = end.rfind("{", 0, start)
    return None


def reply_in(text: str, cli: str, *, spent: Usage | None = None) -> AgentReply:
    """The reply at the end of ``text`` (the final message of ``cli``), or why there is none."""
    blocks = FENCED.findall(text)
    candidate = blocks[-1] if blocks else _trailing_object(text)
    if candidate is None:
        shown = " ".join(text.split())[-SHOWN:] or "nothing"
        return AgentReply.failed(f"{cli}'s final message holds no JSON answer (it ended: "
                                 f"{shown!r})", usage=spent)
    try:
        data = json.loads(candidate)
    except ValueError as exc:
        return AgentReply.failed(f"{cli}'s answer is not JSON ({exc})", usage=spent)
    if not isinstance(data, dict):
        return AgentReply.failed(f"{cli}'s answer is not a JSON object", usage=spent)
    data.pop("usage", None)  # spend is what the CLI reported, never what the model claims
    try:
        reply = AgentReply.model_validate(data)
    except ValidationError as exc:
        first = exc.errors(include_url=False)[:3]
        where = "; ".join(f"{'.'.join(str(p) for p in e['loc']) or 'answer'}: {e['msg']}"
                          for e in first)
        return AgentReply.failed(f"{cli}'s answer is not a reply ({where})", usage=spent)
    return reply.model_copy(update={"usage": spent})
