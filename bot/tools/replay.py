"""Replay a journal and say what it decided: the ``python -m bot replay`` command's logic."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from bot.core import EVENT_ADAPTER, Event, FoldResult, Policy, fold
from bot.errors import Refused


class JournalFileError(Refused, ValueError):
    """A journal file line that is not a valid event."""


def read_journal(path: Path) -> list[Event]:
    """Events from a JSON-lines file: one event object a line; blank lines and ``#`` comments
    are skipped."""
    events: list[Event] = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        text = line.strip()
        if not text or text.startswith("#"):
            continue
        try:
            events.append(EVENT_ADAPTER.validate_python(json.loads(text)))
        except (json.JSONDecodeError, ValidationError) as exc:
            raise JournalFileError(f"{path}:{number}: not a valid event: {exc}") from exc
    return events


def read_policy(path: Path | None) -> Policy:
    if path is None:
        return Policy()
    try:
        return Policy.model_validate_json(path.read_text(encoding="utf-8"))
    except ValidationError as exc:
        raise JournalFileError(f"{path}: not a valid policy: {exc}") from exc


def replay(events: Iterable[Event], policy: Policy) -> FoldResult:
    return fold(events, policy)


def result_json(result: FoldResult) -> dict[str, Any]:
    q = result.quest
    return {
        "quest_id": q.id if q else None,
        "state": q.state.value if q else None,
        "revision": q.revision if q else None,
        "quest": q.model_dump(mode="json") if q else None,
        "applied": result.applied,
        "absorbed": list(result.absorbed),
        "effects": [
            {"key": e.key, "type": e.type.value, "payload": e.payload} for e in result.effects
        ],
        "invalid": None if result.invalid is None else {
            "index": result.invalid.index,
            "event_id": result.invalid.event_id,
            "event_type": result.invalid.event_type,
            "state": result.invalid.state,
            "reason": result.invalid.reason,
            "code": result.invalid.code.value,
        },
    }


def result_text(result: FoldResult) -> str:
    q = result.quest
    lines = []
    if q is None:
        lines.append("quest: none (the journal created no quest)")
    else:
        lines.append(f"quest {q.id} ({q.repo}): {q.state.value} at revision {q.revision}")
        if q.outcome:
            lines.append(f"outcome: {q.outcome.value}")
        if q.park_reason:
            lines.append(f"parked: {q.park_reason.value}, resumes to "
                         f"{q.resume_state.value if q.resume_state else '-'}")
    lines.append(f"events applied: {result.applied}; absorbed: {len(result.absorbed)}")
    lines.append(f"effects ({len(result.effects)}):")
    lines.extend(f"  {e.key}" for e in result.effects)
    if result.invalid is None:
        lines.append("invalid transition: none")
    else:
        inv = result.invalid
        lines.append(f"invalid transition: event #{inv.index} ({inv.event_id}, {inv.event_type}) "
                     f"in state {inv.state}: {inv.reason}")
    return "\n".join(lines)
