"""Stored records: quests, events, effects and policies as versioned JSON.

Every stored record is ``{"v": <schema version>, "kind": ..., "data": {...}}``. When a model
changes shape, bump its version and add an upcaster from the old one to ``UPCASTERS``; loading
applies upcasters in order, so journals written by older releases replay unchanged.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, Literal

from bot.core.effects import EFFECT_ADAPTER, Effect, effect_from_record, effect_record
from bot.core.events import EVENT_ADAPTER, Event
from bot.core.policy import Policy
from bot.core.quest import Quest

Kind = Literal["quest", "event", "effect", "policy"]
SCHEMA_VERSION: dict[str, int] = {"quest": 1, "event": 1, "effect": 1, "policy": 1}
Upcaster = Callable[[dict[str, Any]], dict[str, Any]]
UPCASTERS: dict[tuple[str, int], Upcaster] = {}
"""(kind, from_version) → function returning the data at from_version + 1."""


class RecordError(ValueError):
    """A stored record that cannot be read: wrong kind, unknown version, or bad data."""


def _dump(kind: Kind, data: dict[str, Any]) -> str:
    record = {"v": SCHEMA_VERSION[kind], "kind": kind, "data": data}
    return json.dumps(record, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _load(kind: Kind, text: str | bytes) -> dict[str, Any]:
    try:
        record = json.loads(text)
    except json.JSONDecodeError as exc:
        raise RecordError(f"stored {kind} is not JSON: {exc}") from exc
    if not isinstance(record, dict) or record.get("kind") != kind:
        raise RecordError(f"stored record is not a {kind}: {str(text)[:80]!r}")
    version = record.get("v")
    data = record.get("data")
    if not isinstance(version, int) or not isinstance(data, dict):
        raise RecordError(f"stored {kind} has no version or data")
    current = SCHEMA_VERSION[kind]
    if version > current:
        raise RecordError(f"stored {kind} has schema version {version}, newer than this "
                          f"release reads ({current}); upgrade questbot")
    while version < current:
        upcast = UPCASTERS.get((kind, version))
        if upcast is None:
            raise RecordError(f"no upcaster for {kind} from schema version {version}")
        data = upcast(data)
        version += 1
    return data


def dump_quest(quest: Quest) -> str:
    return _dump("quest", quest.model_dump(mode="json"))


def load_quest(text: str | bytes) -> Quest:
    return Quest.model_validate(_load("quest", text))


def dump_event(event: Event) -> str:
    return _dump("event", event.model_dump(mode="json"))


def load_event(text: str | bytes) -> Event:
    return EVENT_ADAPTER.validate_python(_load("event", text))


def dump_effect(effect: Effect) -> str:
    return _dump("effect", EFFECT_ADAPTER.dump_python(effect_record(effect), mode="json"))


def load_effect(text: str | bytes) -> Effect:
    return effect_from_record(_load("effect", text))


def dump_policy(policy: Policy) -> str:
    return _dump("policy", policy.model_dump(mode="json"))


def load_policy(text: str | bytes) -> Policy:
    return Policy.model_validate(_load("policy", text))


def parse_event(value: dict[str, Any]) -> Event:
    """An event from a plain JSON object, as written in example journals (no envelope)."""
    return EVENT_ADAPTER.validate_python(value)
