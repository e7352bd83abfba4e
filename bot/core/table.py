"""The quest table: the lifecycle as data, one row per state.

Theory of operation
===================

A quest is always in one of sixteen states (``states.State``), and every state is a row of
``TABLE`` — the terminal ones too. A row maps each event type the state accepts to the set of
states that event may lead to. An event type missing from a row is not allowed in that state.
A target set holding the row's own state means the event may leave the quest where it is: the
event is recorded in place (a usage receipt, a signal attached), or it moves the quest only in
some cases (a ``human_revision`` whose head is already recorded). Before a quest exists there
is one more row, ``NO_QUEST``: only ``signal_sensed`` creates a quest.

``lifecycle.step(quest, event, policy)`` reads the table like this:

1. An event for another quest is refused (``Refusal.BAD_EVENT``).
2. The claim guard (below) runs before the row is read.
3. The row of the quest's state is looked up for the event's type. No cell: a live quest
   refuses the event with ``InvalidTransition`` (``Refusal.UNDEFINED``), naming the state, the
   event and where the event is allowed; a terminal quest absorbs it (below).
4. The event type's handler (``rules.HANDLERS``) computes the next quest and the effects to ask
   for. A handler picks among the cell's targets and may still refuse, for a reason the table
   cannot see: the quest's own record or the event's payload (below).
5. ``step`` checks that the next state is one the cell lists — a handler that picks another
   raises ``TableViolation``, a bug in the core — and gives each effect its key.
6. ``step`` names the follow-ups the move sets off (below), for the journal to apply at once.

So this table is the whole set of moves the core can make; ``docs/lifecycle.md`` and the
diagram people see on GitHub are generated from it, and ``tests/core/test_table.py`` holds it
against the seed's own tables, written out independently.

The rules that do not fit a cell
--------------------------------

* **Claim guard.** A claimed review (``handed_off``) accepts the workflow actions and decisions
  in ``CLAIM_GUARDED`` only from its owner; anyone else is refused (``Refusal.CLAIMED``) before
  the row is read. Comments, signals, usage and proof events still apply. The owner's decision
  ends the claim and applies at the checkpoint the review was claimed from
  (``Quest.checkpoint_state``). Proof keeps flowing during a claim: success keeps the review
  held, now at C; failure clears the owner first. Every move that changes the owner — the
  claim, and whatever ends it — asks for ``show_claim`` after its own effects (``step`` adds
  it), so GitHub shows the owner as the pull request's assignee and requested reviewer, and
  puts back what it showed before when the claim ends (``bot.commands.claims``).
* **Follow-ups.** A few moves are followed at once by a move of questbot's own, which the
  core derives from the event (``rules.FOLLOW_UPS``): triage that routes a quest to the agent
  moves it ``sensed`` → ``triaged``, and its follow-up ``research_started`` (id
  ``<triage id>/research``) moves it on to ``researching`` (so does a ``rerun_reported`` that
  found the failure again, ``rules.flaky``) — the seed's main line, with the
  triage decision and the start of research each a move of its own. ``step`` returns the
  follow-ups in ``Transition.follow_ups``; the journal applies and records them in the same
  atomic write as the event, so a stored quest never rests between the two. ``fold`` replays
  them from the journal, and applies one itself when the journal does not hold it next
  (journals written before follow-ups were recorded, and journals written by hand).
* **Terminal absorption.** ``closed`` and ``abandoned`` absorb every event their rows do not
  list: ``step`` reports it as ``absorbed``, the quest is unchanged and no effect is asked
  for; the event is still journaled (so an undeliverable effect, ``effect_failed``, still
  shows on the quest's timeline and in its status comment). Their rows list only
  ``usage_recorded`` — late costs are not lost, the seed's one exception — and for ``closed``
  also ``reopened``, which starts research again at revision + 1 under the same id.
* **Approval binding.** A C approval is a snapshot (revision, head, base, proof digest) and
  counts only while the quest still shows it, so new proof, a base change or a human revision
  end it without a flag to forget; a new signal during proof clears it explicitly. A decision
  may carry the snapshot its author saw and is refused as stale when the quest moved on; the
  account that pushed the head under review cannot approve it at C.
* **Automatic decisions** never advance a blocking checkpoint, nor any checkpoint in shadow
  mode: they are recorded and the quest stays. People's decisions act as usual.
* **Budget.** A move that starts an agent stage with the quest's model spend at or over its
  allowance parks the quest instead, with a spend request in the start's place
  (``rules.budget.hold``, which ``step`` applies after every handler); ``BUDGET_HOLDS`` adds
  ``parked`` to the cells that had no way there. A person's ``spend_decided`` on the parked
  quest returns it to the stage it held back.
* **Preconditions on the quest.** A few cells hold only while the quest's record allows them:
  a decision needs an open checkpoint (a claim held over a running proof has none); ``/resume``
  does not restart finished research, ``/quest fix`` does; a plan needs a recorded reproduction.
  ``rules.PRECONDITIONS`` states each once: the handlers refuse with it (a decision checks the
  checkpoint it names against the same open one) and ``lifecycle.accepts`` answers with it, so
  what people are offered is what ``step`` takes.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from bot.core.states import ACTIVE, State

S = State
Row = Mapping[str, frozenset[State]]
"""Event type → the states that event may lead to from the row's state."""

_ORDER = {state: index for index, state in enumerate(State)}


def _row(state: State, *stays: str, **moves: Iterable[State]) -> Row:
    """A row: events recorded in place (``stays``), then events that may move the quest."""
    row = {event: frozenset({state}) for event in stays}
    row.update({event: frozenset(targets) for event, targets in moves.items()})
    return row


RECORDED: tuple[str, ...] = ("signal_attached", "child_evidence", "spend_requested",
                             "spend_decided", "usage_recorded", "comment_posted", "effect_failed")
"""What every live state records without moving."""
RECEIPTS: tuple[str, ...] = ("usage_recorded",)
"""What a terminal state still records: usage receipts only."""

_PARK = (S.PARKED,)
_ABANDON = (S.ABANDONED,)
_ANY_ACTIVE = tuple(sorted(ACTIVE, key=_ORDER.__getitem__))

NO_QUEST: Row = {"signal_sensed": frozenset({S.SENSED})}
"""The row before a quest exists."""

TABLE: dict[State, Row] = {
    S.SENSED: _row(
        S.SENSED, *RECORDED, "human_revision", "base_moved",
        "held",  # waits for a free slot or a reflection (``bot.core.limits``)
        triaged=(S.TRIAGED, S.PARKED, S.ABANDONED),
        rerun_requested=(S.SENSED,),  # flaky before fixing: the failed run again, first
        rerun_reported=(S.TRIAGED, S.ABANDONED),  # failed again: research; passed: flaky
        paused=_PARK, killed=_ABANDON),
    S.TRIAGED: _row(
        S.TRIAGED, *RECORDED, "human_revision", "base_moved",
        research_started=(S.RESEARCHING,),  # questbot starts what triage routed to the agent
        triaged=(S.RESEARCHING,),  # a person starts a quest routed to a person
        paused=_PARK, killed=_ABANDON),
    S.RESEARCHING: _row(
        S.RESEARCHING, *RECORDED, "human_revision", "base_moved",
        hypothesis_written=(S.HYPOTHESISED,),
        agent_halted=_PARK,  # questbot's own: the agent stopped for a person
        paused=_PARK, killed=_ABANDON),
    S.HYPOTHESISED: _row(  # checkpoint A
        S.HYPOTHESISED, *RECORDED, "human_revision", "base_moved",
        checkpoint_decided=(S.HYPOTHESISED, S.REPRODUCING, S.RESEARCHING, S.PARKED,
                            S.ABANDONED),
        claimed=(S.HANDED_OFF,),
        paused=_PARK, killed=_ABANDON),
    S.REPRODUCING: _row(
        S.REPRODUCING, *RECORDED, "human_revision", "base_moved", "reproduced",
        reproduction_failed=(S.PARKED,),
        agent_halted=_PARK,
        plan_written=(S.PLANNED,),
        paused=_PARK, killed=_ABANDON),
    S.PLANNED: _row(  # checkpoint B
        S.PLANNED, *RECORDED, "human_revision", "base_moved",
        checkpoint_decided=(S.PLANNED, S.PATCHING, S.REPRODUCING, S.ABANDONED),
        claimed=(S.HANDED_OFF,),
        paused=_PARK, killed=_ABANDON),
    S.PATCHING: _row(
        S.PATCHING, *RECORDED, "base_moved",
        patch_pushed=(S.PROVING,),
        agent_halted=_PARK,
        human_revision=(S.PROVING, S.PATCHING),  # stays when the head is already recorded
        paused=_PARK, killed=_ABANDON),
    S.PROVING: _row(
        S.PROVING, *RECORDED, "human_revision",
        proof_completed=(S.READY,),
        proof_failed=(S.PATCHING, S.PARKED),
        base_moved=(S.PATCHING, S.PROVING),  # stays for a base already recorded
        paused=_PARK, killed=_ABANDON),
    S.READY: _row(  # checkpoint C
        S.READY, *RECORDED,
        checkpoint_decided=(S.READY, S.LANDING, S.PATCHING, S.ABANDONED),
        claimed=(S.HANDED_OFF,),
        human_revision=(S.PROVING, S.READY),
        base_moved=(S.PATCHING, S.READY),
        paused=_PARK, killed=_ABANDON),
    S.LANDING: _row(
        S.LANDING, *RECORDED,
        landed=(S.WATCHING,),
        human_revision=(S.PROVING, S.LANDING),
        base_moved=(S.PATCHING, S.LANDING),
        paused=_PARK, killed=_ABANDON),
    S.WATCHING: _row(
        S.WATCHING, *RECORDED, "base_moved",
        watch_clean=(S.CLOSED,),
        regression_detected=(S.ROLLED_BACK,),
        paused=_PARK, killed=_ABANDON),
    S.CLOSED: _row(  # terminal
        S.CLOSED, *RECEIPTS,
        reopened=(S.RESEARCHING,)),
    S.ROLLED_BACK: _row(
        S.ROLLED_BACK, *RECORDED, "base_moved",
        rollback_confirmed=(S.RESEARCHING,),
        paused=_PARK, killed=_ABANDON),
    S.PARKED: _row(
        S.PARKED, *RECORDED, "human_revision", "base_moved",
        resumed=_ANY_ACTIVE,  # the state it was in
        spend_decided=(S.PARKED, S.RESEARCHING, S.REPRODUCING, S.PATCHING),  # budget: the stage
        triaged=(S.REPRODUCING,),  # finished research becomes a fix
        parent_landed=(S.RESEARCHING, S.PARKED),
        killed=_ABANDON),
    S.HANDED_OFF: _row(  # a claimed review, at the checkpoint it was claimed from
        S.HANDED_OFF, *RECORDED, "human_revision",
        checkpoint_decided=(S.REPRODUCING, S.RESEARCHING, S.PARKED, S.PATCHING, S.LANDING,
                            S.ABANDONED),
        released=(S.HYPOTHESISED, S.PLANNED, S.READY, S.PROVING),
        proof_completed=(S.HANDED_OFF,),
        proof_failed=(S.PATCHING, S.PARKED),
        base_moved=(S.PATCHING, S.HANDED_OFF),
        paused=_PARK, killed=_ABANDON),
    S.ABANDONED: _row(  # terminal
        S.ABANDONED, *RECEIPTS),
}

BUDGET_HOLDS: dict[State, tuple[str, ...]] = {
    S.TRIAGED: ("research_started", "triaged"),
    S.RESEARCHING: ("human_revision",),
    S.REPRODUCING: ("human_revision",),
    S.PLANNED: ("checkpoint_decided",),
    S.READY: ("checkpoint_decided",),
    S.ROLLED_BACK: ("rollback_confirmed",),
    S.CLOSED: ("reopened",),
    S.PARKED: ("resumed", "triaged"),
}
"""Moves that start an agent stage and had no way to ``parked`` of their own: with the
budget spent the stage is held back and the quest parks instead (``rules.budget``). The
other moves that start a stage (a decision at A, a failed proof, a parent landing) may park
already."""
for _state, _events in BUDGET_HOLDS.items():
    TABLE[_state] = {**TABLE[_state],
                     **{ev: TABLE[_state][ev] | {S.PARKED} for ev in _events}}

_AGENT = frozenset({"start_agent", "start_respondent_run"})
WAITS_ON: dict[State, frozenset[str]] = {
    S.SENSED: frozenset({"run_triage", "rerun_check"}),
    S.RESEARCHING: _AGENT,
    S.REPRODUCING: _AGENT,
    S.PATCHING: _AGENT | {"rebase"},
    S.PROVING: frozenset({"run_proof"}),
    S.LANDING: frozenset({"land"}),
    S.WATCHING: frozenset({"start_watch"}),
    S.ROLLED_BACK: frozenset({"rollback"}),
}
"""The working states, and the effect types only questbot's own work moves each of them on
with (what ``rules.asks.enter`` asks for when the state is entered again). When that work fails
for good at the quest's revision, ``effect_failed`` parks the quest (``rules.gave_up``): a
quest never sits in a working state with nothing running."""
for _state in WAITS_ON:
    TABLE[_state] = {**TABLE[_state], "effect_failed": TABLE[_state]["effect_failed"] | {S.PARKED}}

CLAIM_GUARDED: frozenset[str] = frozenset(
    {"checkpoint_decided", "claimed", "released", "paused", "resumed", "killed", "triaged"}
)
"""Workflow actions and decisions a claimed review accepts only from its owner."""


def _by_event() -> dict[str, dict[State | None, frozenset[State]]]:
    out: dict[str, dict[State | None, frozenset[State]]] = {}
    for source, row in [(None, NO_QUEST), *TABLE.items()]:
        for event, targets in row.items():
            out.setdefault(event, {})[source] = targets
    return out


BY_EVENT: dict[str, dict[State | None, frozenset[State]]] = _by_event()
"""The same table turned event-major (``None`` for no quest), for ``step``'s one look-up per
event and for saying where a refused event is allowed."""


def ordered(states: Iterable[State]) -> list[State]:
    """``states`` in the seed's order, for docs and diagrams that must read the same each time."""
    return sorted(states, key=_ORDER.__getitem__)
