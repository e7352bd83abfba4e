"""A claim shows as GitHub shows ownership: the one who claims becomes the pull request's
assignee and its one requested reviewer; when the claim ends GitHub is as it was before it —
each write once, however often the webhooks come."""

from __future__ import annotations

from bot.core import State
from bot.journal.keys import quest_gh_key
from questbot_testing.scenario import MAINTAINER, REPO, SETTINGS, Story, setup_repository
from questbot_testing.stack import Stack
from tests.e2e.test_github_flows import at_checkpoint_a

OTTO = "otto"


def shown(stack: Stack, number: int) -> tuple[list[str], list[str]]:
    pr = stack.fake.repo(REPO).pulls[number]
    return list(stack.fake.repo(REPO).issues[number].assignees), list(pr.requested_reviewers)


async def test_a_claim_assigns_and_requests_its_owner_and_a_release_puts_it_back(
        stack: Stack) -> None:
    story = await at_checkpoint_a(stack)
    number = story.pr_number()
    stack.fake.set_permission(REPO, OTTO, "write")
    assert shown(stack, number) == ([], [MAINTAINER])
    await stack.fake.comment(REPO, number, "/claim", user=OTTO)
    await stack.settle()
    await stack.fake.redeliver(stack.fake.deliveries[-1].delivery)
    await stack.settle()
    assert (await stack.quest(story.quest_id)).state is State.HANDED_OFF
    assert shown(stack, number) == ([OTTO], [OTTO])  # maya's pending request withdrawn
    assert len(stack.calls("issues/add-assignees")) == 1
    await stack.fake.comment(REPO, number, "/release", user=OTTO)
    await stack.settle()
    assert (await stack.quest(story.quest_id)).state is State.HYPOTHESISED
    assert shown(stack, number) == ([], [MAINTAINER])  # as it was
    assert len(stack.calls("issues/remove-assignees")) == 1


async def test_the_owners_decision_ends_the_claim_on_github_too(stack: Stack) -> None:
    story = await at_checkpoint_a(stack)
    number = story.pr_number()
    await stack.fake.comment(REPO, number, "/claim", user=MAINTAINER)
    await stack.settle()
    assert shown(stack, number) == ([MAINTAINER], [MAINTAINER])  # requested before: kept
    await stack.fake.comment(REPO, number, "/approve A", user=MAINTAINER)
    await stack.settle()
    assert (await stack.quest(story.quest_id)).state is State.PLANNED
    assert shown(stack, number)[0] == []


async def test_a_claim_by_a_reviewer_without_write_access_holds_though_github_cannot_assign(
        stack: Stack) -> None:
    """GitHub silently leaves out an assignee without push access (BEHAVIOUR §8): a reviewer
    named in the settings with read access claims, is requested, is not assigned, and the
    claim holds in questbot all the same, with a note of why."""
    story = Story(stack)
    main = await setup_repository(stack, SETTINGS.replace("reviewers: [maya]",
                                                          "reviewers: [maya, ruth]"))
    stack.fake.set_permission(REPO, "ruth", "read")
    await stack.fake.fail_check(REPO, main, name="tests")
    await stack.settle()
    (quest,) = await stack.quests(REPO)
    story.quest_id = quest.id
    await story.step("researched", State.HYPOTHESISED)
    number = story.pr_number()
    await stack.fake.comment(REPO, number, "/claim", user="ruth")
    await stack.settle()
    assert (await stack.quest(story.quest_id)).owner == "ruth"
    assert shown(stack, number) == ([], ["ruth"])
    note = await stack.runtime.redis.hget(quest_gh_key(story.quest_id), "note:claim")
    assert note is not None and b"write access" in note


async def test_a_failed_proof_that_ends_the_claim_puts_github_back(stack: Stack) -> None:
    """At C, otto claims; a person pushes a head whose proof fails: the claim ends with it
    (``proof_failed`` clears the owner), and GitHub no longer shows otto as its owner."""
    story = await at_checkpoint_a(stack)
    number = story.pr_number()
    stack.fake.set_permission(REPO, OTTO, "write")
    await story.approve("A", State.PLANNED)
    await story.approve("B", State.READY)
    before = shown(stack, number)
    await stack.fake.comment(REPO, number, "/claim", user=OTTO)
    await stack.settle()
    assert shown(stack, number) == ([OTTO], [OTTO])
    await stack.fake.push(REPO, f"quest/{story.quest_id}",
                          {"pager.py": "def page_count(total, per_page):\n    return 0\n"},
                          user="carol")
    await stack.settle()
    quest = await stack.quest(story.quest_id)
    assert quest.owner is None and quest.state is State.PARKED  # its attempts were spent
    assert shown(stack, number) == before == ([], [MAINTAINER])  # as it was


async def test_an_owner_who_approves_c_is_unassigned_and_nobody_is_asked_again(
        stack: Stack) -> None:
    story = await at_checkpoint_a(stack)
    number = story.pr_number()
    stack.fake.set_permission(REPO, OTTO, "write")
    await story.approve("A", State.PLANNED)
    await story.approve("B", State.READY)
    await stack.fake.comment(REPO, number, "/claim", user=OTTO)
    await stack.settle()
    asked = len(stack.calls("pulls/request-reviewers"))
    await stack.fake.comment(REPO, number, "/approve C", user=OTTO)
    await stack.settle()
    quest = await stack.quest(story.quest_id)
    assert quest.state is State.WATCHING and stack.fake.repo(REPO).pulls[number].merged
    assert shown(stack, number)[0] == []
    assert len(stack.calls("pulls/request-reviewers")) == asked  # the review is over
