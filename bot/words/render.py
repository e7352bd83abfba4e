"""Pure renderers for what people see of a quest on GitHub: the inbox issue, and the
sentences the status comment (``bot.words.status_comment``) and the check run
(``bot.words.check_run``) are built from.

Nothing here performs I/O; ``bot.views.projection`` decides where the text goes. Every piece
of untrusted text — a quest title from an issue, a reason typed after ``/kill``, a login —
passes through ``bot.words.markdown`` (code spans or escaped prose), so it cannot ping anyone,
open a heading or print a success mark.

Each body carries a hidden marker (``<!-- questbot:... -->``) naming the quest or effect key,
so a person — or a future listing call — can tell questbot's writes apart.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from bot.core import Quest
from bot.core.policy import Policy
from bot.core.quest import Outcome, ParkReason
from bot.core.states import CHECKPOINT_AT, State
from bot.words import spend as spend_words
from bot.words.inbox_marks import INBOX_MARKER, entry_marker, tick_command, tick_label
from bot.words.markdown import inline_code, plain
from bot.words.refusals import doing

_WORKING = {
    State.SENSED: "questbot is deciding who takes the failure.",
    State.RESEARCHING: "The agent is gathering evidence; a hypothesis comes next (checkpoint A).",
    State.REPRODUCING: "The agent is writing a failing check; a plan comes next (checkpoint B).",
    State.PATCHING: "The agent is writing a fix; proof runs on the pushed head.",
}
_PARKED = {
    ParkReason.PAUSED: "Paused by a person: `/resume` to go on, or `/kill <why>`.",
    ParkReason.ATTEMPTS_EXHAUSTED: "Proof failed on every attempt: push a fix to the quest "
    "branch, `/resume` for a fresh set of attempts, or `/kill <why>`.",
    ParkReason.CANNOT_REPRODUCE: "The failure could not be reproduced: `/resume` to try "
    "again, or `/kill <why>`.",
    ParkReason.WAITING_FOR_PARENT: "Waiting for its parent quest to land; nothing to do.",
    ParkReason.RESEARCH_COMPLETE: "Research is complete: `/quest fix` to go on and patch, or "
    "`/kill <why>`.",
    ParkReason.AGENT_FAILED: "The agent's run failed: push a fix to the quest branch, "
    "`/resume` to run the stage again, or `/kill <why>`.",
    ParkReason.AGENT_REFUSED: "The agent refused the plan: `/resume` to run the stage again, "
    "push the change yourself, or `/kill <why>`.",
    ParkReason.NEEDS_HUMAN: "questbot stopped for a person: read why below — then push the "
    "change yourself, `/revise <why>` for another plan, or `/kill <why>`; `/resume` runs the "
    "stage again once what stopped it has changed.",
    ParkReason.NO_AGENT: "No agent is set up, so nothing can research this quest. The "
    "operator of questbot's worker sets `QUESTBOT_MODEL_URL`, `QUESTBOT_MODEL_API_KEY` and "
    "`QUESTBOT_MODEL` (`QUESTBOT_MODEL_PROTOCOL`: `openai` or `anthropic`) in the worker's "
    "environment — or the repository picks its own agent with `agent: {kind: command, "
    "command: ...}` in `.github/questbot.yml` — then `/resume`.",
    ParkReason.MODEL_FAILED: "The model endpoint failed — this is no fault of the code, nor "
    "of GitHub. The operator of questbot's worker fixes the endpoint (its `QUESTBOT_MODEL_*` "
    "settings; `questbot model check` says what the endpoint can do), then `/resume` runs the "
    "stage again; or `/kill <why>`.",
    ParkReason.WORK_FAILED: "questbot could not do the work this quest waits on and stopped "
    "trying: read why below, then `/resume` to try again, or `/kill <why>`.",
    ParkReason.REPOSITORY_CHANGED: "The repository changed so that questbot cannot go on "
    "here: read below what happened and what sets it right; `/kill <why>` ends the quest.",
}
_ENDED = {
    Outcome.CLOSED: "Landed and watched clean.",
    Outcome.KILLED: "Killed by a person.",
    Outcome.REJECTED: "Rejected at a checkpoint.",
    Outcome.IGNORED: "Ignored by triage; the fingerprint is muted for a while.",
    Outcome.DUPLICATE: "A duplicate: the same failure is another quest's.",
    Outcome.FLAKY: "Flaky: the failed check passed when re-run on the same commit, so no "
    "agent was run. Nothing to do; a failure on another commit is looked at again.",
}


MEANING: dict[State, str] = {
    State.SENSED: "A failure was seen; questbot is looking at it.",
    State.TRIAGED: "questbot has decided who takes it.",
    State.RESEARCHING: "The agent is looking for the cause.",
    State.HYPOTHESISED: "The agent has an explanation of the failure. Checkpoint A: a person "
                        "checks it.",
    State.REPRODUCING: "The agent is writing a test that shows the failure.",
    State.PLANNED: "The failure is reproduced and there is a plan to fix it. Checkpoint B: a "
                   "person checks the plan.",
    State.PATCHING: "The agent is writing the fix.",
    State.PROVING: "questbot is running the checks on the fix.",
    State.READY: "The fix passed its checks. Checkpoint C: a person approves the merge.",
    State.LANDING: "questbot is merging the approved fix.",
    State.WATCHING: "Merged; questbot watches the checks in case the failure comes back.",
    State.CLOSED: "Merged and watched clean. Done.",
    State.ROLLED_BACK: "The failure came back after the merge, so questbot reverts the fix.",
    State.PARKED: "Stopped for now, with a reason; it can resume.",
    State.HANDED_OFF: "A person has claimed the review.",
    State.ABANDONED: "Ended without a fix.",
}
"""What each state means to a maintainer, for the status comment and the check run. The
design's own words (``bot.core.states.MEANING``: "waiting for the rollback receipt") stay in
the design's documents."""


def state_words(state: State) -> str:
    """A state as people read it: ``rolled back``, not ``rolled_back``."""
    return state.value.replace("_", " ")


def sha(value: str | None) -> str:
    return inline_code(value[:12]) if value else "*(none)*"


def quest_marker(quest_id: str) -> str:
    return f"<!-- questbot:status quest={quest_id} -->"


def key_marker(key: str) -> str:
    return f"<!-- questbot:key={key} -->"


def next_action(quest: Quest, policy: Policy | None = None) -> str:
    """One sentence: what happens next, and who does it (``policy``: whether an open
    checkpoint is advisory; without it, a person decides)."""
    state = quest.state
    rerun = quest.rerun
    if rerun is not None and ((rerun.result is None and state is State.SENSED)
                              or quest.outcome is Outcome.FLAKY):
        runs = f"{inline_code(rerun.first)}, re-run as {inline_code(rerun.second or '…')}"
        if rerun.result is None:
            return (f"questbot re-runs the failed check on {sha(rerun.sha)} first "
                    f"({inline_code(rerun.first)}): a pass ends the quest as flaky, with no "
                    "agent run; a second failure starts research.")
        return f"{_ENDED[Outcome.FLAKY]} Evidence: {inline_code(rerun.fingerprint)} on " \
               f"{sha(rerun.sha)}, run {runs}."
    if state in _WORKING:
        return _WORKING[state]
    checkpoint = CHECKPOINT_AT.get(state)
    if checkpoint is not None:
        what = {State.HYPOTHESISED: "the hypothesis", State.PLANNED: "the plan",
                State.READY: f"the proof of head {sha(quest.head)}"}[state]
        who = "A person reviews"
        if policy is not None and not policy.shadow and not policy.blocking(checkpoint):
            who = "questbot's automatic reviewer or a person reviews"
        return (f"{who} {what}: `/approve {checkpoint.value}`, `/revise <why>` or "
                f"`/reject <why>` (or the buttons on the `questbot` check run).")
    if state is State.TRIAGED:
        return ("Routed to a person: `/quest fix` or `/quest research` to start it, or "
                "`/kill <why>`.")
    if state is State.PROVING:
        return f"The proof bundle is being assembled for head {sha(quest.head)}."
    if state is State.LANDING:
        approved = quest.approved.head if quest.approved else quest.head
        return f"questbot merges the approved head {sha(approved)}, and nothing else."
    if state is State.WATCHING:
        return f"Landed as {sha(quest.merge_sha)}; watching the checks for regressions."
    if state is State.ROLLED_BACK:
        return (f"The failure came back: questbot reverts {sha(quest.merge_sha)}, then looks "
                "into it again on a new pull request.")
    if state is State.HANDED_OFF:
        return (f"{login(quest.owner)} holds the review and decides; `/release` hands it "
                "back.")
    if state is State.PARKED:
        said = spend_words.parked_text(quest) or _PARKED.get(
            quest.park_reason or ParkReason.PAUSED, _PARKED[ParkReason.PAUSED])
        return f"{said} Why: {plain(quest.park_note, limit=1000)}" if quest.park_note else said
    return ended_words(quest)


def ended_words(quest: Quest) -> str:
    """How an ended quest ended, in people's words (a flaky failure is no kill)."""
    return _ENDED.get(quest.outcome or Outcome.CLOSED, "Nothing: the quest has ended.")


def login(name: str | None) -> str:
    """A person's login as a code span: named, not pinged on every edit."""
    return inline_code(name) if name else "*(nobody)*"


# --- the inbox issue ---------------------------------------------------------------------

INBOX_TITLE = "questbot inbox"


@dataclass(frozen=True, slots=True)
class InboxEntry:
    quest: Quest
    where: str | None = None
    """``#12`` or a full commit SHA, which GitHub links in an issue body: where the quest
    lives (its pull request or source issue), else the commit it started from."""
    reason: str | None = None


def waits_for_person(quest: Quest, blocking: bool) -> bool:
    """At a blocking checkpoint, routed to a person, held by one, or parked for one."""
    state = quest.state
    if state in CHECKPOINT_AT:
        return blocking
    if state is State.PARKED:
        return quest.park_reason is not ParkReason.WAITING_FOR_PARENT
    return state in (State.TRIAGED, State.HANDED_OFF)


def _inbox_line(e: InboxEntry) -> str:
    """One entry: a box to tick when ticking acts (``inbox_marks``), linked to its thread."""
    q = e.quest
    where = f"{e.where} " if e.where else ""
    command = tick_command(q)
    box = f"- [ ] {entry_marker(q.id)} " if command is not None else "- "
    label = f"; {tick_label(command)}" if command is not None else ""
    said = next_action(q)
    # a claimed review's next action already says who holds it: not twice in one line
    now = "" if q.state is State.HANDED_OFF else f"{doing(q, mention=False)}{label}. "
    return f"{box}{where}{_named(q)}: {now}{said}"


def _named(q: Quest) -> str:
    """A quest as the inbox names it, beside its pull request or issue: what failed, in
    words (its id is questbot's, kept in the entry's hidden marker)."""
    return f"**{plain(q.title or 'a failure to look into', limit=200)}**"


WAITING_SHOWN = 50
"""Entries of "What waits for a person" shown in full. GitHub cuts nothing, it refuses a body
over 65,536 characters, and the forge's net (``forge.limits.fit``) would cut everything below
the list — the lessons, their boxes, the footer — so the list keeps to its share."""
WAITING_CHARACTERS = 30_000
"""The list's share of the body: fewer than ``WAITING_SHOWN`` entries when they are long (a
title, a park note and a why can each run to hundreds of characters)."""
REST_CHARACTERS = 2_000
"""The line naming the entries not shown in full, each by its pull request or issue."""


def _waiting_lines(entries: Sequence[InboxEntry]) -> list[str]:
    """The first entries by quest name in full, within both bounds; the rest by where each
    lives, so every one is a click away, and counted past ``REST_CHARACTERS``."""
    lines: list[str] = []
    used = shown = 0
    for e in entries:
        item = [_inbox_line(e), *([f"  - why: {plain(e.reason)}"] if e.reason else [])]
        size = sum(len(line) + 1 for line in item)
        if shown == WAITING_SHOWN or (shown and used + size > WAITING_CHARACTERS):
            break
        lines += item
        used, shown = used + size, shown + 1
    rest = entries[shown:]
    if not rest:
        return lines
    named: list[str] = []
    for e in rest:
        name = (e.where if e.where and e.where.startswith("#")
                else plain(e.quest.title or "a failure to look into", limit=80))
        if sum(len(n) + 2 for n in named) + len(name) > REST_CHARACTERS:
            break
        named.append(name)
    unnamed = len(rest) - len(named)
    also = f", and {unnamed} more" if unnamed else ""
    lines.append(f"- and {len(rest)} more waiting for a person, shown here in full as those "
                 f"above are handled: {', '.join(named)}{also}. Each one's pull request or issue "
                 "says what it waits for; whoever runs questbot lists them all with "
                 f"{inline_code('python -m bot status --repo ' + rest[0].quest.repo)} and "
                 "reads any one with `python -m bot status QUEST_ID`.")
    return lines


def inbox_body(entries: Sequence[InboxEntry], flaky: Sequence[InboxEntry] = (),
               limits: Sequence[str] = (), *, agreement: tuple[int, int] = (0, 0)) -> str:
    """``limits``: the section on quests waiting to start and reflection waves, rendered
    (``bot.words.inbox_limits``). ``agreement``: (agreed, compared) of questbot's automatic
    reviews with people's decisions in this repository (``bot.reviews.agreement``); shown once
    there is one."""
    lines = [INBOX_MARKER, "### What waits for a person", ""]
    if not entries:
        lines.append("Nothing waits for a person right now.")
    lines += _waiting_lines(sorted(entries, key=lambda e: e.quest.id))
    lines += limits
    if flaky:
        lines += ["", "### Flaky: passed when re-run, no agent run", ""]
        for e in flaky:  # newest first
            q = e.quest
            where = f"{e.where} " if e.where else ""
            lines.append(f"- {where}{_named(q)}: {next_action(q)}")
    agreed, compared = agreement
    if compared:
        times = "time" if compared == 1 else "times"
        lines += ["", "### Automatic reviews", "",  # not a tail of the section above
                  f"Automatic reviews agreed with people's decisions {agreed} of "
                  f"{compared} {times}. Make a checkpoint advisory once you trust them."]
    lines += ["", "questbot edits this issue as quests move. Tick a box to do what it says "
              "(people with write access); comment on a quest's pull request or issue for "
              "anything else."]
    return "\n".join(lines) + "\n"


def reply(to: str | None, message: str, key: str) -> str:
    """A reply to a person: the one deliberate mention is the person who acted."""
    mention = f"@{to} " if to and to.replace("-", "").isalnum() else ""
    return f"{key_marker(key)}\n{mention}{plain(message, limit=2000)}\n"
