"""What a refused command or button press is told, in the quest's terms.

A refusal reply answers three questions a person has when questbot says no: *which* of my
commands (quoted as typed, so one comment with several commands gets a clear answer for
each), *why* — said about this quest (what it is doing, at which head, who holds it), never
in the lifecycle table's vocabulary — and *what to do instead*: when the command opens, and
the commands the quest takes now. Those are asked of the core (``lifecycle.accepts``), so the
reply never offers what the next command would be refused for.

``refusal_words`` is pure: the same command, quest and refusal give the same text, so a
redelivered webhook queues the same reply under the same key (``bot.commands.replies``).
Its text never holds an internal identifier with an underscore (a property test holds it to
that over every command and state).
"""

from __future__ import annotations

from enum import StrEnum

from bot.core import Quest, Refusal, SignalKind, State
from bot.core.lifecycle import ANY_PERSON, accepts
from bot.core.policy import Checkpoint
from bot.core.quest import Outcome, ParkReason
from bot.core.rules.budget import waits_for_spend
from bot.core.states import CHECKPOINT_AT, TERMINAL
from bot.words.commands import SPEND, USAGE, Command, CommandName, render


class Precheck(StrEnum):
    """Refusals that come before the lifecycle is asked: who asks, and where."""

    NO_PERMISSION = "no permission"
    NO_QUEST = "no quest"
    STALE_BUTTON = "stale button"


Why = Refusal | Precheck | None
"""``None``: the lifecycle refused without a code worth telling apart (``UNDEFINED``)."""

EVENT_OF: dict[CommandName, str] = {
    CommandName.APPROVE: "checkpoint_decided", CommandName.REVISE: "checkpoint_decided",
    CommandName.REJECT: "checkpoint_decided", CommandName.CLAIM: "claimed",
    CommandName.RELEASE: "released", CommandName.PAUSE: "paused",
    CommandName.RESUME: "resumed", CommandName.KILL: "killed", CommandName.QUEST: "triaged",
}
"""The core event each command becomes (``/status`` becomes none: it is never refused)."""

_PARKED_BECAUSE: dict[ParkReason, str] = {
    ParkReason.PAUSED: "someone paused it",
    ParkReason.ATTEMPTS_EXHAUSTED: "the agent used all its attempts at a fix",
    ParkReason.CANNOT_REPRODUCE: "the agent could not reproduce the failure",
    ParkReason.WAITING_FOR_PARENT: "it waits for the quest it depends on to land",
    ParkReason.RESEARCH_COMPLETE: "its research is complete and nothing more was asked",
    ParkReason.AGENT_FAILED: "the agent failed",
    ParkReason.AGENT_REFUSED: "the agent declined the task",
    ParkReason.NEEDS_HUMAN: "the agent asked for a person",
    ParkReason.NO_AGENT: "no agent is configured",
    ParkReason.MODEL_FAILED: "the model endpoint refused questbot's requests or stopped "
    "answering",
    ParkReason.WORK_FAILED: "questbot could not do the work it needed and stopped trying",
    ParkReason.REPOSITORY_CHANGED: "its repository changed so that questbot cannot go on there",
    ParkReason.BUDGET_REACHED: "its budget is spent and a spend request waits for an answer",
    ParkReason.SPEND_DECLINED: "a person declined more spend after its budget ran out",
}

_ENDED_BECAUSE: dict[Outcome, str] = {
    Outcome.CLOSED: "its fix landed and was watched clean",
    Outcome.KILLED: "someone stopped it",
    Outcome.REJECTED: "a reviewer rejected it",
    Outcome.IGNORED: "questbot chose to leave this report alone",
    Outcome.DUPLICATE: "it duplicated another quest",
    Outcome.FLAKY: "its failed check passed when re-run",
}

_NEXT_CHECKPOINT: dict[State, tuple[Checkpoint, str]] = {
    State.SENSED: (Checkpoint.A, "when research has a hypothesis"),
    State.TRIAGED: (Checkpoint.A, "when research has a hypothesis"),
    State.RESEARCHING: (Checkpoint.A, "when the research finishes"),
    State.REPRODUCING: (Checkpoint.B, "when the reproduction and plan are written"),
    State.PATCHING: (Checkpoint.C, "when the fix is written and proved"),
    State.PROVING: (Checkpoint.C, "when it finishes"),
}
"""For a state with no open checkpoint: the one that opens next, and when."""


def short(sha: str | None) -> str:
    return f"`{sha[:7]}`" if sha else "(no commit yet)"


def doing(quest: Quest, *, mention: bool = True) -> str:
    """What the quest is doing, as a clause: "the proof of head `abc1234` is still running".
    ``mention``: name a review's owner as ``@login`` (a reply tells them); the inbox, which
    questbot rewrites often, names them without notifying."""
    s = quest.state
    if s is State.SENSED:
        return "questbot is still deciding who takes the failure"
    if s is State.TRIAGED:
        return ("the quest waits for a person to start it" if quest.awaiting_person
                else "research is about to start")
    if s is State.RESEARCHING:
        return "the agent is still researching the failure"
    if s is State.HYPOTHESISED:
        return "checkpoint A is open: the hypothesis waits for a decision"
    if s is State.REPRODUCING:
        return "the agent is writing a test that reproduces the failure"
    if s is State.PLANNED:
        return "checkpoint B is open: the reproduction and plan wait for a decision"
    if s is State.PATCHING:
        return "the agent is writing the fix"
    if s is State.PROVING:
        return f"the proof of head {short(quest.head)} is still running"
    if s is State.READY:
        return f"checkpoint C is open: the proved head {short(quest.head)} waits for a decision"
    if s is State.LANDING:
        return f"head {short(quest.head)} was approved and is being merged"
    if s is State.WATCHING:
        return (f"the fix landed as {short(quest.merge_sha)} and questbot is watching for "
                "regressions")
    if s is State.ROLLED_BACK:
        return "the fix was rolled back after a regression, and questbot waits for the revert"
    if s is State.PARKED:
        reason = _PARKED_BECAUSE.get(quest.park_reason) if quest.park_reason else None
        return f"the quest is parked because {reason or 'it was stopped'}"
    if s is State.HANDED_OFF:
        if not quest.owner:
            return "a person holds the review"
        return f"{'@' if mention else ''}{quest.owner} holds the review"
    reason = _ENDED_BECAUSE.get(quest.outcome) if quest.outcome else None
    return f"the quest has ended: {reason or 'it is finished'}"


def now_commands(quest: Quest, actor: str | None = None) -> list[str]:
    """How each command the quest takes now from ``actor`` is written, as its usage shows it;
    ``/status`` last, which always works."""
    who = actor or ANY_PERSON
    checkpoint = CHECKPOINT_AT.get(quest.checkpoint_state)
    out: list[str] = []
    for name, event in EVENT_OF.items():
        if not accepts(quest, event, who):
            continue
        if name is CommandName.APPROVE:
            if checkpoint is None or (checkpoint is Checkpoint.C and actor is not None
                                      and actor == quest.head_pusher):
                continue  # the head's pusher cannot approve it (``Refusal.PRODUCER``)
            out.append(f"/approve {checkpoint.value}")
        elif name is CommandName.QUEST:
            modes = ("fix",) if quest.state is State.PARKED else ("fix", "research")
            out.extend(f"/quest {mode}" for mode in modes)
        elif name in (CommandName.REVISE, CommandName.REJECT) and checkpoint is None:
            continue
        else:
            out.append(USAGE[name])
    if waits_for_spend(quest):  # the answers to the spend request (``rules.budget``)
        out += [f"/approve {SPEND}", f"/deny {SPEND}"]
    out.append(USAGE[CommandName.STATUS])
    return out


def _opens(command: Command, quest: Quest) -> str | None:
    """When ``command`` would be taken, if it will be without a person doing anything else."""
    name, state = command.name, quest.checkpoint_state
    if command.spend:
        return None  # a spend request comes when a budget is spent, not at a known step
    if name in (CommandName.APPROVE, CommandName.REVISE, CommandName.REJECT, CommandName.CLAIM):
        upcoming = _NEXT_CHECKPOINT.get(state)
        if upcoming is not None and quest.state is not State.PARKED:
            checkpoint, when = upcoming
            shown = f"/approve {checkpoint.value}" if name is CommandName.APPROVE else render(
                command)
            return f"`{shown}` opens {when}"
    return None


def _because(command: Command, quest: Quest, why: Why, actor: str | None,
             pressed_on: str | None) -> str:
    name = command.name
    open_cp = CHECKPOINT_AT.get(quest.checkpoint_state)
    if quest.state in TERMINAL:
        return doing(quest)  # whatever was asked: it has ended
    if why is Refusal.CLAIMED:
        return (f"@{quest.owner} holds the review; ask them, or wait until they "
                "`/release` it")
    if why is Refusal.PRODUCER:
        return (f"you pushed head {short(quest.head)}, and whoever pushed the change under "
                "review cannot approve it; ask another maintainer")
    if why is Refusal.STALE or why is Precheck.STALE_BUTTON:
        where = f"that button was on {short(pressed_on)}; " if pressed_on else ""
        return (f"{where}the decision is stale, the quest has moved on since: it is at head "
                f"{short(quest.head)} (revision {quest.revision}) now, and {doing(quest)}")
    if why is Refusal.UNBOUND_PROOF:
        return (f"the proof no longer matches head {short(quest.head)}; a new proof has to "
                "run first")
    if command.spend:
        return f"no spend is waiting for a decision: {doing(quest)}"
    if name in (CommandName.APPROVE, CommandName.REVISE, CommandName.REJECT):
        if open_cp is not None and command.checkpoint not in (None, open_cp):
            return f"checkpoint {open_cp.value} is open, not {command.checkpoint.value}"
        return doing(quest)
    if name is CommandName.RELEASE and quest.state is not State.HANDED_OFF:
        return f"nobody holds the review to release ({doing(quest)})"
    if name is CommandName.CLAIM and quest.state is State.HANDED_OFF:
        return doing(quest)
    if name is CommandName.RESUME and quest.state is not State.PARKED:
        return f"the quest is not parked, so there is nothing to resume; {doing(quest)}"
    if name is CommandName.PAUSE and quest.state is State.PARKED:
        return f"it is already parked; {doing(quest)}"
    if name is CommandName.QUEST and quest.state not in TERMINAL:
        if quest.state is State.PARKED and quest.park_reason is not ParkReason.RESEARCH_COMPLETE:
            return (f"{doing(quest)}; `/quest fix` only turns finished research into a fix")
        if command.mode == "research" and quest.state is State.PARKED:
            return "its research is complete already"
        return f"the quest is already under way; {doing(quest)}"
    return doing(quest)


def refusal_words(command: Command, quest: Quest | None, why: Why, *,
                  actor: str | None = None, on_pull: bool = False,
                  pressed_on: str | None = None, button: bool = False) -> str:
    """The whole reply to a refused ``command``: who, which command, why and what now.
    ``on_pull``: the thread is a pull request; ``pressed_on``: the commit a stale button was
    on; ``button``: it came from the check run's button of that name, not a comment."""
    label = command.name.value.capitalize() + (f" {SPEND}" if command.spend else "")
    said = (f"your press of **{label}** on the `questbot` check run"
            if button else f"`{render(command)}`")
    to = f"@{actor} " if actor else ""
    if why is Precheck.NO_PERMISSION:
        return (f"{to}{said} was not applied: it needs write access to this repository, or "
                "being one of the reviewers in `.github/questbot.yml`. Ask a maintainer to "
                "run it, or to add you as a reviewer; `/status` shows where things stand.")
    if quest is None:
        start = ("Quests live on their `quest/…` pull requests; to start one, comment "
                 "`/quest fix` or `/quest research` on the issue it is about."
                 if on_pull else
                 "Start one here with `/quest fix` (find and fix the cause) or "
                 "`/quest research` (research only).")
        return f"{to}{said} was not applied: there is no quest on this thread. {start}"
    because = _because(command, quest, why, actor, pressed_on)
    steps: list[str] = []
    opens = None if why in (Refusal.CLAIMED, Refusal.PRODUCER) else _opens(command, quest)
    if opens:
        steps.append(opens)
    now = [f"`{usage}`" for usage in now_commands(quest, actor)
           if usage != render(command)]
    if quest.state in TERMINAL:
        again = ("`/quest fix` on its issue starts a new one" if quest.kind is SignalKind.ISSUE
                 else "a new failure of the same check starts a new quest")
        steps.append(f"nothing can be decided on it any more; {again}, and `/status` shows "
                     "what it did")
    else:
        steps.append("what you can do now: " + ", ".join(now))
    after = "; ".join(steps)
    return f"{to}{said} was not applied: {because}. {after[0].upper()}{after[1:]}."
