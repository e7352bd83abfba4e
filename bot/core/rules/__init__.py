"""One handler per event type, and the preconditions a few of them state.

``bot.core.table`` lists where each event type is allowed and where it may lead; a handler
picks the next quest among those targets and names the effects to ask for, and ``lifecycle``
keys the effects and refuses any move the table does not list. The handlers are grouped by
what they are about:

* ``main_line`` — creation, triage and the start of research, research, reproduction, the
  plan, the patch and its proof;
* ``flaky`` — a failing check re-run on its commit before research is paid for;
* ``holds`` — a quest held before any work by the repository's limits (``core.limits``);
* ``checkpoints`` — decisions at A, B and C, and claims on their reviews;
* ``interruptions`` — pause, resume and kill, a person's push, the base branch moving;
* ``after_landing`` — the watch, regressions and rollbacks, reopening, related quests;
* ``bookkeeping`` — signals attached, spend, usage, comments;
* ``gave_up`` — effects questbot gave up on, and the quests they would leave stuck;
* ``asks`` — what they share: the refusal and the effects they ask for.

``PRECONDITIONS`` holds the rules a cell applies only when the quest's record allows it (see
the table's theory of operation): the handler refuses with the same function that
``lifecycle.accepts`` asks.
"""

from __future__ import annotations

from bot.core.rules.after_landing import (
    child_evidence,
    landed,
    parent_landed,
    regression_detected,
    reopened,
    rollback_confirmed,
    watch_clean,
)
from bot.core.rules.asks import FollowUp, Handler, Precondition
from bot.core.rules.bookkeeping import (
    comment_posted,
    signal_attached,
    spend_decided,
    spend_requested,
    usage_recorded,
)
from bot.core.rules.checkpoints import (
    checkpoint_decided,
    claimed,
    may_claim,
    may_decide,
    open_checkpoint,
    released,
)
from bot.core.rules.flaky import may_report_rerun, may_rerun, rerun_reported, rerun_requested
from bot.core.rules.flaky import research_follows as research_follows_rerun
from bot.core.rules.gave_up import effect_failed
from bot.core.rules.holds import held
from bot.core.rules.interruptions import (
    base_moved,
    human_revision,
    killed,
    may_resume,
    paused,
    resumed,
)
from bot.core.rules.main_line import (
    agent_halted,
    hypothesis_written,
    may_complete_proof,
    may_fail_proof,
    may_plan,
    may_start_research,
    may_triage,
    patch_pushed,
    plan_written,
    proof_completed,
    proof_failed,
    reproduced,
    reproduction_failed,
    research_follows,
    research_started,
    signal_sensed,
    triaged,
)

HANDLERS: dict[str, Handler] = {
    "signal_sensed": signal_sensed,
    "triaged": triaged,
    "research_started": research_started,
    "held": held,
    "rerun_requested": rerun_requested,
    "rerun_reported": rerun_reported,
    "signal_attached": signal_attached,
    "hypothesis_written": hypothesis_written,
    "reproduced": reproduced,
    "reproduction_failed": reproduction_failed,
    "agent_halted": agent_halted,
    "plan_written": plan_written,
    "patch_pushed": patch_pushed,
    "proof_completed": proof_completed,
    "proof_failed": proof_failed,
    "checkpoint_decided": checkpoint_decided,
    "claimed": claimed,
    "released": released,
    "paused": paused,
    "resumed": resumed,
    "killed": killed,
    "human_revision": human_revision,
    "base_moved": base_moved,
    "landed": landed,
    "watch_clean": watch_clean,
    "regression_detected": regression_detected,
    "rollback_confirmed": rollback_confirmed,
    "reopened": reopened,
    "parent_landed": parent_landed,
    "child_evidence": child_evidence,
    "spend_requested": spend_requested,
    "spend_decided": spend_decided,
    "usage_recorded": usage_recorded,
    "comment_posted": comment_posted,
    "effect_failed": effect_failed,
}

PRECONDITIONS: dict[str, Precondition] = {
    "triaged": may_triage,
    "research_started": may_start_research,
    "rerun_requested": may_rerun,
    "rerun_reported": may_report_rerun,
    "plan_written": may_plan,
    "proof_completed": may_complete_proof,
    "proof_failed": may_fail_proof,
    "checkpoint_decided": may_decide,
    "claimed": may_claim,
    "resumed": may_resume,
}
"""What the quest's record (and the actor) must allow, payload aside, before a cell applies."""

FOLLOW_UPS: dict[str, FollowUp] = {
    "triaged": research_follows,
    "rerun_reported": research_follows_rerun,
}
"""Moves of questbot's own that follow an event at once, derived from it (the table's theory
of operation: follow-ups)."""

__all__ = ["FOLLOW_UPS", "HANDLERS", "PRECONDITIONS", "FollowUp", "Handler", "Precondition",
           "open_checkpoint"]
