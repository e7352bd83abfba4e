"""Stored records: quests, events, effects and policies as versioned JSON, written fast.

Every stored record is ``{"v": <schema version>, "kind": ..., "data": {...}}``. When a model
changes shape, bump its version and add an upcaster from the old one to ``UPCASTERS``; loading
applies upcasters in order, so journals written by older releases replay unchanged. Records
kept beside the journal go through ``dump_record``/``load_record`` (evidence, push notes) and
``dump_model``/``load_model`` (``MODEL_KINDS``: lessons, reflections, review records); those
older releases kept as bare JSON (``LEGACY``) are read as their version 1.

A record newer than this release reads raises ``NewerRecord``, never a guess: during a rolling
upgrade an old worker meets what a new one wrote, and it must leave that work where it is for
a worker that reads it (``docs/operations.md``, *Upgrades*) rather than fail it, drop it or
misread it. ``NewerRecord`` is a ``RetryLater``, not a ``CorruptJournal``: nothing is wrong
with the record.

``as_release`` runs code as an older release would: reading and writing each kind at the
version given. The upgrade tests run an "old" worker that way beside today's on one Redis.

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
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Literal, TypeVar

import orjson
from pydantic import BaseModel

from bot.core.canonical import canonical_digest
from bot.core.effects import EFFECT_ADAPTER, Effect, effect_from_record, effect_record
from bot.core.events import EVENT_ADAPTER, Event
from bot.core.policy import Policy
from bot.core.quest import Quest
from bot.errors import RetryLater
from bot.journal.errors import CorruptJournal, JournalError

Kind = Literal["quest", "event", "effect", "policy"]
MODEL_KINDS = ("lesson", "lesson_draft", "reflection", "reflection_attempt",
               "reflection_review", "review")
"""Records of one pydantic model each, kept beside the journal (``dump_model``)."""
SCHEMA_VERSION: dict[str, int] = {"quest": 2, "event": 1, "effect": 1, "policy": 1,
                                  "evidence": 2, "push_note": 2,
                                  **{kind: 2 for kind in MODEL_KINDS}}
"""The version of each kind of record this release writes, and the newest it reads."""
LEGACY: frozenset[str] = frozenset({"evidence", "push_note", *MODEL_KINDS})
"""Kinds older releases stored as bare JSON, with no envelope: read as their version 1."""
Upcaster = Callable[[dict[str, Any]], dict[str, Any]]
UPCASTERS: dict[tuple[str, int], Upcaster] = {}
"""(kind, from_version) → function returning the data at from_version + 1."""

_RELEASE: ContextVar[Mapping[str, int]] = ContextVar("questbot_record_versions",
                                                     default=SCHEMA_VERSION)


class RecordError(CorruptJournal, ValueError):
    """A stored record that cannot be read: wrong kind, no version, or bad data."""


class NewerRecord(JournalError, RetryLater):
    """A record written by a newer release than this one: leave it for a worker that reads
    it; nothing is wrong with it (module docstring)."""

    def __init__(self, kind: str, version: int, reads: int) -> None:
        super().__init__(
            f"a stored {kind} record is version {version}, newer than this release of "
            f"questbot reads (up to {reads}): it was written by a newer questbot, so this one "
            "leaves it untouched; finish the upgrade (start workers of the newer release) and "
            "they will take it up")
        self.kind, self.version, self.reads = kind, version, reads


def versions() -> Mapping[str, int]:
    """The version of each kind this code reads and writes now (``as_release`` changes it)."""
    return _RELEASE.get()


@contextmanager
def as_release(**older: int) -> Iterator[None]:
    """Within it (and in tasks started within it), read and write each kind named at the
    version given, as the release that knew no later one did: ``as_release(evidence=1)``.
    The journal's own kinds (event, effect, policy) are only read at the version given: their
    fast writers know one version, today's; a release that bumps one of them teaches its
    writer the older form before an upgrade test can run it as the release before, as
    ``dump_quest`` knows version 1 (and ``Journal`` then writes the snapshot every apply)."""
    unknown = set(older) - set(SCHEMA_VERSION)
    if unknown or any(not 1 <= v <= SCHEMA_VERSION[k] for k, v in older.items()):
        raise ValueError(f"no release wrote {older}")
    token = _RELEASE.set({**SCHEMA_VERSION, **older})
    try:
        yield
    finally:
        _RELEASE.reset(token)


# --- writing ----------------------------------------------------------------------------

_OPTIONS = orjson.OPT_UTC_Z
_HEAD = {kind: f'{{"v":{version},"kind":"{kind}","data":'.encode()
         for kind, version in SCHEMA_VERSION.items()}
_QUEST_V1 = b'{"v":1,"kind":"quest","data":'
_QUEST_V2 = b'{"v":2,"kind":"quest","at":%d,"data":'


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


def dump_quest(quest: Quest, at: int | None = None) -> bytes:
    """The quest's snapshot record. Version 2 names the journal version ``at`` it is the fold
    of, which may lag the snapshot hash's ``v`` (the entries after it are folded on reading:
    ``bot.journal.snapshots``); version 1 (``at`` not given, or ``as_release(quest=1)``) is the
    quest at the hash's ``v``, as every release before wrote it every apply."""
    try:
        data = orjson.dumps(quest.__dict__, default=_fields, option=_OPTIONS)
    except TypeError:
        data = quest.model_dump_json().encode()
    if at is None or versions()["quest"] == 1:
        return _QUEST_V1 + data + b"}"
    return _QUEST_V2 % at + data + b"}"


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


def _load(kind: str, text: str | bytes) -> dict[str, Any]:
    return _load_envelope(kind, text)[0]


def _load_envelope(kind: str, text: str | bytes) -> tuple[dict[str, Any], dict[str, Any]]:
    """The record's data, upcast to the version this release reads, and its envelope."""
    try:
        record = json.loads(text)
    except json.JSONDecodeError as exc:
        raise RecordError(f"stored {kind} is not JSON: {exc}") from exc
    if (kind in LEGACY and isinstance(record, dict) and "kind" not in record
            and "data" not in record):
        record = {"v": 1, "kind": kind, "data": record}
    if not isinstance(record, dict) or record.get("kind") != kind:
        raise RecordError(f"stored record is not a {kind}: {str(text)[:80]!r}")
    version = record.get("v")
    data = record.get("data")
    if not isinstance(version, int) or isinstance(version, bool) or not isinstance(data, dict):
        raise RecordError(f"stored {kind} has no version or data")
    current = versions()[kind]
    if version > current:
        raise NewerRecord(kind, version, current)
    if version < 1:
        raise RecordError(f"stored {kind} has schema version {version}; versions start at 1")
    while version < current:
        upcast = UPCASTERS.get((kind, version))
        if upcast is None:
            raise RecordError(f"no upcaster for {kind} from schema version {version}")
        data = upcast(data)
        version += 1
    return data, record


def load_quest(text: str | bytes) -> Quest:
    return load_quest_at(text)[0]


def load_quest_at(text: str | bytes) -> tuple[Quest, int | None]:
    """The snapshot record's quest and the journal version it is at: ``None`` for a version 1
    record, which is the quest at its hash's ``v``."""
    data, record = _load_envelope("quest", text)
    at = record.get("at")
    if record.get("v") == 1 or at is None:
        return Quest.model_validate(data), None
    if not isinstance(at, int) or isinstance(at, bool) or at < 1:
        raise RecordError(f"stored quest names no journal version it is at: {at!r}")
    return Quest.model_validate(data), at


def load_event(text: str | bytes) -> Event:
    return EVENT_ADAPTER.validate_python(_load("event", text))


def load_effect(text: str | bytes) -> Effect:
    return effect_from_record(_load("effect", text))


def load_policy(text: str | bytes) -> Policy:
    return Policy.model_validate(_load("policy", text))


# --- the other records ------------------------------------------------------------------

M = TypeVar("M", bound=BaseModel)


def dump_record(kind: str, data: Mapping[str, Any]) -> bytes:
    """A record of a kind kept beside the journal (``evidence``, ``push_note``) in the
    envelope, at the version this release writes (``versions()``); ``data`` must be that
    version's shape. Version 1 of a ``LEGACY`` kind is its bare JSON, as those releases
    wrote it."""
    version = versions()[kind]
    if version == 1 and kind in LEGACY:
        return json.dumps(data, sort_keys=True).encode()
    return orjson.dumps({"v": version, "kind": kind, "data": data}, option=_OPTIONS)


def load_record(kind: str, text: str | bytes) -> dict[str, Any]:
    """The data of a stored record of ``kind``, upcast to the version this release reads;
    ``NewerRecord`` if a newer release wrote it, ``RecordError`` if it cannot be read."""
    return _load(kind, text)


def _evidence_v1_to_v2(data: dict[str, Any]) -> dict[str, Any]:
    """Evidence 2 leaves out what the field's name already says (``<revision>:<stage>``) and
    every field at its default — most of a stage record's fields are empty: the demo's quest
    keeps 5.7 KB of evidence instead of 6.7 (the proof's command output is the rest). The name
    gives them back on reading (``bot.agent.evidence_store``)."""
    return {k: v for k, v in data.items()
            if k not in ("piece", "revision") and v not in (None, [], ())}


UPCASTERS[("evidence", 1)] = _evidence_v1_to_v2


def _quest_v1_to_v2(data: dict[str, Any]) -> dict[str, Any]:
    """The quest is the same: version 2 only adds, beside the data, the journal version the
    snapshot is at (version 1's is its hash's ``v``: ``load_quest_at`` answers ``None``)."""
    return data


UPCASTERS[("quest", 1)] = _quest_v1_to_v2


def _into_the_envelope(data: dict[str, Any]) -> dict[str, Any]:
    """The same fields: version 2 is the first of these kinds written in the envelope
    (version 1 was the bare JSON)."""
    return data


for _kind in ("push_note", *MODEL_KINDS):
    UPCASTERS[(_kind, 1)] = _into_the_envelope


def dump_model(kind: str, model: BaseModel) -> bytes:
    """``model`` as a record of ``kind`` (one of ``MODEL_KINDS``), in the envelope."""
    return dump_record(kind, model.model_dump(mode="json"))


def load_model(kind: str, text: str | bytes, model: type[M]) -> M:
    """A record of ``kind`` as ``model``, whichever release wrote it; ``NewerRecord`` for one
    a newer release wrote."""
    return model.model_validate(load_record(kind, text))
