"""A quest that ended still tells people what could not be done for it, and nothing more: an
effect that fails after ``/kill`` is journaled and shown in the status comment, and the quest
stays as the kill left it (seed 000: terminal states absorb everything but usage receipts)."""

from __future__ import annotations

from bot.core import Policy, State
from bot.core.events.bookkeeping import SpendDecided, SpendRequested
from bot.runner import failures
from questbot_testing.scenario import MAINTAINER, REPO
from questbot_testing.stack import Stack
from tests.e2e.test_github_flows import at_checkpoint_a


async def test_an_effect_that_fails_after_a_kill_is_shown_and_changes_nothing(
        stack: Stack) -> None:
    story = await at_checkpoint_a(stack)
    qid, number = story.quest_id, story.pr_number()
    journal = stack.runtime.worker.journal
    at = stack.clock()
    # a study was paid for while the quest was live; it has not run when the quest is killed
    await journal.apply(SpendRequested(id=f"{qid}-spend", quest_id=qid, at=at,
                                       amount_cents=500, purpose="user study"), Policy())
    await journal.apply(SpendDecided(id=f"{qid}-spend-ok", quest_id=qid, at=at,
                                     request_id=f"{qid}-spend", approved=True,
                                     actor=MAINTAINER), Policy())
    await stack.fake.comment(REPO, number, "/kill not worth it", user=MAINTAINER)
    await stack.settle()  # the kill is read first, then the study's effects fail for good

    quest = await stack.quest(qid)
    assert quest.state is State.ABANDONED
    assert quest.failed_effects == 0 and quest.last_failure is None  # unchanged by them
    failed = [f.effect_type for f in await failures(journal.client, qid)]
    assert "start_respondent_run" in failed
    events = await journal.events(qid)
    killed_at = [e.type for e in events].index("killed")
    late = [e for e in events[killed_at:] if e.type == "effect_failed"]
    assert {e.effect_type for e in late} == set(failed)  # type: ignore[union-attr]
    status = story.status_comment()
    assert "**State:** abandoned" in status and "**Could not be done:**" in status
    assert "could not run the stage the spend paid for" in status  # questbot's own work,
    assert "could not run the stage the spend paid for on GitHub" not in status  # not GitHub's
    assert "named no stage to run" in status  # the failure, in words
    timeline = status.split("<summary>Timeline</summary>")[1].split("</details>")[0]
    assert timeline.count("questbot could not ") == len(late)  # and on the timeline, in words
