"""Budgets end to end (issue 12, item 6; seed 000's request_spend and start_respondent_run),
with the model agent talking to the local model server's recorded conversations.

The sample's budget is one token, so the research stage spends it: the quest stops before
reproducing with a spend request on its pull request, a maintainer's ``/approve spend`` runs
the held stage and the quest goes on — and the same again before the patch, this time with the
check run's button. Declined, the quest stays parked and says so; a reader's ``/approve spend``
is refused and pays for nothing."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from bot.core import State
from bot.core.quest import ParkReason
from questbot_testing.modelserver.demo import demo_model
from questbot_testing.modelserver.server import ModelServer
from questbot_testing.scenario import MAINTAINER, READER, REPO, SETTINGS, Story, setup_repository
from questbot_testing.stack import Stack, virtual_pacing

ONE_TOKEN = SETTINGS + "budget: {usd: 100, tokens: 1}\n"


@pytest.fixture
async def model_stack(redis_url: str, redis_async: object) -> AsyncIterator[
        tuple[Stack, ModelServer]]:
    server, endpoint = await demo_model()
    limits, pace_time = virtual_pacing()
    stack = await Stack(redis_url, model=endpoint, limits=limits, pace_time=pace_time).start()
    try:
        yield stack, server
        stack.fake.assert_clean()
    finally:
        await stack.stop()
        await server.close()


def _spend_requests(stack: Stack, number: int) -> list[str]:
    return [c.body for c in stack.fake.repo(REPO).comments.values()
            if c.issue_number == number and "This quest's budget is spent" in c.body
            and "questbot:status" not in c.body]


def _replies(stack: Stack, number: int) -> list[str]:
    return [c.body for c in stack.fake.repo(REPO).comments.values()
            if c.issue_number == number and "questbot:reply" in c.body]


def _check_run(stack: Stack, story: Story) -> dict[str, object]:
    runs = [r for r in stack.fake.repo(REPO).check_runs.values()
            if r.name == "questbot" and r.external_id == story.quest_id]
    newest = runs[-1]
    return {"conclusion": newest.conclusion, "title": newest.output.get("title"),
            "summary": newest.output.get("summary"), "actions": newest.actions,
            "id": newest.id, "head_sha": newest.head_sha}


async def _researched(stack: Stack) -> Story:
    main = await setup_repository(stack, ONE_TOKEN)
    await stack.fake.fail_check(REPO, main, name="tests")
    await stack.settle()
    (quest,) = await stack.quests(REPO)
    story = Story(stack, quest_id=quest.id)
    await story.step("the model researched the failure", State.HYPOTHESISED)
    assert quest.usage_tokens > 1  # the research stage spent the budget
    return story


async def test_a_spent_budget_stops_the_quest_and_an_approval_pays_for_the_stage(
        model_stack: tuple[Stack, ModelServer]) -> None:
    stack, server = model_stack
    story = await _researched(stack)
    number = story.pr_number()

    # /approve A: the reproduction would start, but the budget is spent
    quest = await story.approve("A", State.PARKED)
    assert quest.park_reason is ParkReason.BUDGET_REACHED
    assert quest.resume_state is State.REPRODUCING
    [request] = _spend_requests(stack, number)
    for said in (f"{quest.usage_tokens:,} tokens", "$100.00 or 1 token", "reproduction stage",
                 "`/approve spend`", "Approve spend", "`/deny spend`"):
        assert said in request, said
    run = _check_run(stack, story)
    assert run["conclusion"] == "action_required"
    assert run["title"] == "questbot: waiting for a spend decision"
    assert [a["identifier"] for a in run["actions"]] == ["approve_spend", "deny_spend"]  # type: ignore[attr-defined]
    status = story.status_comment()
    assert "The budget is spent" in status and "/approve spend" in status
    inbox = [i for i in stack.fake.repo(REPO).issues.values() if i.title == "questbot inbox"]
    assert inbox and "The budget is spent" in inbox[0].body  # it waits for a person
    await stack.fake.comment(REPO, number, "/status", user=READER)
    await stack.settle()
    assert any("The budget is spent" in r and "`/approve spend`" in r
               for r in _replies(stack, number))
    served = len(server.served)

    # a reader may not pay: refused, and nothing runs
    await stack.fake.comment(REPO, number, "/approve spend", user=READER)
    await stack.settle()
    assert (await stack.quest(story.quest_id)).state is State.PARKED
    assert any(f"@{READER}" in r and "/approve spend" in r and "write access" in r
               for r in _replies(stack, number))
    assert len(server.served) == served

    # the maintainer pays: the held stage runs through the model and the quest goes on
    await stack.fake.comment(REPO, number, "/approve spend", user=MAINTAINER)
    quest = await story.step("@maya approved the spend", State.PLANNED)
    assert quest.spend_approved == 1 and quest.spend_pending == ()
    assert len(server.served) > served
    assert _check_run(stack, story)["conclusion"] == "action_required"  # checkpoint B now

    # at B the patch would start with the doubled allowance spent too: asked again, and
    # this time answered with the check run's button
    quest = await story.approve("B", State.PARKED)
    assert quest.park_reason is ParkReason.BUDGET_REACHED and quest.resume_state is State.PATCHING
    assert len(_spend_requests(stack, number)) == 2
    run = _check_run(stack, story)

    async def press(who: str) -> None:
        await stack.fake.deliver(
            stack.fake.repo(REPO), "check_run", "requested_action.payload.json",
            {"check_run": {"id": run["id"], "external_id": story.quest_id,
                           "head_sha": run["head_sha"], "pull_requests": [{"number": number}]},
             "requested_action": {"identifier": "approve_spend"}}, sender=who)

    await press(READER)  # the button asks the same of whoever presses it
    await stack.settle()
    assert (await stack.quest(story.quest_id)).state is State.PARKED
    assert sum(f"@{READER}" in r and "write access" in r
               and ("`/approve spend`" in r or "**Approve spend**" in r)
               for r in _replies(stack, number)) == 2  # the comment's refusal, and the press's
    await press(MAINTAINER)
    quest = await story.step("@maya pressed Approve spend", State.READY)
    assert quest.spend_approved == 2 and quest.failed_effects == 0
    quest = await story.approve("C", State.WATCHING)
    await stack.advance(61)
    quest = await story.step("the watch window passed", State.CLOSED)
    server.assert_clean()
    # each stage's receipt named its stage: the cost per stage the status comment shows
    assert [s.stage for s in quest.usage_by_stage] == ["research", "reproduce", "patch",
                                                       "lesson"]  # what the quest taught
    assert sum(s.tokens for s in quest.usage_by_stage) == quest.usage_tokens
    cost = next(line for line in story.status_comment().splitlines()
                if line.startswith("- **Cost so far:**"))
    assert f"{quest.usage_tokens:,} tokens" in cost and "by stage: research" in cost
    assert "(with 2 approvals): $" in cost and "left" in cost  # the budget, and what is left


async def test_a_declined_spend_parks_the_quest_saying_why(
        model_stack: tuple[Stack, ModelServer]) -> None:
    stack, server = model_stack
    story = await _researched(stack)
    number = story.pr_number()
    await story.approve("A", State.PARKED)
    served = len(server.served)

    await stack.fake.comment(REPO, number, "/deny spend", user=MAINTAINER)
    quest = await story.step("@maya declined the spend", State.PARKED)
    assert quest.park_reason is ParkReason.SPEND_DECLINED and quest.spend_pending == ()
    assert len(server.served) == served  # nothing ran
    status = story.status_comment()
    assert "declined more spend" in status and "/resume" in status
    assert "spend_declined" not in status.replace("`spend_declined`", "")  # words, not names
    inbox = [i for i in stack.fake.repo(REPO).issues.values() if i.title == "questbot inbox"]
    assert inbox and "declined more spend" in inbox[0].body
    run = _check_run(stack, story)
    assert run["conclusion"] == "neutral" and run["actions"] == []

    # an approval now has nothing to answer: refused, in words
    await stack.fake.comment(REPO, number, "/approve spend", user=MAINTAINER)
    await stack.settle()
    assert (await stack.quest(story.quest_id)).park_reason is ParkReason.SPEND_DECLINED
    assert any("`/approve spend`" in r and "no spend is waiting for a decision" in r
               for r in _replies(stack, number))
