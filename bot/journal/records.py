"""Stored records: quests, events, effects and policies as versioned JSON, written fast.

Every stored record is ``{"v": <schema version>, "kind": ..., "data": {...}}``. When a model
changes shape, bump its version and add an upcaster from the old one to ``UPCASTERS``; loading
applies upcasters in order, so journals written by older releases replay unchanged.

Writing. Pydantic then ``json.dumps`` costs about 15 µs per applied event (event, quest and
effect), more than the rest of the write. So ``orjson`` writes a model's fields (``__dict__``,
in field order) directly; the bytes of ``data`` are the same as pydantic's ``model_dump_json``
for every field type the core uses (strings and their enums, numbers, ``None``, tuples, nested
models, UTC datetimes as ``…Z``), which ``tests/journal/test_records.py`` checks against a
pydantic reference writer over quests in every state and events of every type. A value orjson
does not know (a set, a ``Decimal`` in an effect payload) falls back to pydantic for that
record. Policies are written rarely and by pydantic alone.

Reading. The loaders read any valid envelope, whichever writer produced it (records written by
the earlier reference writer have sorted keys and are read the same).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, Literal

import orjson
from pydantic import BaseModel

from bot.core.canonical import canonical_digest
from bot.core.effects import EFFECT_ADAPTER, Effect, effect_from_record, effect_record
from bot.core.events import EVENT_ADAPTER, Event
from bot.core.policy import Policy
from bot.core.quest import Quest
from bot.journal.errors import CorruptJournal

Kind = Literal["quest", "event", "effect", "policy"]
SCHEMA_VERSION: dict[str, int] = {"quest": 1, "event": 1, "effect": 1, "policy": 1}
Upcaster = Callable[[dict[str, Any]], dict[str, Any]]
UPCASTERS: dict[tuple[str, int], Upcaster] = {}
"""(kind, from_version) → function returning the data at from_version + 1."""


class RecordError(CorruptJournal, ValueError):
    """A stored record that cannot be read: wrong kind, unknown version, or bad data."""


# --- writing ----------------------------------------------------------------------------

_OPTIONS = orjson.OPT_UTC_Z
_HEAD = {kind: f'{{"v":{version},"kind":"{kind}","data":'.encode()
         for kind, version in SCHEMA_VERSION.items()}


def _fields(value: object) -> dict[str, Any]:
    if isinstance(value, BaseModel):
        return value.__dict__
    raise TypeError(f"{type(value).__name__} is not a JSON type orjson writes like pydantic")


def _envelope(kind: Kind, data: bytes) -> bytes:
    return _HEAD[kind] + data + b"}"


def dump_event(event: Event) -> bytes:
    try:
        data = orjson.dumps(event.__dict__, default=_fields, option=_OPTIONS)
    except TypeError:
        data = EVENT_ADAPTER.dump_json(event)
    return _envelope("event", data)


def dump_quest(quest: Quest) -> bytes:
    try:
        data = orjson.dumps(quest.__dict__, default=_fields, option=_OPTIONS)
    except TypeError:
        data = quest.model_dump_json().encode()
    return _envelope("quest", data)


def dump_effect(effect: Effect) -> bytes:
    record = effect_record(effect)
    try:
        data = orjson.dumps(record, default=_fields, option=_OPTIONS)
    except TypeError:
        data = EFFECT_ADAPTER.dump_json(record)
    return _envelope("effect", data)


def dump_policy(policy: Policy) -> bytes:
    return _envelope("policy", policy.model_dump_json().encode())


POLICY_DIGEST_LENGTH = 12


def policy_digest(policy: Policy) -> str:
    """The name a journal entry gives the policy it was decided under: the first 12 hex digits
    (48 bits) of the SHA-256 of the policy's canonical JSON, so equal policies share a name
    however they were built. A digest is only looked up among one quest's policies, a handful
    at most: 48 bits make a clash between ten of them a chance of about one in 10^13, for 12
    bytes an entry rather than the ~200 of the policy itself."""
    return canonical_digest(policy.model_dump(mode="json"))[:POLICY_DIGEST_LENGTH]


# --- reading ----------------------------------------------------------------------------


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


def load_quest(text: str | bytes) -> Quest:
    return Quest.model_validate(_load("quest", text))


def load_event(text: str | bytes) -> Event:
    return EVENT_ADAPTER.validate_python(_load("event", text))


def load_effect(text: str | bytes) -> Effect:
    return effect_from_record(_load("effect", text))


def load_policy(text: str | bytes) -> Policy:
    return Policy.model_validate(_load("policy", text))
