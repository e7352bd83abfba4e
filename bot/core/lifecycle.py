"""``step``, ``fold`` and ``accepts``: the quest lifecycle as one pure function, its
replay, and the question people's commands ask before they are sent.

``bot.core.table`` opens with the theory of operation: what a row is, what ``step`` does with
it, and the rules that do not fit a cell. Here is the machinery that runs it. A quest is a
frozen record and an event a frozen record with a stable id; ``step(quest, event, policy)``
returns the next quest and its keyed effects, or raises ``InvalidTransition`` and the caller
keeps the quest it had.

``fold`` runs a journal through ``step`` in order, each event under the policy it was decided
under when the journal recorded one (``policies``), else the one given. An event id seen before
is absorbed (GitHub redelivers with the same id), so the same journal always gives the same
quest and keys. A follow-up (the table's theory of operation) is replayed from the journal; one
the journal does not hold next is applied before the next event, as the writer would have.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from bot.core.effects import Effect, EffectLog, EffectRow, EffectType, effect_of_row
from bot.core.errors import InvalidTransition, Refusal, TableViolation
from bot.core.events import Event
from bot.core.policy import Policy
from bot.core.quest import Quest
from bot.core.rules import FOLLOW_UPS, HANDLERS, PRECONDITIONS, budget
from bot.core.states import TERMINAL, State
from bot.core.table import BY_EVENT, CLAIM_GUARDED

_HANDED_OFF = State.HANDED_OFF
_START_AGENT = EffectType.START_AGENT
_SHOW_CLAIM = EffectType.SHOW_CLAIM
_DISPATCH = {etype: (moves, HANDLERS[etype], FOLLOW_UPS.get(etype))
             for etype, moves in BY_EVENT.items()}
"""Each event type's moves (source state → targets, turned from the state-major table), its
handler and what may follow it, found with one look-up per event."""

__all__ = ["ANY_PERSON", "CLAIM_GUARDED", "FoldResult", "InvalidAt", "Transition", "accepts",
           "fold", "path", "reserved_for", "step", "steps"]


@dataclass(frozen=True, slots=True)
class Transition:
    quest: Quest
    effects: tuple[Effect, ...]
    absorbed: bool = False
    """The quest is terminal and the event changed nothing (it is still journaled)."""
    follow_ups: tuple[Event, ...] = ()
    """Moves of questbot's own this one sets off, to be applied (``step`` each, in order) and
    journaled with the event at once; ``steps`` does both."""


def step(quest: Quest | None, event: Event, policy: Policy) -> Transition:
    rows: list[EffectRow] = []
    payloads: list[dict[str, Any]] = []
    follows: list[Event] = []
    nq = _advance(quest, event, policy, rows, payloads, follows)
    if nq is None:  # absorbed by a terminal quest
        assert quest is not None
        return Transition(quest, (), absorbed=True)
    return Transition(nq, tuple(map(effect_of_row, rows, payloads)), follow_ups=tuple(follows))


def steps(quest: Quest | None, event: Event,
          policy: Policy) -> tuple[tuple[Event, Transition], ...]:
    """``step`` the event, then each follow-up it sets off, in order: every move a writer
    applies and journals for one event, in one atomic write (``Journal.apply``,
    ``JournalBuilder.add``). The last transition's quest is the quest after them all."""
    done: list[tuple[Event, Transition]] = []
    pending = [event]
    while pending:
        current = pending.pop(0)
        t = step(quest, current, policy)
        done.append((current, t))
        quest = t.quest
        pending[:0] = t.follow_ups
    return tuple(done)


def _advance(quest: Quest | None, event: Event, policy: Policy, rows: list[EffectRow],
             payloads: list[dict[str, Any]], follows: list[Event]) -> Quest | None:
    """``step`` without the ``Transition``: appends each keyed effect to ``rows`` and its
    payload to ``payloads``, any follow-up to ``follows``, and returns the next quest, or
    ``None`` when a terminal quest absorbs the event. ``fold`` calls this directly so that a
    replay keeps nothing per event beyond its effects, in a form the collector leaves alone
    (``EffectLog`` says why)."""
    etype = event.type
    moves, handler, follow = _DISPATCH[etype]
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
        if (state is _HANDED_OFF and etype in CLAIM_GUARDED and event.actor != quest.owner
                and not getattr(event, "repository", "")):  # the repository, not a person
            raise InvalidTransition(state, etype, f"the review is claimed by @{quest.owner}; "
                                    "ask them, or wait for /release", Refusal.CLAIMED)
        if targets is None:
            if state in TERMINAL:
                return None
            raise InvalidTransition(state, etype, _undefined_reason(etype), Refusal.UNDEFINED)
    nq, asks = handler(quest, event, policy)  # type: ignore[arg-type]  # None only for signal_sensed
    for index, (kind, _) in enumerate(asks):
        if kind is _START_AGENT:  # a stage starts only within the budget (``rules.budget``)
            nq, asks = budget.hold(nq, asks, event.id, policy, index)
            break
    if nq.state not in targets:
        source = quest.state if quest is not None else None
        raise TableViolation(f"{etype} moved {source} to {nq.state}, which the table does not list")
    if quest is not None and nq.owner != quest.owner:  # a claim shows on GitHub, or ends there
        asks = [*asks, (_SHOW_CLAIM, {"owner": nq.owner or ""})]
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
    if follow is not None:
        then = follow(nq, event)
        if then is not None:
            follows.append(then)
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
         quest: Quest | None = None,
         policies: Sequence[Policy | None] | None = None) -> FoldResult:
    """Replay ``events`` in order. With ``stop_at_invalid`` (the default) replay stops at the
    first refused event; otherwise refused events are skipped, as the live path skips them.

    ``policies``, when given, holds the policy each event was decided under (one per event,
    ``None`` where the journal recorded none): a journal replays to the same decisions after
    the repository's settings changed. ``policy`` stands in for every ``None``, and for every
    event when ``policies`` is not given."""
    rows: list[EffectRow] = []
    payloads: list[dict[str, Any]] = []
    follows: list[Event] = []
    seen: set[str] = set()
    absorbed: list[str] = []
    invalid: InvalidAt | None = None
    applied = 0
    remember = seen.add
    due: Event | None = None  # the follow-up the last event set off, until the journal shows it
    due_policy = policy
    stopped = False
    for offset, run, run_policy in _runs(events, policy, policies):
        for index, event in enumerate(run, offset):
            event_id = event.id
            if due is not None:
                if event_id != due.id:  # not journaled: apply it as the writer would have
                    quest, caught_up = _catch_up(quest, due, due_policy, rows, payloads, seen)
                    applied += caught_up
                due = None
            known = len(seen)
            remember(event_id)
            if len(seen) == known:  # seen before: one hash look-up instead of two
                absorbed.append(event_id)
                continue
            try:
                nq = _advance(quest, event, run_policy, rows, payloads, follows)
            except InvalidTransition as exc:
                if invalid is None:
                    invalid = InvalidAt(index, event_id, event.type, exc.state, exc.reason,
                                        exc.code)
                if stop_at_invalid:
                    stopped = True
                    break
                continue
            if nq is None:
                absorbed.append(event_id)
            else:
                quest = nq
                if follows:
                    due, due_policy = follows.pop(), run_policy
            applied += 1
        if stopped:
            break
    return FoldResult(quest, EffectLog(rows, payloads), invalid, applied, tuple(absorbed))


def path(events: Sequence[Event], policy: Policy,
         policies: Sequence[Policy | None] | None = None) -> tuple[State, ...]:
    """The states a quest went through, in order, each change once: its journal replayed as
    the live path applies it (redeliveries absorbed, refused events skipped, follow-ups the
    journal does not hold applied), for the small diagram of *this* quest's path."""
    if policies is not None and len(policies) != len(events):
        raise ValueError(f"path takes one policy per event: {len(policies)} for {len(events)}")
    out: list[State] = []
    quest: Quest | None = None
    seen: set[str] = set()
    for index, event in enumerate(events):
        if event.id in seen:
            continue
        chosen = policies[index] if policies is not None else None
        try:
            moves = steps(quest, event, chosen or policy)
        except InvalidTransition:
            continue
        for applied, transition in moves:
            seen.add(applied.id)
            quest = transition.quest
            if not out or out[-1] is not quest.state:
                out.append(quest.state)
    return tuple(out)


def _runs(events: Iterable[Event], policy: Policy, policies: Sequence[Policy | None] | None,
          ) -> Sequence[tuple[int, Iterable[Event], Policy]]:
    """``events`` cut where the policy changes: ``(index of the first, the events, their
    policy)``. One run when there are no recorded policies, so that replay costs nothing per
    event for them."""
    if policies is None:
        return ((0, events, policy),)
    listed = events if isinstance(events, Sequence) else list(events)
    if len(policies) != len(listed):
        raise ValueError(f"fold takes one policy per event (None for the given one): "
                         f"{len(policies)} for {len(listed)} events")
    runs: list[tuple[int, Iterable[Event], Policy]] = []
    start = 0
    for index in range(1, len(listed) + 1):
        if index == len(listed) or policies[index] is not policies[start]:
            chosen = policies[start]
            runs.append((start, listed[start:index], policy if chosen is None else chosen))
            start = index
    return runs


def _catch_up(quest: Quest | None, due: Event, policy: Policy, rows: list[EffectRow],
              payloads: list[dict[str, Any]], seen: set[str]) -> tuple[Quest | None, int]:
    """Apply a follow-up the journal does not hold (and whatever follows it in turn)."""
    applied = 0
    pending = [due]
    while pending:
        event = pending.pop(0)
        follows: list[Event] = []
        seen.add(event.id)
        nq = _advance(quest, event, policy, rows, payloads, follows)
        if nq is not None:
            quest = nq
        applied += 1
        pending[:0] = follows
    return quest, applied
