"""Effects: what a transition asks the world to do, as data with an idempotency key.

The key is ``trail:rev:type:event:occurrence`` — the quest id, the revision the quest is at
after the transition, the effect type, the id of the event that caused it, and the index among
effects of the same type in that one transition. Payload text never enters the key, so the
same journal always yields the same keys, and an adapter can use the key to do its write once.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, NamedTuple, overload

from pydantic import ConfigDict, TypeAdapter, with_config
from typing_extensions import TypedDict  # pydantic's own dependency; it needs this one on 3.11

from bot.core.names import Name


class EffectType(Name):
    RUN_TRIAGE = "run_triage"
    RERUN_CHECK = "rerun_check"
    START_AGENT = "start_agent"
    STOP_AGENT = "stop_agent"
    RUN_PROOF = "run_proof"
    RUN_PROBES = "run_probes"
    REQUEST_CHECKPOINT = "request_checkpoint"
    REQUEST_SPEND = "request_spend"
    SHOW_CLAIM = "show_claim"
    """Show a claimed review's owner as GitHub shows ownership (the pull request's assignee
    and requested reviewer), or, with no owner, put it back as it was: asked by ``step``
    whenever a move changes ``Quest.owner`` (``bot.commands.claims``)."""
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
    REACT = "react"  # enqueued by intake (a conversation effect); the lifecycle never emits it
    RESTORE_PULL = "restore_pull"  # ditto: a quest's PR open or closed again, as it was
    REFLECT = "reflect"  # a repository's reflection run (bot.reflection.runs); ditto
    CONSOLIDATE = "consolidate"  # enqueued when a quest's ending teaches (bot.lessons.runs)


def effect_key(quest_id: str, revision: int, type_: str, event_id: str, occurrence: int) -> str:
    return f"{quest_id}:{revision}:{type_}:{event_id}:{occurrence}"


class Effect(NamedTuple):
    """A keyed request for work.

    A named tuple rather than a model or a slotted dataclass: ``step`` makes one per effect,
    and a tuple is built in one step instead of seven slot writes. ``EFFECT_ADAPTER``
    validates and dumps its record form, a JSON object with these fields, at the boundaries.
    ``fold`` keeps effects as ``EffectRow`` instead (see ``EffectLog``)."""

    key: str
    type: EffectType
    quest_id: str
    revision: int
    event_id: str
    occurrence: int
    payload: dict[str, Any]


@with_config(ConfigDict(extra="forbid"))
class EffectRecord(TypedDict):
    """An effect as the journal stores it: a JSON object of ``Effect``'s fields. Written out
    rather than derived so that mypy checks both; tests/core/test_effect_log.py holds the two
    field lists equal."""

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


EffectRow = tuple[str, str, str, int, str, int]
"""An effect as ``fold`` keeps it, beside its payload: ``Effect``'s other fields, the type as
its plain text."""

_TYPES: dict[str, EffectType] = {t._value_: t for t in EffectType}


def effect_of_row(row: EffectRow, payload: dict[str, Any]) -> Effect:
    key, type_, quest_id, revision, event_id, occurrence = row
    return _tuple_new(Effect, (key, _TYPES[type_], quest_id, revision, event_id, occurrence,
                               payload))


class EffectLog(Sequence[Effect]):
    """A fold's effects, in order: kept as rows and payloads, handed out as ``Effect``.

    Why not a tuple of ``Effect``: a replay of a long journal keeps about one effect per
    event, and Python's cyclic collector rescans every container that survives; once the
    survivors pass a quarter of the older heap it runs a full collection over everything —
    with the 100,000-event journal of ``scripts/bench_fold.py`` that one collection took
    230-290 ms of a 1.1-1.3 s fold. A tuple holding only strings and numbers is something the
    collector stops tracking the first time it looks, and so is a dict of plain values from the
    start (the effect payloads are flat for this reason). So a row and its payload cost the
    collector nothing, and an ``Effect`` exists only while a reader holds it. Everything in an
    effect (key, type, payload) is computed by the fold; reading one only wraps its row.
    """

    __slots__ = ("_payloads", "_rows")

    def __init__(self, rows: Sequence[EffectRow] = (),
                 payloads: Sequence[dict[str, Any]] = ()) -> None:
        if len(rows) != len(payloads):
            raise ValueError(f"{len(rows)} effect rows but {len(payloads)} payloads")
        self._rows = rows
        self._payloads = payloads

    def __len__(self) -> int:
        return len(self._rows)

    @overload
    def __getitem__(self, index: int) -> Effect: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[Effect, ...]: ...

    def __getitem__(self, index: int | slice) -> Effect | tuple[Effect, ...]:
        if isinstance(index, slice):
            return tuple(map(effect_of_row, self._rows[index], self._payloads[index]))
        return effect_of_row(self._rows[index], self._payloads[index])

    def __iter__(self) -> Iterator[Effect]:
        return map(effect_of_row, self._rows, self._payloads)

    def __eq__(self, other: object) -> bool:
        """Equal to another log, or a tuple or list, of the same effects in the same order."""
        if isinstance(other, EffectLog | tuple | list):
            return list(self) == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # a sequence of payload dicts: not hashable

    def __repr__(self) -> str:
        return f"EffectLog({list(self)!r})"
