"""Replay a journal and say what it decided: the ``python -m bot replay`` command's logic."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from bot.core import EVENT_ADAPTER, Event, FoldResult, Policy, fold
from bot.errors import Refused
from bot.words.effects import effect_phrase


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


def replay(events: Iterable[Event], policy: Policy,
           policies: Sequence[Policy | None] | None = None) -> FoldResult:
    """Fold ``events``, each under its own policy when ``policies`` gives them (a journal
    read from Redis), else all under ``policy``."""
    return fold(events, policy, policies=policies)


def policy_text(uses: Mapping[str | None, int]) -> str:
    """Which policies a replay of a stored journal used: digests and how many entries each
    decided; ``None`` counts entries recorded without one, replayed under ``--policy``."""
    recorded = [f"{digest} ({n} event{'' if n == 1 else 's'})"
                for digest, n in uses.items() if digest is not None]
    parts = ["policies: as recorded with each event"
             + (": " + ", ".join(recorded) if recorded else "")]
    unrecorded = uses.get(None, 0)
    if unrecorded:
        parts.append(f"{unrecorded} entr{'y' if unrecorded == 1 else 'ies'} recorded without "
                     "one: replayed under --policy (or the default policy)")
    return "; ".join(parts)


def result_json(result: FoldResult, *, policies: Mapping[str, Policy] | None = None,
                uses: Mapping[str | None, int] | None = None) -> dict[str, Any]:
    """The replay as JSON; a stored journal's replay adds the policies it recorded, by
    digest, and how many entries each decided (``unrecorded``: entries without one)."""
    q = result.quest
    recorded = None if policies is None else {
        "by_digest": {d: p.model_dump(mode="json") for d, p in policies.items()},
        "entries": {d: n for d, n in (uses or {}).items() if d is not None},
        "unrecorded": (uses or {}).get(None, 0)}
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
        **({} if recorded is None else {"policies": recorded}),
    }


def result_text(result: FoldResult, *, uses: Mapping[str | None, int] | None = None) -> str:
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
    if uses is not None:
        lines.append(policy_text(uses))
    lines.append(f"effects ({len(result.effects)}), in the order they were asked for"
                 + (" (their keys: --json):" if result.effects else ":"))
    width = len(str(len(result.effects)))
    lines.extend(
        f"  {n:>{width}}. {effect_phrase(e.type.value, e.revision, e.payload, e.occurrence)}"
        for n, e in enumerate(result.effects, start=1))
    if result.invalid is None:
        lines.append("invalid transition: none")
    else:
        inv = result.invalid
        lines.append(f"invalid transition: event #{inv.index} ({inv.event_id}, {inv.event_type}) "
                     f"in state {inv.state}: {inv.reason}")
    return "\n".join(lines)
