"""The checkpoints, in people's words: seed 003's gates as the status comment, the check run
and ``/status`` show them, read from ``status_and_next`` — the same read the agent and
``python -m bot status`` get — so what a maintainer sees on GitHub cannot say something else
about a gate than what questbot acts on.

One line per checkpoint: where the quest stands at it, who decides an open one, what evidence
it has and lacks, and the seal a decision is pinned to (its digest's first twelve characters,
what ``python -m bot status`` prints in full).
"""

from __future__ import annotations

from bot.core.gates import Gate, Role, StatusAndNext
from bot.core.policy import Checkpoint
from bot.github.markdown import inline_code

WHAT: dict[Checkpoint, str] = {Checkpoint.A: "the hypothesis",
                               Checkpoint.B: "the reproduction and the plan",
                               Checkpoint.C: "the patch and its proof"}
EVIDENCE: dict[str, str] = {"hypothesis": "a checked hypothesis",
                            "reproduction": "a reproduction that fails on the base",
                            "plan": "a plan", "patch": "a pushed patch",
                            "proof": "a proof bound to the head"}


def _who(gate: Gate, shadow: bool, claimed: bool) -> str:
    if claimed:
        return "the person who claimed the review decides"
    if gate.blocking:
        return "a person decides"
    if shadow:
        return "a person decides (shadow mode: an automatic review is recorded only)"
    return "an automatic review or a person decides"


def _who_ahead(gate: Gate, shadow: bool) -> str:
    if gate.blocking:
        return "a person decides it"
    if shadow:
        return "a person decides it; an automatic review is recorded only"
    return "an automatic review or a person decides it"


def _evidence(gate: Gate) -> str:
    missing = [EVIDENCE[r] for r in gate.required if r not in gate.present]
    if missing:
        return "still missing " + " and ".join(missing)
    return "its evidence is on record"


def _seal(gate: Gate) -> str:
    if gate.seal is None:
        return ""
    if gate.seal_current:
        return f", sealed as {inline_code(gate.seal.digest[:12])}"
    return (f"; its sealed evidence ({inline_code(gate.seal.digest[:12])}) is from an "
            "earlier attempt or revision and counts only once submitted again")


def gate_line(gate: Gate, shadow: bool, claimed: bool = False) -> str:
    """``A, the hypothesis: passed, sealed as `…```: one checkpoint."""
    head = f"{gate.name.value}, {WHAT[gate.name]}"
    if gate.position == "passed":
        return f"{head}: passed{_seal(gate)}"
    if gate.position == "open":
        return f"{head}: **open**, {_who(gate, shadow, claimed)}; {_evidence(gate)}{_seal(gate)}"
    if gate.position == "parked":
        return f"{head}: open again when the quest resumes; {_evidence(gate)}{_seal(gate)}"
    if gate.position == "ended":
        if gate.seal is None:
            return f"{head}: not reached before the quest ended"
        return (f"{head}: submitted, sealed as {inline_code(gate.seal.digest[:12])}, "
                "before the quest ended")
    who = _who_ahead(gate, shadow)
    if gate.seal is not None and gate.seal_current:  # sent back (``/revise``) before a decision
        return (f"{head}: to be submitted again ({who}); last sealed as "
                f"{inline_code(gate.seal.digest[:12])}")
    return f"{head}: not reached yet ({who}){_seal(gate)}"


BULLET = "*"
"""The checkpoints' bullet: not the ``-`` of the lists that follow them in the status comment
and the check run, since a list after a blank line with the same bullet would continue this
one (CommonMark) and read as more checkpoints."""


def gates_lines(status: StatusAndNext) -> list[str]:
    """The checkpoints as Markdown list items, A to C (one item when the quest ended
    before any)."""
    if all(g.position == "ended" and g.seal is None for g in status.gates):
        return [f"{BULLET} none was reached before the quest ended"]
    claimed = status.next_action.role is Role.CLAIM_OWNER
    return [f"{BULLET} {gate_line(g, status.shadow, claimed)}" for g in status.gates]
