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
