"""Effects: what a transition asks the world to do, as data with an idempotency key.

The key is ``trail:rev:type:event:occurrence`` — the quest id, the revision the quest is at
after the transition, the effect type, the id of the event that caused it, and the index among
effects of the same type in that one transition. Payload text never enters the key, so the
same journal always yields the same keys, and an adapter can use the key to do its write once.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import TypeAdapter

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


@dataclass(frozen=True, slots=True, kw_only=True)
class Effect:
    """A keyed request for work. A dataclass rather than a model because ``step`` makes one
    per effect on the hot path; ``EFFECT_ADAPTER`` validates and dumps it at the boundaries."""

    key: str
    type: EffectType
    quest_id: str
    revision: int
    event_id: str
    occurrence: int
    payload: dict[str, Any]


EFFECT_ADAPTER: TypeAdapter[Effect] = TypeAdapter(Effect)


_new = object.__new__
# The generated frozen ``__init__`` sets each slot with ``object.__setattr__``; calling each
# slot's own setter does the same thing without the look-up.
_set_key, _set_type, _set_quest_id, _set_revision, _set_event_id, _set_occurrence, \
    _set_payload = (Effect.__dict__[name].__set__ for name in Effect.__dataclass_fields__)


def keyed_effect(quest_id: str, revision: int, type_: EffectType, event_id: str,
                 occurrence: int, payload: dict[str, Any]) -> Effect:
    """``Effect(key=effect_key(...), type=type_, ...)``: the same object, built without the
    keyword call and global look-ups of the generated ``__init__``, because ``step`` makes one
    per effect. The key is ``effect_key``'s, joined directly."""
    effect: Effect = _new(Effect)
    _set_key(effect, ":".join((quest_id, str(revision), type_, event_id, str(occurrence))))
    _set_type(effect, type_)
    _set_quest_id(effect, quest_id)
    _set_revision(effect, revision)
    _set_event_id(effect, event_id)
    _set_occurrence(effect, occurrence)
    _set_payload(effect, payload)
    return effect
