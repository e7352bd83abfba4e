"""What a person may do to a quest right now, and the lifecycle as a Mermaid diagram.

Both are derived from the core's table (``bot.core.table.TABLE``) and its claim rule
(``bot.core.lifecycle.CLAIM_GUARDED``), never listed by hand: when the lifecycle changes, the
status comment changes with it. The few rules a table cell cannot express are the same ones
``bot.core.rules`` states at its top, repeated here where they change what is allowed:

* a decision needs an open checkpoint (``checkpoint_decided`` is listed for ``handed_off``,
  but a claim held over a running proof has none);
* ``/resume`` does not restart a finished research-only quest, ``/quest fix`` does;
* ``/quest`` starts a quest routed to a person (``triaged``) or turns finished research
  into a fix; the other ``triaged`` moves are triage's own.
"""

from __future__ import annotations

from dataclasses import dataclass

from bot.core import Quest
from bot.core.lifecycle import CLAIM_GUARDED
from bot.core.quest import ParkReason
from bot.core.states import ACTIVE, CHECKPOINT_AT, LIVE, TERMINAL, State
from bot.core.table import TABLE
from bot.github.commands import USAGE, CommandName

COMMAND_EVENT: dict[CommandName, str] = {
    CommandName.APPROVE: "checkpoint_decided",
    CommandName.REVISE: "checkpoint_decided",
    CommandName.REJECT: "checkpoint_decided",
    CommandName.CLAIM: "claimed",
    CommandName.RELEASE: "released",
    CommandName.PAUSE: "paused",
    CommandName.RESUME: "resumed",
    CommandName.KILL: "killed",
    CommandName.QUEST: "triaged",
}
"""The core event each command becomes (``/status`` only reads, so it is always allowed)."""


@dataclass(frozen=True, slots=True)
class Allowed:
    usage: str
    only: str | None = None
    """The one login allowed to use it (a claimed review's owner), if restricted."""


def allowed_commands(quest: Quest) -> list[Allowed]:
    """The commands the quest accepts in its current state, in ``USAGE`` order."""
    state = quest.state
    checkpoint = CHECKPOINT_AT.get(quest.checkpoint_state)
    out: list[Allowed] = []
    for name, usage in USAGE.items():
        event = COMMAND_EVENT.get(name)
        if event is None:
            out.append(Allowed(usage))
            continue
        if state not in TABLE[event]:
            continue
        if event == "checkpoint_decided":
            if checkpoint is None:
                continue
            usage = usage.replace("[A|B|C]", checkpoint.value)
        if event == "resumed" and quest.park_reason is ParkReason.RESEARCH_COMPLETE:
            continue
        if event == "triaged":
            if state is State.PARKED and quest.park_reason is ParkReason.RESEARCH_COMPLETE:
                usage = "/quest fix"
            elif state is not State.TRIAGED:
                continue
        only = quest.owner if state is State.HANDED_OFF and event in CLAIM_GUARDED else None
        out.append(Allowed(usage, only))
    return out


# --- the diagram -------------------------------------------------------------------------

_EVERYWHERE = ("paused", "resumed", "killed")
"""Events that reach (or leave from) every live state: drawn as one note, not 40 arrows."""


def _edges() -> dict[tuple[State, State], list[str]]:
    edges: dict[tuple[State, State], list[str]] = {}
    for event, moves in TABLE.items():
        if event in _EVERYWHERE:
            continue
        for source, targets in moves.items():
            if source is None:
                continue
            for target in sorted(targets, key=list(State).index):
                if target is not source:
                    edges.setdefault((source, target), []).append(event)
    return edges


def _everywhere_note() -> str:
    """The note for ``_EVERYWHERE``, checked against the table so it cannot drift."""
    paused = {s for s in TABLE["paused"] if s is not None}
    killed = {s for s in TABLE["killed"] if s is not None}
    assert paused == ACTIVE and killed == LIVE, "the lifecycle note no longer matches the table"
    return ("any live state: killed → abandoned; any active state: paused → parked; "
            "parked: resumed → the state it was in")


EDGES = _edges()


def lifecycle_mermaid(current: State) -> str:
    """A Mermaid ``stateDiagram-v2`` of the lifecycle with ``current`` marked."""
    lines = ["stateDiagram-v2", "    direction LR", f"    [*] --> {State.SENSED.value}"]
    for (source, target), events in EDGES.items():
        lines.append(f"    {source.value} --> {target.value}: {', '.join(events)}")
    lines.extend(f"    {state.value} --> [*]" for state in sorted(TERMINAL))
    lines.append(f"    note right of {State.PARKED.value}: {_everywhere_note()}")
    lines.append("    classDef current fill:#ffd33d,stroke:#b08800,stroke-width:3px,"
                 "font-weight:bold")
    lines.append(f"    class {current.value} current")
    return "\n".join(lines)
