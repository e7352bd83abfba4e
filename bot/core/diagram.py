"""Mermaid state diagrams, generated from the machines' own tables and never drawn by hand.

``state_diagram`` is the one generator: the whole quest lifecycle (``lifecycle_mermaid``, in
``docs/lifecycle.md``), the path one quest took (``path_mermaid``, in its status comment) and
the agent run (``bot.agent.machine``) all use it, so the diagrams read alike and cannot drift
from their tables.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from itertools import pairwise

from bot.core.events import EVENT_TYPES
from bot.core.states import ACTIVE, LIVE, TERMINAL, State
from bot.core.table import NO_QUEST, TABLE, ordered

Edge = tuple[str, str, Sequence[str]]
"""Source, target and the labels of the events that take the edge."""

_CURRENT_STYLE = "fill:#ffd33d,stroke:#b08800,stroke-width:3px,font-weight:bold"


def state_diagram(edges: Iterable[Edge], *, start: Iterable[str], ends: Iterable[str],
                  notes: Iterable[tuple[str, str]] = (), direction: str | None = None,
                  current: str | None = None, names: Mapping[str, str] | None = None) -> str:
    """A ``stateDiagram-v2``: the start, the edges (unlabelled when they carry no labels), the
    terminal states, notes beside states, and ``current`` marked when given. ``names`` shows a
    state under other words than its id (``state "rolled back" as rolledBack``)."""
    lines = ["stateDiagram-v2"]
    if direction is not None:
        lines.append(f"    direction {direction}")
    lines.extend(f'    state "{label}" as {state}' for state, label in (names or {}).items())
    lines.extend(f"    [*] --> {state}" for state in start)
    lines.extend(f"    {source} --> {target}" + (f": {', '.join(labels)}" if labels else "")
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


# --- one quest's path --------------------------------------------------------------------


def path_id(state: State) -> str:
    """A state's id in a path diagram, in camel case (``rolledBack``): people read the
    diagram, and the status comment shows no internal identifier."""
    first, *rest = state.value.split("_")
    return first + "".join(word.capitalize() for word in rest)


def path_mermaid(path: Sequence[State], current: State | None = None) -> str:
    """The states one quest went through, in order, each step once (a quest sent back
    through a state draws the edge back to it): a handful of boxes, not the whole machine."""
    if not path:
        return state_diagram((), start=(), ends=())
    steps: dict[tuple[str, str], None] = {}
    for source, target in pairwise(path):
        if source is not target:
            steps[(path_id(source), path_id(target))] = None
    names = {path_id(s): s.value.replace("_", " ") for s in dict.fromkeys(path)
             if "_" in s.value}
    last = path[-1]
    return state_diagram(
        [(source, target, ()) for source, target in steps],
        start=[path_id(path[0])],
        ends=[path_id(last)] if last in TERMINAL else [],
        direction="LR",
        current=path_id(current) if current is not None else None,
        names=names,
    )
