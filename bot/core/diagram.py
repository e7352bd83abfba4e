"""Mermaid state diagrams, generated from the machines' own tables and never drawn by hand.

``state_diagram`` is the one generator: the quest lifecycle (``lifecycle_mermaid``, drawn in
every status comment and in ``docs/lifecycle.md``) and the agent run (``bot.agent.machine``)
both use it, so the diagrams read alike and cannot drift from their tables.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from bot.core.events import EVENT_TYPES
from bot.core.states import ACTIVE, LIVE, TERMINAL, State
from bot.core.table import NO_QUEST, TABLE, ordered

Edge = tuple[str, str, Sequence[str]]
"""Source, target and the labels of the events that take the edge."""

_CURRENT_STYLE = "fill:#ffd33d,stroke:#b08800,stroke-width:3px,font-weight:bold"


def state_diagram(edges: Iterable[Edge], *, start: Iterable[str], ends: Iterable[str],
                  notes: Iterable[tuple[str, str]] = (), direction: str | None = None,
                  current: str | None = None) -> str:
    """A ``stateDiagram-v2``: the start, the edges, the terminal states, notes beside states,
    and ``current`` marked when given."""
    lines = ["stateDiagram-v2"]
    if direction is not None:
        lines.append(f"    direction {direction}")
    lines.extend(f"    [*] --> {state}" for state in start)
    lines.extend(f"    {source} --> {target}: {', '.join(labels)}"
                 for source, target, labels in edges)
    lines.extend(f"    {state} --> [*]" for state in ends)
    lines.extend(f"    note right of {state}: {text}" for state, text in notes)
    if current is not None:
        lines.append(f"    classDef current {_CURRENT_STYLE}")
        lines.append(f"    class {current} current")
    return "\n".join(lines)


# --- the quest lifecycle -----------------------------------------------------------------

_EVERYWHERE = ("paused", "resumed", "killed")
"""Events that reach (or leave from) every live state: drawn as one note, not 40 arrows."""


def _lifecycle_edges() -> list[Edge]:
    """Edges that change the state, in the order of the event vocabulary, each labelled with
    every event that takes it. Events that keep the state (usage, comments, signals) are left
    out, and so are ``_EVERYWHERE``'s."""
    edges: dict[tuple[str, str], list[str]] = {}
    for event in EVENT_TYPES:
        if event in _EVERYWHERE:
            continue
        for source in State:
            for target in ordered(TABLE[source].get(event, ())):
                if target is not source:
                    edges.setdefault((source.value, target.value), []).append(event)
    return [(source, target, events) for (source, target), events in edges.items()]


def _everywhere_note() -> str:
    """The note for ``_EVERYWHERE``, checked against the table so it cannot drift."""
    paused = {s for s, row in TABLE.items() if "paused" in row}
    killed = {s for s, row in TABLE.items() if "killed" in row}
    resumed = {s: row["resumed"] for s, row in TABLE.items() if "resumed" in row}
    assert paused == ACTIVE and killed == LIVE and resumed == {
        State.PARKED: ACTIVE | {State.PARKED}}, "the lifecycle note no longer matches the table"
    return ("any live state: killed → abandoned; any active state: paused → parked; "
            "parked: resumed → the state it was in (parked again when its budget is spent)")


_EDGES = _lifecycle_edges()


def lifecycle_mermaid(current: State | None = None) -> str:
    """The quest lifecycle as a Mermaid diagram, with ``current`` marked when given."""
    return state_diagram(
        _EDGES,
        start=[s.value for s in ordered(NO_QUEST["signal_sensed"])],
        ends=[s.value for s in sorted(TERMINAL)],
        notes=[(State.PARKED.value, _everywhere_note())],
        direction="LR",
        current=current.value if current is not None else None,
    )
