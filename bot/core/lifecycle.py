"""``step``, ``fold`` and ``accepts``: the quest lifecycle of seed 000 as one pure function, its
replay, and the question people's commands ask before they are sent.

``bot.core.table`` opens with the theory of operation: what a row is, what ``step`` does with
it, and the rules that do not fit a cell. Here is the machinery that runs it. A quest is a
frozen record and an event a frozen record with a stable id; ``step(quest, event, policy)``
returns the next quest and its keyed effects, or raises ``InvalidTransition`` and the caller
keeps the quest it had.

``fold`` runs a journal through ``step`` in order. An event id seen before is absorbed (GitHub
redelivers with the same id), so the same journal always gives the same quest and keys.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from bot.core.effects import Effect, EffectLog, EffectRow, effect_of_row
from bot.core.errors import InvalidTransition, Refusal, TableViolation
from bot.core.events import Event
from bot.core.policy import Policy
from bot.core.quest import Quest
from bot.core.rules import HANDLERS, PRECONDITIONS
from bot.core.states import TERMINAL, State
from bot.core.table import BY_EVENT, CLAIM_GUARDED

_HANDED_OFF = State.HANDED_OFF
_DISPATCH = {etype: (moves, HANDLERS[etype]) for etype, moves in BY_EVENT.items()}
"""Each event type's moves (source state → targets, turned from the state-major table) and
its handler, found with one look-up per event."""

__all__ = ["ANY_PERSON", "CLAIM_GUARDED", "FoldResult", "InvalidAt", "Transition", "accepts",
           "fold", "reserved_for", "step"]


@dataclass(frozen=True, slots=True)
class Transition:
    quest: Quest
    effects: tuple[Effect, ...]
    absorbed: bool = False
    """The quest is terminal and the event changed nothing (it is still journaled)."""


def step(quest: Quest | None, event: Event, policy: Policy) -> Transition:
    rows: list[EffectRow] = []
    payloads: list[dict[str, Any]] = []
    nq = _advance(quest, event, policy, rows, payloads)
    if nq is None:  # absorbed by a terminal quest
        assert quest is not None
        return Transition(quest, (), absorbed=True)
    return Transition(nq, tuple(map(effect_of_row, rows, payloads)))


def _advance(quest: Quest | None, event: Event, policy: Policy, rows: list[EffectRow],
             payloads: list[dict[str, Any]]) -> Quest | None:
    """``step`` without the ``Transition``: appends each keyed effect to ``rows`` and its
    payload to ``payloads``, and returns the next quest, or ``None`` when a terminal quest
    absorbs the event. ``fold`` calls this directly so that a replay keeps nothing per event
    beyond its effects, in a form the collector leaves alone (``EffectLog`` says why)."""
    etype = event.type
    moves, handler = _DISPATCH[etype]
    if quest is None:
        targets = moves.get(None)
        if targets is None:
            raise InvalidTransition("none", etype, "no quest exists yet; a quest starts with "
                                    "signal_sensed", Refusal.UNDEFINED)
    else:
        state = quest.state
        targets = moves.get(state)
        if event.quest_id != quest.id:
            raise InvalidTransition(state, etype, f"the event is for quest {event.quest_id}, "
                                    f"not {quest.id}", Refusal.BAD_EVENT)
        if state is _HANDED_OFF and etype in CLAIM_GUARDED and event.actor != quest.owner:
            raise InvalidTransition(state, etype, f"the review is claimed by @{quest.owner}; "
                                    "ask them, or wait for /release", Refusal.CLAIMED)
        if targets is None:
            if state in TERMINAL:
                return None
            raise InvalidTransition(state, etype, _undefined_reason(etype), Refusal.UNDEFINED)
    nq, asks = handler(quest, event, policy)  # type: ignore[arg-type]  # None only for signal_sensed
    if nq.state not in targets:
        source = quest.state if quest is not None else None
        raise TableViolation(f"{etype} moved {source} to {nq.state}, which the table does not list")
    if asks:
        # one row per effect, its key ``effect_key``'s
        qid, rev, event_id = nq.id, nq.revision, event.id
        if len(asks) == 1:  # the common case: no occurrence bookkeeping
            kind, payload = asks[0]
            text = kind._value_
            rows.append((f"{qid}:{rev}:{text}:{event_id}:0", text, qid, rev, event_id, 0))
            payloads.append(payload)
        else:
            seen: dict[str, int] = {}
            for kind, payload in asks:
                text = kind._value_
                occurrence = seen.get(text, 0)
                seen[text] = occurrence + 1
                rows.append((f"{qid}:{rev}:{text}:{event_id}:{occurrence}", text, qid, rev,
                             event_id, occurrence))
                payloads.append(payload)
    return nq


def _undefined_reason(etype: str) -> str:
    allowed = sorted(str(s) for s in BY_EVENT[etype] if s is not None)
    where = ", ".join(allowed) if allowed else "no state"
    return f"{etype} is only defined in {where}"


ANY_PERSON: Final = "<any person>"
"""An actor for ``accepts``: some person who holds no claim. It is not a GitHub login (logins
never hold ``<``), so it is never a claimed review's owner."""


def accepts(quest: Quest | None, event_type: str, actor: str | None = None) -> bool:
    """Whether ``step`` takes an event of this type from ``actor`` now: a login,
    ``ANY_PERSON``, or ``None`` for questbot and its runners, as events carry it.

    It asks what ``step`` asks before the payload: the table's row, the claim guard and the
    preconditions on the quest's record. ``False`` means every such event is refused (or, on
    a terminal quest, absorbed); ``True`` means the payload may still be refused — a stale
    snapshot, a proof that does not bind, the head's pusher approving it, a route the state
    does not take. The status comment offers people exactly what this accepts."""
    moves = BY_EVENT[event_type]
    if quest is None:
        return None in moves
    state = quest.state
    if state is _HANDED_OFF and event_type in CLAIM_GUARDED and actor != quest.owner:
        return False
    if state not in moves:
        return False
    precondition = PRECONDITIONS.get(event_type)
    return precondition is None or precondition(quest, actor) is None


def reserved_for(quest: Quest, event_type: str) -> str | None:
    """The one login a claimed review takes this event from (its owner, for the actions the
    claim guards), or ``None`` when no claim restricts it."""
    if quest.state is _HANDED_OFF and event_type in CLAIM_GUARDED:
        return quest.owner
    return None


@dataclass(frozen=True, slots=True)
class InvalidAt:
    """The first refused event of a fold."""

    index: int
    event_id: str
    event_type: str
    state: str
    reason: str
    code: Refusal


@dataclass(frozen=True, slots=True)
class FoldResult:
    quest: Quest | None
    effects: Sequence[Effect]
    """An ``EffectLog`` from ``fold``: every effect in order."""
    invalid: InvalidAt | None = None
    applied: int = 0
    absorbed: tuple[str, ...] = field(default=())
    """Ids of events that changed nothing: redeliveries and events after a terminal state."""


def fold(events: Iterable[Event], policy: Policy, *, stop_at_invalid: bool = True,
         quest: Quest | None = None) -> FoldResult:
    """Replay ``events`` in order. With ``stop_at_invalid`` (the default) replay stops at the
    first refused event; otherwise refused events are skipped, as the live path skips them."""
    rows: list[EffectRow] = []
    payloads: list[dict[str, Any]] = []
    seen: set[str] = set()
    absorbed: list[str] = []
    invalid: InvalidAt | None = None
    applied = 0
    remember = seen.add
    for index, event in enumerate(events):
        event_id = event.id
        known = len(seen)
        remember(event_id)
        if len(seen) == known:  # seen before: one hash look-up instead of two
            absorbed.append(event_id)
            continue
        try:
            nq = _advance(quest, event, policy, rows, payloads)
        except InvalidTransition as exc:
            if invalid is None:
                invalid = InvalidAt(index, event_id, event.type, exc.state, exc.reason, exc.code)
            if stop_at_invalid:
                break
            continue
        if nq is None:
            absorbed.append(event_id)
        else:
            quest = nq
        applied += 1
    return FoldResult(quest, EffectLog(rows, payloads), invalid, applied, tuple(absorbed))
