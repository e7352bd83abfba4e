"""The ``questbot`` check run on a quest's head: status, conclusion, title, summary and
details for each state. Pure, like ``bot.words.render``, whose sentences it shows;
``bot.views.projection`` writes what ``check_run`` returns.

Success is said in one place only: a ``closed`` quest's check run, which the core reaches only
after a bound proof, an approval and a clean watch — and only when the evidence it carries is
verified. Proof that failed or is not bound to the current head renders as exactly that.

GitHub's check-run vocabulary lives here (the agent run's outcomes are mapped to the forge's
vocabulary in the forge's adapter). The quest's state picks the conclusion; where an agent
run's provider-neutral outcome (``bot.agent.outcome``) speaks — a closed quest whose evidence
is not verified — ``CONCLUSION_BY_OUTCOME`` translates it. GitHub has no conclusion for two of
those outcomes, so both show as ``neutral`` and the summary says so in words:

* ``refused`` — the plan was not authorised. ``failure`` would blame the change, ``skipped``
  would hide that a decision was made; ``neutral`` plus a sentence is the honest rendering.
* ``unverified`` — the run finished but proved nothing. ``success`` would lie, ``failure``
  would claim a check failed when perhaps none ran.

Quest states GitHub cannot express (parked, rejected, flaky, superseded) are rendered the same
way. A quest that has ended asks nobody for anything: a landed quest whose latest run stopped for
a person's decision concludes ``neutral`` (``ENDED_CONCLUSION``), and its evidence is rendered
``ended`` (``bot.words.evidence``). The details (``check_text``) are the full text the status
comment points to when it cuts.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from types import MappingProxyType
from typing import Any

from bot.agent.evidence import EvidenceBundle
from bot.agent.outcome import RunOutcome, outcome_of
from bot.agent.result import TaskResult
from bot.core import Quest
from bot.core.gates import status_and_next
from bot.core.policy import Policy
from bot.core.quest import Outcome, ParkReason
from bot.core.rules.budget import waits_for_spend
from bot.core.states import CHECKPOINT_AT, TERMINAL, State
from bot.words import spend as spend_words
from bot.words.evidence import render_markdown, render_outputs
from bot.words.gates import gates_lines
from bot.words.github_limits import OUTPUT_LIMIT, fit
from bot.words.markdown import hide_paths, plain
from bot.words.render import MEANING, ended_words, next_action, sha, state_words

ACTIONS: tuple[dict[str, str], ...] = (
    {"label": "Approve", "identifier": "approve", "description": "Approve this checkpoint"},
    {"label": "Revise", "identifier": "revise", "description": "Send it back to be redone"},
    {"label": "Reject", "identifier": "reject", "description": "Reject and abandon the quest"},
)
"""The check run's buttons at a checkpoint (GitHub: ≤ 3, label ≤ 20, description ≤ 40)."""

_HALTED_OUTCOME = {
    ParkReason.AGENT_FAILED: RunOutcome.FAILURE,
    ParkReason.AGENT_REFUSED: RunOutcome.REFUSED,
    ParkReason.NEEDS_HUMAN: RunOutcome.ACTION_REQUIRED,
    ParkReason.NO_AGENT: RunOutcome.ACTION_REQUIRED,
    ParkReason.MODEL_FAILED: RunOutcome.ACTION_REQUIRED,
    ParkReason.WORK_FAILED: RunOutcome.ACTION_REQUIRED,
    ParkReason.REPOSITORY_CHANGED: RunOutcome.ACTION_REQUIRED,
}
"""A quest the agent halted shows the run's outcome on its check run (``agent_halted``)."""
def _proof_line(quest: Quest) -> str:
    if quest.proof is None:
        return "- proof: none yet for this revision"
    if not quest.proof_bound:
        return ("- proof: **ran on an older version of the fix or of its base**, so it does "
                "not count")
    return f"- proof: ran on the fix as it is now, {sha(quest.proof.head)}; what it ran is below"




AT_A_STEP = ("This is a normal step, not a failure: GitHub calls it \"action required\", "
             "which shows the buttons below and keeps the pull request from counting as "
             "passed until someone decides.")
"""Said at a checkpoint, where GitHub's red-looking ``action_required`` is the one conclusion
that both shows the buttons (they show only on a completed run) and does not pass a required
check; ``neutral`` would let a pull request merge past a checkpoint (``docs/decisions.md``)."""


class CheckConclusion(StrEnum):
    """GitHub's check-run conclusions, as the REST API spells them."""

    SUCCESS = "success"
    FAILURE = "failure"
    NEUTRAL = "neutral"
    CANCELLED = "cancelled"
    TIMED_OUT = "timed_out"
    ACTION_REQUIRED = "action_required"
    SKIPPED = "skipped"


CONCLUSION_BY_OUTCOME = MappingProxyType(
    {
        RunOutcome.SUCCESS: CheckConclusion.SUCCESS,
        RunOutcome.FAILURE: CheckConclusion.FAILURE,
        RunOutcome.ACTION_REQUIRED: CheckConclusion.ACTION_REQUIRED,
        RunOutcome.REFUSED: CheckConclusion.NEUTRAL,
        RunOutcome.UNVERIFIED: CheckConclusion.NEUTRAL,
    }
)
"""An agent run's outcome as a check-run conclusion. ``timed_out`` is not used: a timeout
ends the run ``failed`` with its reason."""


ENDED_CONCLUSION = MappingProxyType(
    {**CONCLUSION_BY_OUTCOME, RunOutcome.ACTION_REQUIRED: CheckConclusion.NEUTRAL})
"""A run's outcome as the conclusion of a quest that has ended: ``action_required`` would ask
people for something on a quest that is over."""


def _run_summary(result: TaskResult) -> str:
    """One sentence on the latest agent run of a quest that has ended, saying what GitHub
    cannot express (and, for a run that stopped for a decision, not its reason: written while
    it waited, it would say the quest still waits)."""
    outcome = outcome_of(result)
    why = plain(result.reason or "no reason was given")
    if outcome is RunOutcome.SUCCESS:
        count = len(result.checks)
        plural = "s" if count != 1 else ""
        return f"verified: the change was applied and all {count} check{plural} passed."
    if outcome is RunOutcome.FAILURE:
        return f"failed: {why}."
    if outcome is RunOutcome.ACTION_REQUIRED:
        return ("stopped for a person's decision before it completed, and the quest has "
                "ended since. GitHub has no conclusion for that, so this shows as neutral.")
    if outcome is RunOutcome.REFUSED:
        return (
            f"refused: the plan was not authorised ({why}). GitHub has no conclusion for "
            "refusal, so this shows as neutral."
        )
    gaps = plain("; ".join(result.verification_gaps()))
    return (
        f"completed but not verified: {gaps}. GitHub has no conclusion for a run that "
        "finished without proving its change, so this shows as neutral."
    )


@dataclass(frozen=True, slots=True)
class CheckRunView:
    status: str
    conclusion: CheckConclusion | None
    title: str
    summary: str
    text: str | None = None
    actions: tuple[dict[str, str], ...] = ()

    def body(self, details_url: str | None = None) -> dict[str, Any]:
        """The ``checks/create`` / ``checks/update`` fields (without name and head)."""
        output: dict[str, Any] = {"title": hide_paths(self.title),
                                  "summary": hide_paths(self.summary)}
        if self.text:
            output["text"] = self.text
        out: dict[str, Any] = {"status": self.status, "output": output,
                               "actions": list(self.actions)}
        if self.conclusion is not None:
            out["conclusion"] = self.conclusion.value
        if details_url:
            out["details_url"] = details_url
        return out


_TERMINAL_CHECK: dict[Outcome, tuple[CheckConclusion, str]] = {
    Outcome.CLOSED: (CheckConclusion.SUCCESS, "merged with its checks passing on the very "
                     "commit merged, and watched clean."),
    Outcome.KILLED: (CheckConclusion.CANCELLED, "killed by a person; nothing was landed."),
    Outcome.REJECTED: (CheckConclusion.NEUTRAL, "rejected at a checkpoint; nothing was "
                       "landed. GitHub has no conclusion for a rejection, so this shows as "
                       "neutral."),
    Outcome.IGNORED: (CheckConclusion.SKIPPED, "ignored by triage; no work was done."),
    Outcome.DUPLICATE: (CheckConclusion.SKIPPED, "a duplicate: the same failure is another "
                        "quest's, which carries the work."),
    Outcome.FLAKY: (CheckConclusion.NEUTRAL, "flaky: the failed check passed when re-run on "
                    "the same commit, so no agent was run. GitHub has no conclusion for "
                    "\"flaky\", so this shows as neutral."),
}


CHECK_TEXT_LIMIT = OUTPUT_LIMIT
"""GitHub refuses a check run whose ``output.text`` is longer than this."""
_CUT = ("\n\n*(cut here: GitHub allows {limit:,} characters in a check run's details; "
        "{rest:,} more were left out)*\n")


def check_text(quest: Quest, evidence: EvidenceBundle | None = None,
               policy: Policy | None = None) -> str:
    """The check run's details — the full text the status comment points to when it cuts:
    what comes next, the proof, the evidence and what the proof printed, cut to GitHub's limit
    at a line end (the verdict heading comes first, so it is never cut off)."""
    checkpoints = "\n".join(gates_lines(status_and_next(quest, policy or Policy())))
    text = (f"{next_action(quest, policy)}\n\n**Checkpoints:**\n{checkpoints}\n\n"
            f"{_proof_line(quest)}")
    if evidence is not None:
        text += "\n\n" + render_markdown(evidence, ended=quest.state in TERMINAL,
                                          paused=quest.state is State.PARKED)
        if evidence.outputs:
            text += "\n\n#### What the proof printed\n\n" + render_outputs(evidence.outputs)
    text = hide_paths(text)
    cut = fit(text, CHECK_TEXT_LIMIT, note=_CUT)
    opened = cut.count("<details>") - cut.count("</details>")
    if opened > 0:  # a cut inside a collapsed block closes it, within the limit still
        closers = "\n</details>" * opened
        cut = fit(text, CHECK_TEXT_LIMIT - len(closers), note=_CUT) + closers
    return cut


def check_run(quest: Quest, evidence: EvidenceBundle | None = None,
              policy: Policy | None = None) -> CheckRunView:
    """The ``questbot`` check run for the quest's current state (``policy``: which
    checkpoints block, for the checkpoints' lines)."""
    state = quest.state
    meaning = f"{state_words(state).capitalize()}: {MEANING[state]}"
    text = check_text(quest, evidence, policy)
    if state in CHECKPOINT_AT or state is State.HANDED_OFF:
        checkpoint = CHECKPOINT_AT.get(quest.checkpoint_state)
        at = f"checkpoint {checkpoint.value}" if checkpoint else "a claimed review"
        who = "a person"
        if (checkpoint is not None and state is not State.HANDED_OFF and policy is not None
                and not policy.shadow and not policy.blocking(checkpoint)):
            who = "a review"  # advisory: questbot's automatic reviewer or a person
        return CheckRunView("completed", CheckConclusion.ACTION_REQUIRED,
                            f"questbot: waiting for {who} at {at}", f"{meaning} {AT_A_STEP}",
                            text, ACTIONS if checkpoint else ())
    if waits_for_spend(quest):
        return CheckRunView("completed", CheckConclusion.ACTION_REQUIRED,
                            "questbot: waiting for a spend decision",
                            f"{meaning} {next_action(quest)}", text, spend_words.ACTIONS)
    reason = quest.park_reason
    halted = _HALTED_OUTCOME.get(reason) if state is State.PARKED and reason else None
    if halted is not None:
        title = {RunOutcome.FAILURE: "the agent failed", RunOutcome.REFUSED: "the agent "
                 "refused", RunOutcome.ACTION_REQUIRED: "waiting for a person"}[halted]
        if reason is ParkReason.NO_AGENT:
            title = "no agent is set up"
        elif reason is ParkReason.MODEL_FAILED:
            title = "the model endpoint failed"
        elif reason is ParkReason.WORK_FAILED:
            title = "work could not be done"
        elif reason is ParkReason.REPOSITORY_CHANGED:
            title = "the repository changed"
        words = (" GitHub has no conclusion for a refusal, so this shows as neutral."
                 if halted is RunOutcome.REFUSED else "")
        return CheckRunView("completed", CONCLUSION_BY_OUTCOME[halted], f"questbot: {title}",
                            f"{meaning} {next_action(quest)}{words}", text)
    if state is State.PARKED:
        paused = reason is None or reason is ParkReason.PAUSED
        return CheckRunView("completed", CheckConclusion.NEUTRAL,
                            "questbot: paused by a person" if paused else "questbot: parked",
                            f"{meaning} {next_action(quest)} GitHub has no conclusion for "
                            "\"stopped, resumable\", so this shows as neutral.", text)
    if state is State.TRIAGED:
        return CheckRunView("completed", CheckConclusion.ACTION_REQUIRED,
                            "questbot: waiting for a person to start it", meaning, text)
    if state is State.CLOSED or state is State.ABANDONED:
        outcome = quest.outcome or (Outcome.CLOSED if state is State.CLOSED else Outcome.KILLED)
        conclusion, why = _TERMINAL_CHECK[outcome]
        if outcome not in (Outcome.KILLED, Outcome.REJECTED) and state is State.ABANDONED:
            # "abandoned" means killed or rejected only for those two: a flaky failure, a
            # duplicate or an ignored signal ended with nobody killing anything
            meaning = f"Ended: {ended_words(quest)}"
        if conclusion is not CheckConclusion.SUCCESS or evidence is None:
            return CheckRunView("completed", conclusion, f"questbot: {outcome.value}",
                                f"{meaning} The quest was {why}", text)
        run = f"The latest agent run — {_run_summary(evidence.result)}"
        if evidence.verified:
            return CheckRunView("completed", conclusion, f"questbot: {outcome.value}",
                                f"{meaning} The quest was {why} {run}", text)
        return CheckRunView("completed", ENDED_CONCLUSION[outcome_of(evidence.result)],
                            f"questbot: {outcome.value}, not verified",
                            f"{meaning} The quest landed, but its evidence is not verified, "
                            f"so this is not shown as a success. {run}", text)
    status = "queued" if state is State.SENSED else "in_progress"
    return CheckRunView(status, None, f"questbot: {state_words(state)}",
                        f"{meaning} {spent_so_far(quest)}", text)


def spent_so_far(quest: Quest) -> str:
    """What a quest at work has cost so far, in a sentence for its check run: people watching
    a stage run see what it costs as it goes."""
    if not quest.usage_tokens and not quest.usage_cost_cents:
        return "Nothing spent on the model yet."
    if not quest.usage_cost_cents:
        free = quest.usage_free_tokens >= quest.usage_tokens
        return (f"Spent so far: {spend_words.tokens(quest.usage_tokens)}, "
                + ("a local model's, no charge." if free else "with no price reported."))
    return (f"Spent so far: {spend_words.money(quest.usage_cost_cents)} "
            f"({spend_words.tokens(quest.usage_tokens)}).")


def superseded_check_run(new_head: str) -> CheckRunView:
    """What a check run left on a commit that is no longer the quest's head says: finished,
    so nobody waits on a commit questbot has moved on from."""
    return CheckRunView("completed", CheckConclusion.NEUTRAL, "questbot: superseded",
                        f"Superseded by {sha(new_head)}: the quest moved on from this commit. "
                        "Its check run there shows where the quest stands. GitHub has no "
                        "conclusion for \"superseded\", so this shows as neutral.")
