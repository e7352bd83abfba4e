"""The records the journal writes: quests, events and effects in the versioned envelope of
``bot.core.serialize`` (``{"v": …, "kind": …, "data": …}``), written fast.

``bot.core.serialize`` is the reference writer (pydantic, then ``json.dumps`` with sorted
keys); it costs about 15 µs per applied event (event, quest and effect), more than the rest of
the write. Here ``orjson`` writes a model's fields (``__dict__``, in field order) directly; the
bytes are the same as pydantic's ``model_dump_json`` for every field type the core uses (strings
and their enums, numbers, ``None``, tuples, nested models, UTC datetimes as ``…Z``), which
``tests/journal/test_records.py`` checks over quests in every state and events of every type.
A value orjson does not know (a set, a ``Decimal`` in an effect payload) falls back to
pydantic for that record. The loaders in ``bot.core.serialize`` read both writers' records.
"""

from __future__ import annotations

from typing import Any

import orjson
from pydantic import BaseModel

from bot.core import EVENT_ADAPTER, Effect, Event, Quest
from bot.core.effects import EFFECT_ADAPTER, effect_record
from bot.core.serialize import SCHEMA_VERSION

_OPTIONS = orjson.OPT_UTC_Z
_HEAD = {kind: f'{{"v":{version},"kind":"{kind}","data":'.encode()
         for kind, version in SCHEMA_VERSION.items()}


def _fields(value: object) -> dict[str, Any]:
    if isinstance(value, BaseModel):
        return value.__dict__
    raise TypeError(f"{type(value).__name__} is not a JSON type orjson writes like pydantic")


def _envelope(kind: str, data: bytes) -> bytes:
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
