"""The pure quest lifecycle (docs/lifecycle.md): no I/O, no clock, no randomness, no ids made here.

Import from here: ``step``, ``fold``, ``accepts``, the models and the errors.
"""

from bot.core.canonical import canonical_digest, canonical_json
from bot.core.effects import Effect, EffectType, effect_key
from bot.core.errors import InvalidTransition, QuestError, Refusal, TableViolation
from bot.core.events import EVENT_ADAPTER, EVENT_TYPES, Event
from bot.core.events.decisions import Snapshot, Verdict
from bot.core.events.signals import Route, Severity, SignalKind
from bot.core.lifecycle import (
    ANY_PERSON,
    FoldResult,
    InvalidAt,
    Transition,
    accepts,
    fold,
    reserved_for,
    step,
    steps,
)
from bot.core.policy import Checkpoint, CheckpointMode, Policy
from bot.core.proof import CheckRecord, ProofBundle, Reproduction, Risk
from bot.core.quest import Outcome, ParkReason, Quest
from bot.core.states import ACTIVE, LIVE, TERMINAL, State

__all__ = [
    "ACTIVE", "ANY_PERSON", "EVENT_ADAPTER", "EVENT_TYPES", "LIVE", "TERMINAL", "CheckRecord",
    "Checkpoint", "CheckpointMode", "Effect", "EffectType", "Event", "FoldResult", "InvalidAt",
    "InvalidTransition", "Outcome", "ParkReason", "Policy", "ProofBundle", "Quest",
    "QuestError", "Refusal", "Reproduction", "Risk", "Route", "Severity", "SignalKind",
    "Snapshot", "State", "TableViolation", "Transition", "Verdict", "accepts",
    "canonical_digest", "canonical_json", "effect_key", "fold", "reserved_for", "step",
    "steps",
]
