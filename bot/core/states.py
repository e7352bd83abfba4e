"""The sixteen quest states and the groups the lifecycle rules talk about."""

from __future__ import annotations

from bot.core.names import Name
from bot.core.policy import Checkpoint


class State(Name):
    SENSED = "sensed"
    TRIAGED = "triaged"
    RESEARCHING = "researching"
    HYPOTHESISED = "hypothesised"
    REPRODUCING = "reproducing"
    PLANNED = "planned"
    PATCHING = "patching"
    PROVING = "proving"
    READY = "ready"
    LANDING = "landing"
    WATCHING = "watching"
    CLOSED = "closed"
    ROLLED_BACK = "rolled_back"
    PARKED = "parked"
    HANDED_OFF = "handed_off"
    ABANDONED = "abandoned"


MAIN_LINE: tuple[State, ...] = (
    State.SENSED,
    State.TRIAGED,
    State.RESEARCHING,
    State.HYPOTHESISED,
    State.REPRODUCING,
    State.PLANNED,
    State.PATCHING,
    State.PROVING,
    State.READY,
    State.LANDING,
    State.WATCHING,
    State.CLOSED,
)

TERMINAL: frozenset[State] = frozenset({State.CLOSED, State.ABANDONED})
LIVE: frozenset[State] = frozenset(State) - TERMINAL
"""Non-terminal: what counts against the live-quest cap and what `kill` reaches."""
ACTIVE: frozenset[State] = LIVE - {State.PARKED}
"""What `pause` reaches: every live state that is not already parked."""

CHECKPOINT_AT: dict[State, Checkpoint] = {
    State.HYPOTHESISED: Checkpoint.A,
    State.PLANNED: Checkpoint.B,
    State.READY: Checkpoint.C,
}
CHECKPOINT_STATES: frozenset[State] = frozenset(CHECKPOINT_AT)

AGENT_STATES: frozenset[State] = frozenset(
    {State.RESEARCHING, State.REPRODUCING, State.PATCHING}
)
"""States in which an agent step runs; leaving them early asks for `stop_agent`."""

PROOF_BOUND_STATES: frozenset[State] = frozenset({State.PROVING, State.READY, State.LANDING})
"""States whose proof or approval a base change or a human revision invalidates."""

MEANING: dict[State, str] = {
    State.SENSED: "A signal arrived.",
    State.TRIAGED: "A route was chosen.",
    State.RESEARCHING: "Evidence is being gathered.",
    State.HYPOTHESISED: "A hypothesis is written. Checkpoint A.",
    State.REPRODUCING: "A failing check is being written.",
    State.PLANNED: "The failure is reproduced and a plan exists. Checkpoint B.",
    State.PATCHING: "A fix is being written.",
    State.PROVING: "The proof bundle is being assembled.",
    State.READY: "Proof is complete. Checkpoint C.",
    State.LANDING: "The reviewed commit is being written.",
    State.WATCHING: "Deployed and under observation.",
    State.CLOSED: "Watched clean. Terminal.",
    State.ROLLED_BACK: "A regression was seen; waiting for the rollback receipt.",
    State.PARKED: "Stopped, with a reason. Resumable.",
    State.HANDED_OFF: "A person holds the review.",
    State.ABANDONED: "Killed or rejected. Terminal.",
}
"""Seed 000's words for each state, shown in docs and in the status comment."""
