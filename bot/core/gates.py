"""Seed 003's ``status_and_next``: a quest's state, its gates with the evidence each needs and
has, what each role may do now, and the next action — the one read an agent makes first and
after every transition, and what ``/status``, the status comment and the CLI show.

Gates are checkpoints A, B and C (``docs/decisions.md``, "Seed 003 on quests"), each needing
its evidence on the quest's record before a decision can pass it:

* **A** — a validated hypothesis (the research run's claims checked against the checkout);
* **B** — a reproduction that fails on the base, and a plan;
* **C** — the patch (a head) and a proof bound to the current revision, head and base.

What a role may do is what the lifecycle accepts from it now — ``accepts`` and
``reserved_for`` over the table, never a second copy of the rules — so this read cannot drift
from what ``step`` does. The words are plain sentences without Markdown or identifiers, so an
agent, the CLI and GitHub can all show them.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict

from bot.core.attempts import AttemptRecord, DecisionRecord
from bot.core.events.signals import Route
from bot.core.lifecycle import ANY_PERSON, accepts, reserved_for
from bot.core.limits import HOLD_WORDS
from bot.core.policy import Checkpoint, Policy
from bot.core.quest import ParkReason, Quest
from bot.core.seals import Seal
from bot.core.states import CHECKPOINT_AT, MAIN_LINE, MEANING, TERMINAL, State
from bot.core.table import RECEIPTS, RECORDED, TABLE


class Role(StrEnum):
    MAINTAINER = "maintainer"
    """A person with write access (or a configured reviewer) who holds no claim."""
    CLAIM_OWNER = "claim_owner"
    """The person holding a claimed review."""
    REVIEWER = "reviewer"
    """Whoever decides a gate: a person at a blocking checkpoint, a review at an advisory one."""
    QUESTBOT = "questbot"
    """questbot and its runners: triage, the agent, the proof, landing, the watch."""


ROLE_WORDS = {Role.MAINTAINER: "a maintainer", Role.CLAIM_OWNER: "the claim's owner",
              Role.REVIEWER: "a reviewer", Role.QUESTBOT: "questbot"}

PERSON_EVENTS: tuple[str, ...] = ("checkpoint_decided", "claimed", "released", "paused",
                                  "resumed", "killed", "triaged", "human_revision")
"""What people do to a quest, in the order they are offered."""

GATE_STATE: dict[Checkpoint, State] = {c: s for s, c in CHECKPOINT_AT.items()}
REQUIRED: dict[Checkpoint, tuple[str, ...]] = {
    Checkpoint.A: ("hypothesis",),
    Checkpoint.B: ("reproduction", "plan"),
    Checkpoint.C: ("patch", "proof"),
}

ACTION_WORDS: dict[str, str] = {
    "checkpoint_decided": "decide checkpoint {gate}: approve, revise or reject",
    "claimed": "claim the review of checkpoint {gate}",
    "released": "release the claimed review",
    "paused": "pause the quest",
    "resumed": "resume the quest where it stopped",
    "killed": "kill the quest",
    "triaged": "start the work, as a fix or as research",
    "human_revision": "push a commit to the quest's branch",
    "research_started": "start research",
    "held": "hold the quest until a slot frees or a reflection passes",
    "hypothesis_written": "write the hypothesis and check its claims",
    "agent_halted": "stop the agent and hand the quest to a person",
    "reproduced": "record a reproduction that fails on the base",
    "reproduction_failed": "give up reproducing the failure",
    "plan_written": "write the plan",
    "patch_pushed": "push the patch",
    "proof_completed": "finish the proof of the head",
    "proof_failed": "report the proof failed",
    "base_moved": "follow the base branch",
    "landed": "merge the approved head",
    "watch_clean": "close the quest after a clean watch",
    "regression_detected": "report a regression after landing",
    "rollback_confirmed": "confirm the revert and research again",
    "reopened": "reopen the quest on a new failure",
    "rerun_requested": "re-run the failed check on the same commit",
    "rerun_reported": "read the re-run's result",
    "parent_landed": "go on after the parent quest landed",
}

WORK: dict[State, str] = {
    State.SENSED: "questbot re-runs the failed check and routes the quest",
    State.TRIAGED: "questbot starts research",
    State.RESEARCHING: "the agent researches and writes a hypothesis whose claims are checked",
    State.REPRODUCING: "the agent writes a reproduction that fails on the base, and a plan",
    State.PATCHING: "the agent writes the patch and questbot pushes it",
    State.PROVING: "questbot runs the proof of the head in the sandbox",
    State.LANDING: "questbot merges the approved head, and nothing else",
    State.WATCHING: "questbot watches the checks on the default branch for regressions",
    State.ROLLED_BACK: "questbot reverts the merge, then research starts again",
}

PARKED_WORDS: dict[ParkReason, str] = {
    ParkReason.NO_AGENT: "set up an agent (a model) for questbot, then resume the quest",
    ParkReason.MODEL_FAILED: "fix the model endpoint questbot uses, then resume the quest",
    ParkReason.WORK_FAILED: "read what could not be done, then resume the quest or kill it",
    ParkReason.REPOSITORY_CHANGED: "read what happened to the repository and set it right; "
    "the quest then resumes",
    ParkReason.AGENT_FAILED: "read why the agent failed, then resume, push a fix or kill",
    ParkReason.AGENT_REFUSED: "read why the agent refused, then resume, push a fix or kill",
    ParkReason.NEEDS_HUMAN: "read what the agent asks, then resume, push a fix or kill",
    ParkReason.ATTEMPTS_EXHAUSTED: "read the failed proofs, then push a fix, resume or kill",
    ParkReason.CANNOT_REPRODUCE: "add a reproduction by hand or kill the quest",
    ParkReason.WAITING_FOR_PARENT: "nothing: the quest goes on when its parent lands",
    ParkReason.RESEARCH_COMPLETE: "start the fix, or kill the quest",
    ParkReason.PAUSED: "resume the quest when it should go on",
    ParkReason.BUDGET_REACHED: "approve the spend to run the next stage, deny it, or kill",
    ParkReason.SPEND_DECLINED: "resume the quest to ask for the spend again, or kill it",
}


class Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Gate(Model):
    name: Checkpoint
    state: State
    """The state at which this gate is open."""
    required: tuple[str, ...]
    present: tuple[str, ...]
    satisfied: bool
    """Every required piece of evidence is on record."""
    position: str
    """``passed``, ``open``, ``parked`` (open again on resume), ``ahead`` (not reached in this
    revision) or ``ended``."""
    blocking: bool
    """Waits for a person; otherwise advisory (an automatic decision may pass it)."""
    seal: Seal | None = None
    """The artifact set last submitted to this gate, with its digests (``bot.core.seals``)."""
    seal_current: bool = False
    """The seal is this revision's and this attempt's, and (at C) its proof still bound:
    what a decision at this gate is pinned to."""


class Action(Model):
    event: str
    says: str


class NextAction(Model):
    role: Role | None
    """Who acts next; ``None`` when the quest has ended."""
    says: str


class StatusAndNext(Model):
    quest_id: str
    state: State
    meaning: str
    revision: int
    attempts: int
    gates: tuple[Gate, ...]
    allowed_actions: dict[Role, tuple[Action, ...]]
    next_action: NextAction
    shadow: bool
    attempt_number: int = 1
    """The attempt under way; ``attempts`` counts its proof attempts."""
    reviews: tuple[DecisionRecord, ...] = ()
    """The decisions taken during this attempt."""
    attempt_log: tuple[AttemptRecord, ...] = ()
    """The attempts that ended, oldest first, with their evidence and reviews."""
    park_note: str | None = None
    """Why a parked quest parked, in people's words, when it says more than its reason: for
    a repository deleted under it, the only place left that says so (its pull request and
    the inbox went with the repository)."""

    def as_json(self) -> dict[str, Any]:
        return self.model_dump(mode="json")

    def text(self, middle: Sequence[str] = ()) -> str:
        """The read in plain lines: for the CLI, and for an agent at the start of each stage
        (``AgentTask.status``) — the same words, so what an operator sees is what the agent
        was told. ``middle``: lines a caller adds before the next action (the CLI's reviews
        and earlier attempts, in people's words)."""
        lines = [f"quest {self.quest_id}: {self.state.value} — {self.meaning}",
                 f"revision {self.revision}, attempt {self.attempt_number} "
                 f"(proof attempts {self.attempts})"
                 + (", shadow mode: automatic decisions are recorded only" if self.shadow
                    else ""), "", "gates:"]
        for gate in self.gates:
            missing = [r for r in gate.required if r not in gate.present]
            have = "all evidence present" if gate.satisfied else f"missing {', '.join(missing)}"
            mode = "blocking" if gate.blocking else "advisory"
            lines.append(f"  {gate.name.value} ({mode}, at {gate.state.value}): "
                         f"{gate.position}; needs {', '.join(gate.required)}; {have}")
            seal = gate.seal
            if seal is not None:
                now = "current" if gate.seal_current else "not current"
                digests = ", ".join(f"{k} {v[:12]}" for k, v in seal.artifacts.items())
                lines.append(f"     sealed {seal.digest} ({now}; attempt {seal.attempt}, "
                             f"revision {seal.revision}): {digests}")
        lines += ["", "allowed now:"]
        for role, actions in self.allowed_actions.items():
            said = "; ".join(a.says for a in actions) if actions else "nothing"
            lines.append(f"  {ROLE_WORDS[role]}: {said}")
        lines += middle
        if self.park_note:
            lines += ["", f"why it is parked: {self.park_note}"]
        who = ROLE_WORDS[self.next_action.role] if self.next_action.role else "nobody"
        lines += ["", f"next: {who} — {self.next_action.says}"]
        return "\n".join(lines)


def present_evidence(quest: Quest) -> frozenset[str]:
    have = {"hypothesis": quest.hypothesis, "reproduction": quest.reproduction,
            "plan": quest.plan, "patch": quest.head}
    found = {name for name, value in have.items() if value}
    if quest.proof_bound:
        found.add("proof")
    return frozenset(found)


def _place(quest: Quest) -> State:
    """Where on the main line the quest stands: through a claim, its checkpoint; parked, the
    state it resumes to."""
    state = quest.checkpoint_state
    if state is State.PARKED and quest.resume_state is not None:
        return quest.resume_state
    return state


def _position(quest: Quest, gate_state: State) -> str:
    place = _place(quest)
    if place in MAIN_LINE:
        at, gate = MAIN_LINE.index(place), MAIN_LINE.index(gate_state)
        if at == gate:
            if quest.state is State.PARKED:
                return "parked"  # it opens again when the quest is resumed
            return "open" if quest.state not in TERMINAL else "ended"
        if at > gate:
            return "passed"
    return "ended" if quest.state in TERMINAL else "ahead"


def gates(quest: Quest, policy: Policy) -> tuple[Gate, ...]:
    have = present_evidence(quest)
    out = []
    for checkpoint, state in GATE_STATE.items():
        required = REQUIRED[checkpoint]
        present = tuple(r for r in required if r in have)
        satisfied = present == required
        seal = quest.seal(checkpoint)
        current = (seal is not None and seal.revision == quest.revision
                   and seal.attempt == quest.attempt_number
                   and (checkpoint is not Checkpoint.C or quest.proof_bound))
        out.append(Gate(name=checkpoint, state=state, required=required, present=present,
                        satisfied=satisfied, position=_position(quest, state),
                        blocking=policy.blocking(checkpoint), seal=seal,
                        seal_current=current))
    return tuple(out)


def _says(event: str, quest: Quest) -> str:
    gate = CHECKPOINT_AT.get(quest.checkpoint_state)
    return ACTION_WORDS.get(event, event.replace("_", " ")).format(
        gate=gate.value if gate else "")


def allowed_actions(quest: Quest) -> dict[Role, tuple[Action, ...]]:
    """What each role may do now, as the lifecycle accepts it."""
    def action(event: str) -> Action:
        return Action(event=event, says=_says(event, quest))

    maintainer = [action(e) for e in PERSON_EVENTS
                  if reserved_for(quest, e) is None and accepts(quest, e, ANY_PERSON)]
    owner: list[Action] = []
    if quest.state is State.HANDED_OFF and quest.owner:
        owner = [action(e) for e in PERSON_EVENTS if accepts(quest, e, quest.owner)]
    reviewer = [a for a in (owner or maintainer) if a.event == "checkpoint_decided"]
    bookkeeping = {*RECORDED, *RECEIPTS, *PERSON_EVENTS}
    machine = [action(e) for e in TABLE[quest.state]
               if e not in bookkeeping and accepts(quest, e, None)]
    return {Role.MAINTAINER: tuple(maintainer), Role.CLAIM_OWNER: tuple(owner),
            Role.REVIEWER: tuple(reviewer), Role.QUESTBOT: tuple(machine)}


def next_action(quest: Quest, policy: Policy) -> NextAction:
    state = quest.state
    if state in TERMINAL:
        return NextAction(role=None, says="nothing: the quest has ended")
    if state is State.HANDED_OFF:
        return NextAction(role=Role.CLAIM_OWNER,
                          says=f"{quest.owner or 'the claim owner'} decides checkpoint "
                               f"{CHECKPOINT_AT[quest.checkpoint_state].value}, or releases "
                               "the claim")
    checkpoint = CHECKPOINT_AT.get(state)
    if checkpoint is not None:
        how = ("a person decides" if policy.blocking(checkpoint) or policy.shadow
               else "a reviewer decides (advisory: an automatic review may pass it)")
        return NextAction(role=Role.REVIEWER,
                          says=f"{how} checkpoint {checkpoint.value}: approve, revise or reject")
    if state is State.PARKED:
        reason = quest.park_reason or ParkReason.PAUSED
        return NextAction(role=Role.MAINTAINER, says=PARKED_WORDS[reason])
    if state is State.SENSED and quest.held is not None:
        return NextAction(role=Role.QUESTBOT, says=f"the quest {HOLD_WORDS[quest.held]}")
    if state is State.TRIAGED and quest.route is Route.HUMAN:
        return NextAction(role=Role.MAINTAINER, says="a person starts the work or kills it")
    return NextAction(role=Role.QUESTBOT, says=WORK.get(state, MEANING[state]))


def status_and_next(quest: Quest, policy: Policy) -> StatusAndNext:
    """The quest's state, gates, allowed actions by role and next action, under ``policy``."""
    return StatusAndNext(
        quest_id=quest.id, state=quest.state, meaning=MEANING[quest.state],
        revision=quest.revision, attempts=quest.attempts, gates=gates(quest, policy),
        allowed_actions=allowed_actions(quest), next_action=next_action(quest, policy),
        shadow=policy.shadow, attempt_number=quest.attempt_number,
        reviews=quest.attempt_reviews, attempt_log=quest.attempt_log,
        park_note=quest.park_note if quest.state is State.PARKED else None)
