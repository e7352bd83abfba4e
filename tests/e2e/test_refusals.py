"""Refusals on GitHub: each refused command and button press gets one reply in people's words,
and commands questbot does not own, on threads that are no quest, get nothing at all."""

from __future__ import annotations

import re

from bot.core import State
from bot.journal.keys import quest_gh_key
from bot.words.render import INBOX_TITLE
from questbot_testing.scenario import MAINTAINER, READER, REPO, setup_repository
from questbot_testing.stack import Stack
from tests.e2e.test_github_flows import at_checkpoint_a, replies

SNAKE = re.compile(r"\b[a-z]+_[a-z_]+\b")
PROW = ("/lgtm\n/approve", "/approve cancel", "/approve no-issue", "/hold", "/hold cancel",
        "/retest", "/assign @maya", "/cc @rex", "/meow", "/aprove")


def said(reply: str) -> str:
    return re.sub(r"<!-- questbot:[^>]*-->", "", reply)


def bot_writes(stack: Stack, since: int) -> list[str]:
    return [f"{e.method} {e.operation_id}" for e in stack.fake.requests[since:]
            if e.method != "GET" and not e.path.startswith("/app/")]


async def a_persons_pull(stack: Stack) -> int:
    await stack.fake.push(REPO, "feature", {"NOTES.md": "a person's change\n"}, user=MAINTAINER)
    pr = await stack.fake.open_pull_request(REPO, "feature", user=MAINTAINER)
    await stack.settle()
    return int(pr.number)


async def test_prows_commands_on_a_persons_pull_request_and_issue_get_nothing(
        stack: Stack) -> None:
    await setup_repository(stack)
    number = await a_persons_pull(stack)
    issue = await stack.fake.open_issue(REPO, "a question", user=READER)
    await stack.settle()
    since = len(stack.fake.requests)
    for thread in (number, issue.number):
        for body in PROW:
            await stack.fake.comment(REPO, thread, body, user=MAINTAINER)
    await stack.settle()
    assert bot_writes(stack, since) == []  # no reaction, no reply, no error
    assert all(not c.reactions for c in stack.fake.repo(REPO).comments.values())
    assert await stack.quests(REPO) == []


async def test_questbots_own_commands_on_a_thread_without_a_quest_get_one_answer(
        stack: Stack) -> None:
    await setup_repository(stack)
    number = await a_persons_pull(stack)
    comment = await stack.fake.comment(REPO, number, "/lgtm\n/approve\n/claim", user=MAINTAINER)
    await stack.settle()
    (reply,) = replies(stack, number)  # for /claim only: /lgtm and /approve are Prow's here
    assert "`/claim` was not applied: there is no quest on this thread" in reply
    assert "`/quest fix`" in reply
    assert stack.fake.repo(REPO).comments[comment.id].reactions == [("questbot[bot]", "eyes")]


async def test_a_refused_command_quotes_it_says_why_and_what_to_do(stack: Stack) -> None:
    story = await at_checkpoint_a(stack)
    number = story.pr_number()
    await stack.fake.comment(REPO, number, "/approve C\n/release\n/resume", user=MAINTAINER)
    await stack.settle()
    assert (await stack.quest(story.quest_id)).state is State.HYPOTHESISED
    texts = [said(r) for r in replies(stack, number)]
    assert len(texts) == 3
    approve, release, resume = sorted(texts, key=lambda t: ["`/approve C`" not in t,
                                                            "`/release`" not in t])
    assert "`/approve C` was not applied: checkpoint A is open, not C" in approve
    assert "`/approve A`" in approve
    assert "nobody holds the review" in release and "`/claim`" in release
    assert "not parked" in resume
    for text in texts:
        assert not SNAKE.search(text), text


async def test_a_refused_button_without_a_pull_request_in_its_payload_is_answered_once(
        stack: Stack) -> None:
    """GitHub leaves a check run's ``pull_requests`` empty when it has not linked the commit to
    one (or the pull request is from a fork): the answer goes to the quest's own thread."""
    story = await at_checkpoint_a(stack)
    number = story.pr_number()
    quest = await stack.quest(story.quest_id)
    run = next(r for r in stack.fake.repo(REPO).check_runs.values() if r.name == "questbot")
    result = await stack.fake.deliver(
        stack.fake.repo(REPO), "check_run", "requested_action.payload.json",
        {"check_run": {"id": run.id, "external_id": story.quest_id, "head_sha": quest.head,
                       "pull_requests": []},
         "requested_action": {"identifier": "approve"}}, sender=READER)
    await stack.settle()
    await stack.fake.redeliver(result.delivery)  # GitHub's redelivery: the same guid
    await stack.settle()
    (reply,) = replies(stack, number)
    assert f"@{READER} your press of **Approve** on the `questbot` check run was not applied" \
        in reply
    assert (await stack.quest(story.quest_id)).state is State.HYPOTHESISED


async def test_a_refused_button_with_no_thread_known_is_answered_in_the_inbox(
        stack: Stack) -> None:
    """Neither the payload nor questbot's record names a pull request or issue for the quest
    (the record was lost; the quest's pull request could not be opened): the inbox, where what
    waits for a person is listed, gets the one reply."""
    story = await at_checkpoint_a(stack)
    quest = await stack.quest(story.quest_id)
    await stack.runtime.redis.hdel(quest_gh_key(story.quest_id), "pr")
    (inbox,) = [i for i in stack.fake.repo(REPO).issues.values() if i.title == INBOX_TITLE]
    run = next(r for r in stack.fake.repo(REPO).check_runs.values() if r.name == "questbot")
    await stack.fake.deliver(
        stack.fake.repo(REPO), "check_run", "requested_action.payload.json",
        {"check_run": {"id": run.id, "external_id": story.quest_id, "head_sha": quest.head,
                       "pull_requests": []},
         "requested_action": {"identifier": "reject"}}, sender=READER)
    await stack.settle()
    (reply,) = replies(stack, inbox.number)
    assert (f"@{READER} your press of **Reject** on the `questbot` check run was not applied: "
            "it needs write access") in reply
    assert replies(stack, story.pr_number()) == []


async def test_a_button_pressed_where_nothing_opens_says_when_it_will(stack: Stack) -> None:
    story = await at_checkpoint_a(stack)
    await story.approve("A", State.PLANNED)
    quest = await stack.quest(story.quest_id)
    run = next(r for r in stack.fake.repo(REPO).check_runs.values() if r.name == "questbot")
    await stack.fake.comment(REPO, story.pr_number(), "/pause a moment", user=MAINTAINER)
    await story.step("paused", State.PARKED)
    await stack.fake.deliver(
        stack.fake.repo(REPO), "check_run", "requested_action.payload.json",
        {"check_run": {"id": run.id, "external_id": story.quest_id, "head_sha": quest.head,
                       "pull_requests": [{"number": story.pr_number()}]},
         "requested_action": {"identifier": "approve"}}, sender=MAINTAINER)
    await stack.settle()
    (reply,) = [said(r) for r in replies(stack, story.pr_number()) if "**Approve**" in r]
    assert "the quest is parked because someone paused it" in reply and "`/resume`" in reply
    assert not SNAKE.search(reply)


async def test_no_reply_questbot_posts_holds_an_internal_identifier(stack: Stack) -> None:
    """Issue 13's bar, over the replies of a busy thread: status, claims, refusals of every
    kind, a parked quest, a kill."""
    story = await at_checkpoint_a(stack)
    number = story.pr_number()
    stack.fake.set_permission(REPO, "otto", "write")
    for user, body in ((MAINTAINER, "/status"), (MAINTAINER, "/claim"),
                       ("otto", "/approve A"), (READER, "/resume"), (MAINTAINER, "/release"),
                       (MAINTAINER, "/pause a moment"), (MAINTAINER, "/status"),
                       (MAINTAINER, "/approve B"), (MAINTAINER, "/quest research"),
                       (MAINTAINER, "/kill enough"), (MAINTAINER, "/resume"),
                       (MAINTAINER, "/status")):
        await stack.fake.comment(REPO, number, body, user=user)
        await stack.settle()
    assert (await stack.quest(story.quest_id)).state is State.ABANDONED
    texts = [said(r) for r in replies(stack, number)]
    assert len(texts) == 8  # the three /status, and every refusal: each once
    assert "`/resume` was not applied: the quest has ended: someone stopped it" in texts[-2]
    for text in texts:
        assert not SNAKE.search(text), text


async def test_quest_fix_on_an_issue_whose_quest_ended_starts_a_new_one(stack: Stack) -> None:
    await setup_repository(stack)
    issue = await stack.fake.open_issue(REPO, "the last page is missing", user=READER,
                                        labels=["questbot"])
    await stack.settle()
    (first,) = await stack.quests(REPO)
    await stack.fake.comment(REPO, issue.number, "/kill not now", user=MAINTAINER)
    await stack.settle()
    assert (await stack.quest(first.id)).state is State.ABANDONED
    await stack.fake.comment(REPO, issue.number, "/quest fix", user=MAINTAINER)
    await stack.settle()
    started = [q for q in await stack.quests(REPO) if q.id != first.id]
    assert [q.state for q in started] == [State.HYPOTHESISED]
    assert replies(stack, issue.number) == []
