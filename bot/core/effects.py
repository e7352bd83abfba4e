"""Effects: what a transition asks the world to do, as data with an idempotency key.

The key is ``trail:rev:type:event:occurrence`` — the quest id, the revision the quest is at
after the transition, the effect type, the id of the event that caused it, and the index among
effects of the same type in that one transition. Payload text never enters the key, so the
same journal always yields the same keys, and an adapter can use the key to do its write once.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from pydantic import ConfigDict, TypeAdapter, with_config
from typing_extensions import TypedDict  # pydantic's own dependency; it needs this one on 3.11

from bot.core.names import Name


class EffectType(Name):
    RUN_TRIAGE = "run_triage"
    START_AGENT = "start_agent"
    STOP_AGENT = "stop_agent"
    RUN_PROOF = "run_proof"
    RUN_PROBES = "run_probes"
    REQUEST_CHECKPOINT = "request_checkpoint"
    REQUEST_SPEND = "request_spend"
    START_RESPONDENT_RUN = "start_respondent_run"
    LAND = "land"
    REBASE = "rebase"
    ROLLBACK = "rollback"
    START_WATCH = "start_watch"
    REGISTER_REGRESSION_PROBE = "register_regression_probe"
    NOTIFY_INBOX = "notify_inbox"
    REPLY_COMMENT = "reply_comment"
    MERGE_SIGNAL = "merge_signal"
    MUTE_FINGERPRINT = "mute_fingerprint"
    RESUME_DEPENDENTS = "resume_dependents"
    DELIVER_CHILD_EVIDENCE = "deliver_child_evidence"


def effect_key(quest_id: str, revision: int, type_: str, event_id: str, occurrence: int) -> str:
    return f"{quest_id}:{revision}:{type_}:{event_id}:{occurrence}"


class Effect(NamedTuple):
    """A keyed request for work.

    A named tuple rather than a model or a slotted dataclass because ``fold`` makes one per
    effect and keeps them all: a tuple is built in one step instead of seven slot writes (a
    replay of 100,000 events ran 14% faster). ``EFFECT_ADAPTER`` validates and dumps its
    record form, a JSON object with these fields, at the boundaries."""

    key: str
    type: EffectType
    quest_id: str
    revision: int
    event_id: str
    occurrence: int
    payload: dict[str, Any]


@with_config(ConfigDict(extra="forbid"))
class EffectRecord(TypedDict):
    """An effect as the journal stores it: a JSON object of ``Effect``'s fields."""

    key: str
    type: EffectType
    quest_id: str
    revision: int
    event_id: str
    occurrence: int
    payload: dict[str, Any]


EFFECT_ADAPTER: TypeAdapter[EffectRecord] = TypeAdapter(EffectRecord)


def effect_record(effect: Effect) -> EffectRecord:
    """The effect's stored form (before JSON): its fields by name."""
    key, type_, quest_id, revision, event_id, occurrence, payload = effect
    return {"key": key, "type": type_, "quest_id": quest_id, "revision": revision,
            "event_id": event_id, "occurrence": occurrence, "payload": payload}


def effect_from_record(data: Any) -> Effect:
    """An effect from its stored form, validated (a bad record raises ``ValidationError``)."""
    return Effect(**EFFECT_ADAPTER.validate_python(data))


_tuple_new = tuple.__new__


def keyed_effect(quest_id: str, revision: int, type_: EffectType, event_id: str,
                 occurrence: int, payload: dict[str, Any]) -> Effect:
    """``Effect(key=effect_key(...), type=type_, ...)``: the same tuple, built without the
    keyword call of the generated ``__new__``, because ``step`` makes one per effect. The key
    is ``effect_key``'s, joined directly."""
    return _tuple_new(Effect, (f"{quest_id}:{revision}:{type_._value_}:{event_id}:{occurrence}",
                               type_, quest_id, revision, event_id, occurrence, payload))
