"""The checkpoints, in people's words: the gates as the status comment, the check run
and ``/status`` show them, read from ``status_and_next`` — the same read the agent and
``python -m bot status`` get — so what a maintainer sees on GitHub cannot say something else
about a gate than what questbot acts on.

One line per checkpoint: where the quest stands at it, who decides an open one and who decided
one behind it (from this attempt's record of decisions, ``StatusAndNext.reviews``), what
evidence it has and lacks, and whether a decision taken now counts. questbot fixes a gate's
evidence when it is submitted (its seal, ``bot.core.seals``) and a decision is taken on exactly
that version; the line says so in a sentence, not with the seal's digest, which only
``python -m bot status`` prints (an operator's tool). "Seal" and "digest" are our words, not a
maintainer's: ``tests/words/surface.py`` refuses them in anything questbot writes.
"""

from __future__ import annotations

from bot.core.attempts import AttemptRecord, DecisionRecord
from bot.core.events import Verdict
from bot.core.gates import Gate, Role, StatusAndNext
from bot.core.policy import Checkpoint
from bot.words.markdown import inline_code
from bot.words.timeline import REVIEW_ACTOR, reviewer

WHAT: dict[Checkpoint, str] = {Checkpoint.A: "the hypothesis",
                               Checkpoint.B: "the reproduction and the plan",
                               Checkpoint.C: "the patch and its proof"}
EVIDENCE: dict[str, str] = {"hypothesis": "a checked hypothesis",
                            "reproduction": "a reproduction that fails on the base",
                            "plan": "a plan", "patch": "a pushed patch",
                            "proof": "a proof bound to the head"}
EXPLAINED = "; a decision applies to it as it is now, and a change to it asks again"
"""Said once, on the gate a decision can be taken at: what fixing the evidence means."""


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


def decided_by(review: DecisionRecord) -> str:
    """Who took a decision: a login as a code span (a ping on every edit of the comment would
    notify them again), "questbot's automatic reviewer", "a review by the design reviewer"."""
    actor = review.actor
    if actor is not None and actor.startswith(REVIEW_ACTOR):
        by = reviewer(actor)
        return by if by.startswith("questbot") else f"a review by {by}"
    if actor is not None:
        return inline_code("@" + actor)
    return "the repository's settings" if review.automatic else "questbot"


def decision(gate: Gate, reviews: tuple[DecisionRecord, ...]) -> DecisionRecord | None:
    """The decision that moved the quest at ``gate`` in this attempt, the newest: one taken on
    the gate's evidence as it is fixed now, else, for a gate passed, the newest approval (its
    evidence may have been fixed again since, at a new revision). Recorded-only decisions
    moved nothing."""
    taken = [r for r in reviews if r.gate is gate.name and not r.recorded_only]
    on_seal = [r for r in taken if gate.seal is not None and r.seal == gate.seal.digest]
    if on_seal:
        return on_seal[-1]
    approved = [r for r in taken if r.verdict is Verdict.APPROVE]
    return approved[-1] if approved and gate.position == "passed" else None


def _earlier(gate: Gate) -> str:
    return ("; its evidence is from an earlier attempt or revision and counts only once "
            "submitted again")


def _evidence(gate: Gate) -> str:
    """What the gate a decision can be taken at has, lacks, and which version it is."""
    missing = [EVIDENCE[r] for r in gate.required if r not in gate.present]
    have = "still missing " + " and ".join(missing) if missing else "its evidence is ready"
    if gate.seal is None:
        return have
    if gate.seal_current:
        return f"{have}{EXPLAINED}"
    return have + _earlier(gate)


_SAID = {Verdict.APPROVE: "passed — {who} approved it",
         Verdict.REJECT: "rejected by {who}, which ended the quest",
         Verdict.REVISE: "sent back by {who}"}


def _earlier_pass(head: str, gate: Gate, log: tuple[AttemptRecord, ...]) -> str | None:
    """A gate passed in an earlier attempt of this revision and not gone through again (a
    rejection back to planning keeps the approved hypothesis): when, and who decided it."""
    seal = gate.seal
    if seal is None or gate.seal_current or gate.position != "passed":
        return None
    record = next((a for a in log if a.number == seal.attempt and a.revision == seal.revision),
                  None)
    if record is None:
        return None
    taken = decision(gate, record.reviews)
    who = f" — {decided_by(taken)} approved it" if taken is not None else ""
    return f"{head}: passed in attempt {seal.attempt}{who}, and stands"


def _behind(head: str, gate: Gate, reviews: tuple[DecisionRecord, ...],
            log: tuple[AttemptRecord, ...] = ()) -> str:
    """A gate the quest is past, or at when it ended: who decided it, on which evidence. Once
    the quest ended, nothing counts "once submitted again": the evidence is only named."""
    earlier = _earlier_pass(head, gate, log)
    if earlier is not None:
        return earlier
    ended = gate.position == "ended"
    taken = decision(gate, reviews)
    fixed = ("" if gate.seal is None or gate.seal_current or ended else _earlier(gate))
    if taken is None:
        if not ended:
            return f"{head}: passed{fixed}"
        if gate.seal is None:
            return f"{head}: not reached before the quest ended"
        return f"{head}: submitted before the quest ended{fixed}"
    said = _SAID[taken.verdict].format(who=decided_by(taken))
    if ended and taken.verdict is Verdict.REVISE:
        said += " before the quest ended"
    return f"{head}: {said}{fixed}"


def gate_line(gate: Gate, shadow: bool, claimed: bool = False,
              reviews: tuple[DecisionRecord, ...] = (),
              log: tuple[AttemptRecord, ...] = ()) -> str:
    """``A, the hypothesis: passed — `@alice` approved it``:
    one checkpoint (``reviews``: this attempt's decisions, for who decided it; ``log``: the
    attempts that ended, for a gate passed in one of them)."""
    head = f"{gate.name.value}, {WHAT[gate.name]}"
    if gate.position in ("passed", "ended"):
        return _behind(head, gate, reviews, log)
    if gate.position == "open":
        return f"{head}: **open**, {_who(gate, shadow, claimed)}; {_evidence(gate)}"
    if gate.position == "parked":
        return f"{head}: waits until the quest resumes; {_evidence(gate)}"
    who = _who_ahead(gate, shadow)
    if gate.seal is not None and gate.seal_current:  # sent back (``/revise``) before a decision
        return f"{head}: to be submitted again ({who})"
    return f"{head}: not reached yet ({who})" + (_earlier(gate) if gate.seal else "")


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
    return [f"{BULLET} {gate_line(g, status.shadow, claimed, status.reviews, status.attempt_log)}"
            for g in status.gates]
