"""One repository, one quest (issue 22): nobody steers a quest from outside its repository, or
from any pull request but the one questbot recorded for it.

The victim is a quest of ``octo/sample``. The attackers: ``mallory``, admin of
``octo/playground`` — another repository of the same installation — with no access to
``octo/sample`` (``trudy`` is her second account there), who pushes a branch named
``quest/<the victim's id>`` to her own repository and opens a pull request from it, numbered
like the victim's; and ``eve``, with no permission anywhere, whose fork of ``octo/sample`` holds
the quest's branch at the quest's own head, with a pull request into ``octo/sample`` from it.
Each test is one route GitHub gives them — a comment, a review, a push, a close, a reopen, a
check-run button, an inbox box — and each steered the victim on the code before
``bot/quests/quest_of.py`` (the quest advanced, was merged into ``octo/sample`` with every
decision recorded as hers, took a head from another repository, was paused or resumed), except
the inbox box's, which held already; the ``/pause``'d quest's was written after the fix.

"Nothing happens to the quest" means what its maintainers would check: its journal did not
grow, its pull request is not merged, ``main`` did not move, and questbot wrote nothing to
``octo/sample`` — except, where a person there would expect an answer, that one answer.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable
from dataclasses import dataclass

import pytest

from bot.core import State
from bot.words.inbox_marks import entry_marker
from bot.words.render import INBOX_TITLE
from questbot_testing.fakegithub.issue_edits import edit_issue, tick
from questbot_testing.fakegithub.webhooks import DeliveryResult
from questbot_testing.sample import sample_files
from questbot_testing.scenario import MAINTAINER, READER, REPO, Story
from questbot_testing.stack import Stack
from tests.e2e.test_github_flows import at_checkpoint_a
from tests.e2e.test_landing import at_checkpoint_c

PLAYGROUND = "octo/playground"
MALLORY, TRUDY = "mallory", "trudy"
EVE = "eve"
TESS = "tess"
"""Triage in ``octo/sample``: GitHub lets her close and reopen any pull request there."""


# -- the scene ---------------------------------------------------------------------------------


async def quietly(stack: Stack, action: Awaitable[object]) -> list[DeliveryResult]:
    """Do ``action`` on the fake with its webhooks recorded, not sent: the scene is set without
    the route a test is not about."""
    url, stack.fake.webhook_url = stack.fake.webhook_url, None
    count = len(stack.fake.deliveries)
    try:
        await action
    finally:
        stack.fake.webhook_url = url
    return stack.fake.deliveries[count:]


def playground(stack: Stack) -> None:
    stack.fake.create_repository(PLAYGROUND, sample_files())
    for login in (MALLORY, TRUDY):
        stack.fake.set_permission(PLAYGROUND, login, "admin")


async def mallorys_pull(stack: Stack, story: Story) -> int:
    """mallory's ``quest/<victim>`` branch in her own repository and a pull request from it
    there, numbered like the victim's (numbers are per repository), set up quietly."""
    playground(stack)
    branch = f"quest/{story.quest_id}"
    stack.fake.repo(PLAYGROUND).next_number = story.pr_number()
    await quietly(stack, stack.fake.push(PLAYGROUND, branch, {"NOTES.md": "mine\n"},
                                         user=MALLORY))
    pr = await stack.fake.open_pull_request(PLAYGROUND, branch, user=MALLORY,
                                            title="questbot: totally legit")
    assert pr.number == story.pr_number()
    return pr.number


async def forks_pull(stack: Stack, story: Story, user: str = EVE) -> int:
    """``user``'s fork of ``octo/sample``, its ``quest/<victim>`` branch at the quest's own
    head (a fork copies the branches), and a pull request from it into ``octo/sample``."""
    victim, branch = story.pr_number(), f"quest/{story.quest_id}"
    fork = stack.fake.fork(REPO, user)
    pr = await stack.fake.open_pull_request(REPO, branch, user=user, head_repo=fork.full_name)
    assert pr.number != victim and pr.head_sha == stack.fake.repo(REPO).branch_sha(branch)
    return pr.number


@dataclass
class Before:
    version: int
    requests: int
    main: str
    head: str | None


async def before(stack: Stack, story: Story) -> Before:
    version, quest = await stack.runtime.worker.journal.snapshot(story.quest_id)
    assert quest is not None
    return Before(version, len(stack.fake.requests), str(stack.fake.repo(REPO).branch_sha("main")),
                  quest.head)


def writes_to_the_victims_repository(stack: Stack, since: Before) -> list[str]:
    return sorted(str(e.operation_id) for e in stack.fake.requests[since.requests:]
                  if e.method != "GET" and e.path.lower().startswith(f"/repos/{REPO}/"))


async def untouched(stack: Stack, story: Story, since: Before, state: State, *,
                    answered: int = 0, also: tuple[str, ...] = ()) -> None:
    """Nothing happened to the quest; questbot wrote ``answered`` replies to ``octo/sample``
    (and the writes ``also`` names) and nothing else there."""
    await stack.settle()
    version, quest = await stack.runtime.worker.journal.snapshot(story.quest_id)
    assert quest is not None and quest.state is state, quest and quest.state
    assert version == since.version, "the victim quest's journal grew"
    assert quest.head == since.head
    assert not stack.fake.repo(REPO).pulls[story.pr_number()].merged
    assert stack.fake.repo(REPO).branch_sha("main") == since.main
    assert writes_to_the_victims_repository(stack, since) == sorted(
        ["issues/create-comment"] * answered + list(also))


def replies(stack: Stack, repo: str, number: int) -> list[str]:
    return [re.sub(r"\s*<!-- questbot:[^>]*-->\s*$", "", c.body)
            for c in stack.fake.repo(repo).comments.values()
            if c.issue_number == number and "questbot:reply" in c.body]


# -- comments ----------------------------------------------------------------------------------


async def test_commands_on_a_pull_request_in_another_repository_do_not_reach_the_quest(
        stack: Stack) -> None:
    story = await at_checkpoint_a(stack)
    theirs = await mallorys_pull(stack, story)
    was = await before(stack, story)
    for said in ("/approve A", "/approve B", "/approve C", "/pause mine now", "/kill mine"):
        await stack.fake.comment(PLAYGROUND, theirs, said, user=MALLORY)
    await untouched(stack, story, was, State.HYPOTHESISED)
    actors = {e.actor for e in await stack.runtime.worker.journal.events(story.quest_id)}
    assert MALLORY not in actors


async def test_a_maintainers_command_on_a_fork_pull_request_named_like_the_quest_is_answered_not_applied(  # noqa: E501
        stack: Stack) -> None:
    story = await at_checkpoint_a(stack)
    theirs = await forks_pull(stack, story)
    was = await before(stack, story)
    await stack.fake.comment(REPO, theirs, "/approve A", user=MAINTAINER)
    await untouched(stack, story, was, State.HYPOTHESISED, answered=1,
                    also=("reactions/create-for-issue-comment",))  # questbot read it
    (said,) = replies(stack, REPO, theirs)
    assert said.startswith(f"@{MAINTAINER} `/approve A` was not applied: there is no quest on "
                           "this thread.")
    assert f"#{story.pr_number()}" in said  # where the quest's own pull request is


# -- reviews -----------------------------------------------------------------------------------


async def test_an_approving_review_in_another_repository_does_not_land_the_quest(
        stack: Stack) -> None:
    story = await at_checkpoint_c(stack)
    theirs = await mallorys_pull(stack, story)
    head = (await stack.quest(story.quest_id)).head
    was = await before(stack, story)
    await stack.fake.review(PLAYGROUND, theirs, "APPROVE", user=TRUDY, commit_id=head)
    await untouched(stack, story, was, State.READY)


@pytest.mark.parametrize("event", ["APPROVE", "REQUEST_CHANGES"])
async def test_a_maintainers_review_of_a_fork_pull_request_is_no_decision(
        stack: Stack, event: str) -> None:
    """The fork's branch is the quest's, at the quest's head: a maintainer approving "it" (or
    asking for changes) has reviewed eve's pull request, not the quest's."""
    story = await at_checkpoint_c(stack)
    theirs = await forks_pull(stack, story)
    was = await before(stack, story)
    await stack.fake.review(REPO, theirs, event, user=MAINTAINER, body="looks fine")
    await untouched(stack, story, was, State.READY)


# -- pushes ------------------------------------------------------------------------------------


async def test_a_push_to_a_quest_branch_in_another_repository_is_not_the_quests_head(
        stack: Stack) -> None:
    story = await at_checkpoint_a(stack)
    playground(stack)
    was = await before(stack, story)
    await stack.fake.push(PLAYGROUND, f"quest/{story.quest_id}", {"NOTES.md": "mine\n"},
                          user=MALLORY)
    await untouched(stack, story, was, State.HYPOTHESISED)


async def test_a_push_to_a_forks_quest_branch_is_not_the_quests_head(stack: Stack) -> None:
    story = await at_checkpoint_c(stack)
    await forks_pull(stack, story, MALLORY)
    was = await before(stack, story)
    await stack.fake.push(f"{MALLORY}/sample", f"quest/{story.quest_id}",
                          {"NOTES.md": "mine\n"}, user=MALLORY)
    await untouched(stack, story, was, State.READY)


# -- closing and reopening ---------------------------------------------------------------------


async def test_closing_a_pull_request_in_another_repository_does_not_pause_the_quest(
        stack: Stack) -> None:
    story = await at_checkpoint_c(stack)
    theirs = await mallorys_pull(stack, story)
    was = await before(stack, story)
    await stack.fake.close_pull(PLAYGROUND, theirs, user=MALLORY)
    await untouched(stack, story, was, State.READY)


async def test_closing_a_fork_pull_request_does_not_pause_the_quest(stack: Stack) -> None:
    story = await at_checkpoint_c(stack)
    theirs = await forks_pull(stack, story)
    was = await before(stack, story)
    await stack.fake.close_pull(REPO, theirs, user=EVE)  # her own PR: GitHub lets her
    await untouched(stack, story, was, State.READY)


async def test_reopening_a_pull_request_in_another_repository_does_not_resume_the_quest(
        stack: Stack) -> None:
    """maya's close paused the quest; mallory's pull request has the same number in her own
    repository, and she closes and reopens it."""
    story = await at_checkpoint_c(stack)
    theirs = await mallorys_pull(stack, story)
    await stack.fake.close_pull(REPO, story.pr_number(), user=MAINTAINER)
    await story.step("maya closed the quest's pull request", State.PARKED)
    was = await before(stack, story)
    await stack.fake.close_pull(PLAYGROUND, theirs, user=MALLORY)
    await stack.fake.reopen_pull(PLAYGROUND, theirs, user=MALLORY)
    await untouched(stack, story, was, State.PARKED)


async def test_closing_the_quests_pull_request_without_write_access_does_not_pause_it(
        stack: Stack) -> None:
    """Triage may close any pull request on GitHub, but pausing a quest takes write access
    (or being a configured reviewer), as ``/pause`` does: the quest goes on, questbot opens its
    pull request again and says so once (``docs/decisions.md``)."""
    story = await at_checkpoint_c(stack)
    stack.fake.set_permission(REPO, TESS, "triage")
    number = story.pr_number()
    was = await before(stack, story)
    await stack.fake.close_pull(REPO, number, user=TESS)
    await stack.settle()
    await stack.fake.redeliver(stack.fake.deliveries[-1].delivery)  # GitHub sends it again
    await stack.settle()
    quest = await stack.quest(story.quest_id)
    assert quest.state is State.READY and quest.revision == 1
    assert (await stack.runtime.worker.journal.snapshot(story.quest_id))[0] == was.version
    assert stack.fake.repo(REPO).issues[number].state == "open"
    (said,) = replies(stack, REPO, number)
    assert said.startswith(f"@{TESS} closed #{number}, but pausing the quest needs write access")
    assert "`/pause <why>`" in said and "opened it again" in said
    await story.approve("C", State.WATCHING)  # and it lands as ever


async def test_a_close_without_write_access_of_a_paused_quests_pull_request_is_undone_too(
        stack: Stack) -> None:
    """A maintainer's ``/pause`` is no pause by a close: the pull request stays open."""
    story = await at_checkpoint_c(stack)
    stack.fake.set_permission(REPO, TESS, "triage")
    number = story.pr_number()
    await stack.fake.comment(REPO, number, "/pause a release first", user=MAINTAINER)
    await story.step("maya paused the quest", State.PARKED)
    was = await before(stack, story)
    await stack.fake.close_pull(REPO, number, user=TESS)
    await untouched(stack, story, was, State.PARKED, answered=1, also=("pulls/update",))
    assert stack.fake.repo(REPO).issues[number].state == "open"


async def test_reopening_the_quests_pull_request_without_write_access_does_not_resume_it(
        stack: Stack) -> None:
    story = await at_checkpoint_c(stack)
    stack.fake.set_permission(REPO, TESS, "triage")
    number = story.pr_number()
    await stack.fake.close_pull(REPO, number, user=MAINTAINER)
    await story.step("maya closed the quest's pull request", State.PARKED)
    was = await before(stack, story)
    await stack.fake.reopen_pull(REPO, number, user=TESS)
    await untouched(stack, story, was, State.PARKED, answered=1, also=("pulls/update",))
    assert stack.fake.repo(REPO).issues[number].state == "closed"  # as maya left it
    said = replies(stack, REPO, number)[-1]
    assert said.startswith(f"@{TESS} reopened #{number}, but resuming the quest needs write "
                           "access")
    await stack.fake.reopen_pull(REPO, number, user=MAINTAINER)
    await story.step("maya reopened it", State.READY)


# -- the check run's buttons -------------------------------------------------------------------


async def test_a_button_pressed_in_another_repository_does_not_reach_the_quest(
        stack: Stack) -> None:
    """GitHub sends ``requested_action`` only for the App's own check run, and a quest's id is
    no secret: a press in ``octo/playground`` whose check run names the victim quest is still
    a press in ``octo/playground``."""
    story = await at_checkpoint_a(stack)
    playground(stack)
    head = (await stack.quest(story.quest_id)).head
    was = await before(stack, story)
    await stack.fake.deliver(
        stack.fake.repo(PLAYGROUND), "check_run", "requested_action.payload.json",
        {"check_run": {"id": 424242, "external_id": story.quest_id, "head_sha": head,
                       "pull_requests": []},
         "requested_action": {"identifier": "approve"}}, sender=MALLORY)
    await untouched(stack, story, was, State.HYPOTHESISED)


# -- the inbox's boxes (this one held before) ----------------------------------------------------


async def test_a_box_ticked_in_another_repositorys_inbox_does_not_reach_the_quest(
        stack: Stack) -> None:
    stack.fake.create_repository(REPO, sample_files())
    stack.fake.set_permission(REPO, MAINTAINER, "write")
    await stack.fake.open_issue(REPO, "the last page is missing", user=READER,
                                labels=["questbot"])
    await stack.settle()
    (victim,) = await stack.quests(REPO)
    assert victim.state is State.TRIAGED
    playground(stack)
    await stack.fake.open_issue(PLAYGROUND, "mine", user=MALLORY, labels=["questbot"])
    await stack.settle()
    (inbox,) = [i for i in stack.fake.repo(PLAYGROUND).issues.values()
                if i.title == INBOX_TITLE]
    body = f"{inbox.body}\n- [ ] {entry_marker(victim.id)} the victim\n"
    await edit_issue(stack.fake, PLAYGROUND, inbox.number, body, user=MALLORY)
    story = Story(stack, quest_id=victim.id)
    version = (await stack.runtime.worker.journal.snapshot(victim.id))[0]
    await tick(stack.fake, PLAYGROUND, inbox.number, entry_marker(victim.id), user=MALLORY)
    await stack.settle()
    assert (await stack.runtime.worker.journal.snapshot(story.quest_id))[0] == version
    assert (await stack.quest(victim.id)).state is State.TRIAGED
