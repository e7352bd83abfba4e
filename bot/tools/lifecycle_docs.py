"""Generate ``docs/lifecycle.md`` from the core's table, so the docs cannot drift from the code
(``scripts/gen_lifecycle_docs.py`` writes it; a test checks the file is current)."""

from __future__ import annotations

from bot.core.diagram import lifecycle_mermaid
from bot.core.events import EVENT_TYPES
from bot.core.states import CHECKPOINT_AT, MEANING, TERMINAL, State
from bot.core.table import NO_QUEST, TABLE, Row, ordered

INTERPRETATIONS = """\
## Interpretations

Where the lifecycle's design leaves a point open, the core settles it as the design says
(`docs/decisions.md`), and as follows. Each is enforced in `bot/core/rules/` and tested in
`tests/core/`.

1. **Events are journaled only when applied.** A refused event (an undefined move, a stale or
   unauthorised decision) raises `InvalidTransition` with the state, the event and the reason;
   the quest is unchanged and the worker replies to the person instead of journaling it.
2. **Triage** moves the quest `sensed` → `triaged` with the route it chose, as the seed's main
   line goes. For `auto_fix` and `research_only` research starts at once, on
   `research_started`: questbot's own follow-up of that `triaged` (id `<triage id>/research`,
   the same time), which the journal applies and records in the same atomic write, so a
   stored quest never waits in `triaged` for the agent. `fold` applies it itself when a
   journal does not hold it (journals written before it existed, or by hand). The **human
   route** leaves the quest in `triaged`, marked `awaiting_person`, and asks for
   `notify_inbox`; it does not start by itself. A person starts it with `/quest fix` or
   `/quest research` (a `triaged` event with an actor) or kills it.
3. **Duplicate** ends the new quest at once as `abandoned` with outcome `duplicate` and asks for
   `merge_signal` into the existing quest, which records it as `signal_attached`. No live quest
   is created, and it never counts against the live-quest cap.
4. **Conflict** parks the child (`waiting_for_parent`) and asks for `deliver_child_evidence`, so
   the parent records the child (`child_evidence`). When the parent lands it asks for one
   `resume_dependents` per child, which arrives at the child as `parent_landed` and starts its
   research. A child registered after its parent landed is resumed at once.
5. **Revise** at A returns to `researching`; at B to `reproducing` (the reproduction stands; the
   agent is asked for a new plan, `stage: plan`); at C to `patching`.
6. **Advisory and shadow.** An automatic decision (`automatic: true`) advances an advisory
   checkpoint; at a blocking checkpoint, or in shadow mode, it is recorded and the quest stays.
   People's decisions act as usual in every mode.
7. **A C approval is a snapshot** (revision, head, base, proof digest) and counts only while the
   quest still shows it; `land` carries that snapshot and its head. New proof, a base change and
   a human revision change the snapshot; a new signal during proof clears the approval. A
   decision event may carry the snapshot its author saw; a mismatch is refused as stale.
8. **Producer is not reviewer.** The account that pushed the head under review cannot approve it
   at C.
9. **Claims.** `/claim` works only at a checkpoint and moves the quest to `handed_off`. While held,
   decisions and workflow actions (`checkpoint_decided`, `claimed`, `released`, `paused`,
   `resumed`, `killed`, `triaged`) from anyone but the owner are refused; comments, signals,
   usage and proof events still apply. The owner's decision ends the claim and applies. A human
   revision during a claim re-runs the proof with the review still held; if proof then succeeds
   the review stays held at C; if it fails, or the base moves, the owner is cleared first.
10. **Base moved** in `proving`, `ready` or `landing` goes to `patching` and asks for `rebase`
    (the seed names `landing`; a proof or an approval on the old base is just as stale in the
    other two). The push of the rebased head proves the same change again: it is no new proof
    attempt. A parked quest whose proved work the base left behind resumes by rebasing.
    Elsewhere the new base is recorded.
11. **Human revision** that changes the head increments the revision. In `researching` and
    `reproducing` it restarts the stage on the person's head (`stop_agent`, then `start_agent`
    with `pushed`; the running agent also stops itself once the revision changes). In
    `patching`, `proving`, `ready`, `landing` (and a claim held over them) it asks for
    `run_proof` (and `stop_agent` when the agent was patching), and ends a pending rebase. At
    the other states before a patch exists it is recorded. A parked quest resumes into
    `proving` to prove the person's head.
12. **Proof** completes only with a recorded patch head and a bundle whose quest id, revision,
    risk, base and head match the quest, sent with the canonical digest of the bundle:
    SHA-256 over `json.dumps(bundle, sort_keys=True, separators=(",", ":"),
    ensure_ascii=False)` encoded as UTF-8 (`bot/core/canonical.py`). A bundle that records a
    failing check or an unconfirmed reproduction is refused: a failed verification is never
    accepted as proof. `proof_failed` for a head the quest has moved past is refused as stale.
13. **Attempts** count patches pushed, a rebase's push aside (10). With attempts left a failed
    proof returns to `patching`
    with the failing output (`repair`); when they are spent the quest parks
    (`attempts_exhausted`), and `/resume` gives it a fresh set.
14. **Pause and resume.** Any live state but `parked` pauses to `parked` (`stop_agent` if an agent
    was running); `/resume` returns to the state it was in and asks again for that state's work.
    Resuming into `landing` whose approval no longer counts goes to `ready` instead. A finished
    research-only quest (approved at A) does not resume: `/quest fix` turns it into a fix.
15. **Terminal states** absorb every event except `usage_recorded` (still summed) and, for
    `closed`, `reopened`: a regression signal with the quest's fingerprint keeps its id, raises
    its severity to at least its floor, attaches the signal, increments the revision and starts
    research again. `rollback_confirmed` likewise starts research at revision + 1. An effect
    that could not be delivered after the quest ended (`effect_failed`) is absorbed like any
    other event: journaled, so it is on the quest's timeline, and its failure is listed in the
    status comment, but the quest and its counts stay as they were and nothing is asked for.
16. **Redelivery and policy.** `fold` absorbs an event whose id it has already applied, and
    replays each event under the policy the journal recorded with it (`policies`), so a
    replay after the repository's settings changed makes the same decisions; an event
    recorded without one (journals written before policies were recorded) replays under the
    policy given.
17. **Status comment and check run** are a projection of the quest after each applied event,
    kept by the GitHub adapter, not effects of the core: the seed's effect list stays exact.
18. **Budgets** (`request_spend`, `start_respondent_run`). Each quest may spend the policy's
    budget (`budget: {usd, tokens}` in `.github/questbot.yml`) on its model, summed from its
    `usage_recorded` receipts; each approved spend pays for as much again. A move that would
    start an agent stage with that allowance spent parks the quest instead (`budget_reached`,
    the stage it held back kept) and asks for `request_spend` in the start's place — so a
    stage that started runs to its end, and without an approval the spend passes the budget
    by at most one stage's. `spend_decided` answers it: approved, the quest returns to the
    stage and `start_respondent_run` runs it; declined, it stays parked (`spend_declined`),
    and `/resume` asks again. `/resume` does not skip an open request.
19. **Work questbot gave up on** (`effect_failed`, issue 25). In the states only questbot's
    own work moves on — `sensed` (triage), `researching`, `reproducing` and `patching` (the
    agent, or a rebase), `proving` (the proof), `landing` (the merge), `watching` (the watch)
    and `rolled_back` (the revert) — the failure for good of that work at the quest's
    revision parks the quest (`work_failed`, with what could not be done and why) and tells
    the inbox; `/resume` asks for the work again. Any other failure is only counted: the quest
    still has what moves it. So no quest sits in a working state with nothing running.
20. **The repository changed under it** (`paused` with `repository`, issue 26). Archived,
    removed from the App, the App suspended or uninstalled, the quest's branch deleted:
    questbot pauses the quest itself — from any active state, whoever holds its review — and
    it parks `repository_changed` with a note saying what happened and what sets it right,
    and tells the inbox. The change undone (unarchived, added again, unsuspended) resumes it;
    so does `/resume`.
"""


def state_table() -> str:
    rows = ["| state | meaning | checkpoint | terminal |", "|---|---|---|---|"]
    for s in State:
        cp = CHECKPOINT_AT.get(s)
        rows.append(f"| `{s.value}` | {MEANING[s]} | {cp.value if cp else ''} | "
                    f"{'yes' if s in TERMINAL else ''} |")
    return "\n".join(rows)


_EVENT_ORDER = {event: index for index, event in enumerate(EVENT_TYPES)}


def _cells(source: State | None, row: Row) -> tuple[str, str]:
    """A row's moves (``event`` → targets, "or stays" when the event may also keep the state)
    and the events that never move it, both in the order of the event vocabulary."""
    moves: list[str] = []
    stays: list[str] = []
    for event in sorted(row, key=_EVENT_ORDER.__getitem__):
        targets = row[event]
        elsewhere = [t.value for t in ordered(targets) if t is not source]
        if not elsewhere:
            stays.append(f"`{event}`")
            continue
        keeps = ", or stays" if source in targets else ""
        moves.append(f"`{event}` → {', '.join(elsewhere)}{keeps}")
    return "; ".join(moves), ", ".join(stays)


def transition_table() -> str:
    rows = ["| from | moves | keeps the state |", "|---|---|---|"]
    sources: list[tuple[State | None, Row]] = [(None, NO_QUEST), *TABLE.items()]
    for source, row in sources:
        label = "(no quest)" if source is None else f"`{source.value}`"
        moves, stays = _cells(source, row)
        rows.append(f"| {label} | {moves} | {stays} |")
    return "\n".join(rows)


def render() -> str:
    return "\n".join([
        "# The quest lifecycle",
        "",
        "<!-- Generated by scripts/gen_lifecycle_docs.py from bot/core/table.py; do not edit."
        " tests/tools/test_docs_and_cli.py fails when this file is out of date. -->",
        "",
        "Seed 000's sixteen states as `bot/core` implements them: `step(quest, event, policy)`",
        "reads the row of the quest's state in `bot/core/table.py` (whose theory of operation",
        "explains the rules that do not fit a cell), and the event's handler in `bot/core/rules/`",
        "picks among the moves listed here. Anything not listed is refused with",
        "`InvalidTransition`; terminal states absorb instead (see Interpretations).",
        "",
        "## States",
        "",
        state_table(),
        "",
        "## Transitions",
        "",
        "One row per state, as the table holds it. An event in neither column is refused in",
        "that state, or absorbed by a terminal one.",
        "",
        transition_table(),
        "",
        "## Diagram",
        "",
        "```mermaid",
        lifecycle_mermaid(),
        "```",
        "",
        INTERPRETATIONS,
    ])
