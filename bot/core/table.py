"""The transition table: for each event type, the states it may arrive in and the states it may
lead to from each. This is the whole lifecycle as data; ``rules.py`` holds one handler per event
type that picks among the listed targets, and ``step`` refuses any result the table does not
list. ``docs/lifecycle.md`` is generated from this module.

``None`` as a source stands for "no quest yet": only ``signal_sensed`` creates a quest.
Terminal states absorb every event not listed for them (see ``lifecycle.step``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from bot.core.states import ACTIVE, LIVE, State

S = State
Moves = Mapping[State | None, frozenset[State]]


def _to(*states: State) -> frozenset[State]:
    return frozenset(states)


def _same(sources: Iterable[State]) -> dict[State | None, frozenset[State]]:
    """Events that record something without moving the quest."""
    return {s: _to(s) for s in sources}


_ACTIVE_ORDERED = sorted(ACTIVE, key=list(State).index)
_LIVE_ORDERED = sorted(LIVE, key=list(State).index)

TABLE: dict[str, Moves] = {
    # creation and triage
    "signal_sensed": {None: _to(S.SENSED)},
    "triaged": {
        S.SENSED: _to(S.RESEARCHING, S.TRIAGED, S.ABANDONED, S.PARKED),
        S.TRIAGED: _to(S.RESEARCHING),
        S.PARKED: _to(S.REPRODUCING),
    },
    "signal_attached": _same(_LIVE_ORDERED),
    # the main line
    "hypothesis_written": {S.RESEARCHING: _to(S.HYPOTHESISED)},
    "reproduced": {S.REPRODUCING: _to(S.REPRODUCING)},
    "reproduction_failed": {S.REPRODUCING: _to(S.PARKED)},
    "plan_written": {S.REPRODUCING: _to(S.PLANNED)},
    "patch_pushed": {S.PATCHING: _to(S.PROVING)},
    "proof_completed": {S.PROVING: _to(S.READY), S.HANDED_OFF: _to(S.HANDED_OFF)},
    "proof_failed": {
        S.PROVING: _to(S.PATCHING, S.PARKED),
        S.HANDED_OFF: _to(S.PATCHING, S.PARKED),
    },
    "checkpoint_decided": {
        S.HYPOTHESISED: _to(S.HYPOTHESISED, S.REPRODUCING, S.RESEARCHING, S.PARKED, S.ABANDONED),
        S.PLANNED: _to(S.PLANNED, S.PATCHING, S.REPRODUCING, S.ABANDONED),
        S.READY: _to(S.READY, S.LANDING, S.PATCHING, S.ABANDONED),
        S.HANDED_OFF: _to(
            S.REPRODUCING, S.RESEARCHING, S.PARKED, S.PATCHING, S.LANDING, S.ABANDONED
        ),
    },
    # claims
    "claimed": {S.HYPOTHESISED: _to(S.HANDED_OFF), S.PLANNED: _to(S.HANDED_OFF),
                S.READY: _to(S.HANDED_OFF)},
    "released": {S.HANDED_OFF: _to(S.HYPOTHESISED, S.PLANNED, S.READY, S.PROVING)},
    # people stopping and starting work
    "paused": {s: _to(S.PARKED) for s in _ACTIVE_ORDERED},
    "resumed": {S.PARKED: _to(*(s for s in _ACTIVE_ORDERED))},
    "killed": {s: _to(S.ABANDONED) for s in _LIVE_ORDERED},
    # the forge moving under the quest
    "human_revision": {
        **_same([S.SENSED, S.TRIAGED, S.RESEARCHING, S.HYPOTHESISED, S.REPRODUCING, S.PLANNED]),
        S.PATCHING: _to(S.PROVING, S.PATCHING),  # stays when the head is already recorded
        S.PROVING: _to(S.PROVING),
        S.READY: _to(S.PROVING, S.READY),
        S.LANDING: _to(S.PROVING, S.LANDING),
        S.HANDED_OFF: _to(S.HANDED_OFF),
        S.PARKED: _to(S.PARKED),
    },
    "base_moved": {
        **_same(s for s in _LIVE_ORDERED if s not in {S.PROVING, S.READY, S.LANDING,
                                                     S.HANDED_OFF}),
        # a base already recorded (a redelivered push) leaves the quest where it is
        S.PROVING: _to(S.PATCHING, S.PROVING),
        S.READY: _to(S.PATCHING, S.READY),
        S.LANDING: _to(S.PATCHING, S.LANDING),
        S.HANDED_OFF: _to(S.PATCHING, S.HANDED_OFF),
    },
    # landing and after
    "landed": {S.LANDING: _to(S.WATCHING)},
    "watch_clean": {S.WATCHING: _to(S.CLOSED)},
    "regression_detected": {S.WATCHING: _to(S.ROLLED_BACK)},
    "rollback_confirmed": {S.ROLLED_BACK: _to(S.RESEARCHING)},
    "reopened": {S.CLOSED: _to(S.RESEARCHING)},
    # related quests
    "parent_landed": {S.PARKED: _to(S.RESEARCHING, S.PARKED)},
    "child_evidence": _same(_LIVE_ORDERED),
    # money and bookkeeping
    "spend_requested": _same(_LIVE_ORDERED),
    "spend_decided": _same(_LIVE_ORDERED),
    "usage_recorded": _same(State),
    "comment_posted": _same(_LIVE_ORDERED),
    "effect_failed": _same(State),
}


def defined(state: State | None, event_type: str) -> bool:
    return state in TABLE[event_type]
