"""GitHub's size limits on what questbot writes, kept on the way out.

GitHub refuses an issue, pull request or comment body longer than 65,536 characters (422
"body is too long (maximum is 65536 characters)", BEHAVIOUR §7) and a check run whose
``output.summary`` or ``output.text`` is longer than 65,535 (§9). A refused write is a lost
write — the quest's status would stop moving — so every body the Forge sends passes through
``fit`` first. The renderers cut their own long sections where a cut reads well (the status
comment's evidence, the check run's details), with a link to where the rest is; this is the
net under them, for anything that still comes out too long.

GitHub counts characters as Ruby does, by code point, which is what ``len`` counts.
"""

from __future__ import annotations

import logging
from typing import Any

log = logging.getLogger(__name__)

BODY_LIMIT = 65_536
OUTPUT_LIMIT = 65_535
CUT_NOTE = "\n\n*(cut here: GitHub allows {limit:,} characters; {rest:,} more were left out)*\n"


def fit(text: str, limit: int = BODY_LIMIT, *, note: str = CUT_NOTE) -> str:
    """``text`` if it fits in ``limit`` characters, else cut at a line end with ``note``
    (``{limit}`` and ``{rest}`` filled in) and an open code fence closed."""
    if len(text) <= limit:
        return text
    reserve = len(note.format(limit=limit, rest=len(text))) + 8
    head = text[:max(limit - reserve, 0)]
    if "\n" in head:
        head = head[:head.rindex("\n")]
    if head.count("```") % 2:
        head += "\n```"
    out = head + note.format(limit=limit, rest=len(text) - len(head))
    log.info("cut a body of %d characters to %d for GitHub", len(text), len(out))
    return out


def fit_check_run(body: dict[str, Any]) -> dict[str, Any]:
    """A ``checks/create`` / ``checks/update`` body with its output's summary and text within
    GitHub's limit."""
    output = body.get("output")
    if not isinstance(output, dict):
        return body
    fitted = dict(output)
    for key in ("summary", "text"):
        if isinstance(fitted.get(key), str):
            fitted[key] = fit(fitted[key], OUTPUT_LIMIT)
    return {**body, "output": fitted}
