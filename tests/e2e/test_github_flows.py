"""How maintainers meet questbot on GitHub, end to end: signed webhooks in, REST calls out,
the real web process and worker in between."""

from __future__ import annotations

import json
import logging

import pytest

from bot.core import State
from bot.journal.keys import repo_gh_key
from bot.runner import failures
from questbot_testing.fakegithub import example_files, send
from questbot_testing.scenario import MAINTAINER, READER, REPO, Story, setup_repository
from questbot_testing.stack import Stack


async def at_checkpoint_a(stack: Stack) -> Story:
    story = Story(stack)
    main = await setup_repository(stack)
    await stack.fake.fail_check(REPO, main, name="tests")
    await stack.settle()
    (quest,) = await stack.quests(REPO)
    story.quest_id = quest.id
    await story.step("researched", State.HYPOTHESISED)
    return story


def replies(stack: Stack, number: int) -> list[str]:
    return [c.body for c in stack.fake.repo(REPO).comments.values()
            if c.issue_number == number and "questbot:reply" in c.body]


async def test_failing_check_opens_a_pr_with_check_run_status_comment_and_reviewers(
        stack: Stack) -> None:
    story = await at_checkpoint_a(stack)
    repo = stack.fake.repo(REPO)
    pr = repo.pulls[story.pr_number()]
    assert pr.head_ref == f"quest/{story.quest_id}"
    (run,) = [r for r in repo.check_runs.values() if r.name == "questbot"]
    assert run.conclusion == "action_required"
    assert [a["identifier"] for a in run.actions] == ["approve", "revise", "reject"]
    assert pr.requested_reviewers == [MAINTAINER]
    status = story.status_comment()
    assert "hypothesised" in status and "/approve A" in status and "stateDiagram-v2" in status


async def test_a_comment_on_the_quest_pr_finds_its_quest_with_or_without_redis_memory(
        stack: Stack) -> None:
    story = await at_checkpoint_a(stack)
    number = story.pr_number()
    gets = len(stack.calls("pulls/get"))
    await stack.fake.comment(REPO, number, "/status", user=MAINTAINER)
    await stack.settle()
    assert len(stack.calls("pulls/get")) == gets, "Redis knows whose PR it is"
    assert len(replies(stack, number)) == 1
    client = stack.runtime.worker.journal.client
    await client.hdel(repo_gh_key(REPO), f"pr:{number}")  # that memory lost
    await stack.fake.comment(REPO, number, "/status", user=MAINTAINER)
    await stack.settle()
    assert len(stack.calls("pulls/get")) == gets + 1, "GitHub names the PR's branch instead"
    assert len(replies(stack, number)) == 2


async def test_a_read_only_user_is_refused_with_a_reply(stack: Stack) -> None:
    story = await at_checkpoint_a(stack)
    number = story.pr_number()
    await stack.fake.comment(REPO, number, "/approve", user=READER)
    await stack.settle()
    assert (await stack.quest(story.quest_id)).state is State.HYPOTHESISED
    (reply,) = replies(stack, number)
    assert f"@{READER}" in reply and "write access" in reply


async def test_an_unknown_command_gets_the_closest_one(stack: Stack) -> None:
    story = await at_checkpoint_a(stack)
    number = story.pr_number()
    await stack.fake.comment(REPO, number, "/aprove A", user=MAINTAINER)
    await stack.settle()
    (reply,) = replies(stack, number)
    assert "/approve" in reply
    assert (await stack.quest(story.quest_id)).state is State.HYPOTHESISED


async def test_commands_in_quotes_and_code_blocks_are_ignored(stack: Stack) -> None:
    story = await at_checkpoint_a(stack)
    body = "> /approve A\n\n```\n/approve A\n```\nLooks odd to me."
    await stack.fake.comment(REPO, story.pr_number(), body, user=MAINTAINER)
    await stack.settle()
    assert (await stack.quest(story.quest_id)).state is State.HYPOTHESISED


async def test_a_redelivered_delivery_is_absorbed(stack: Stack) -> None:
    story = await at_checkpoint_a(stack)
    first = stack.fake.deliveries[0]
    again = await send(stack.fake.webhook_url or "", first.delivery)
    assert again.status in (200, 202) and "duplicate" in again.body
    await stack.settle()
    assert [q.id for q in await stack.quests(REPO)] == [story.quest_id]
    # and below the web's dedupe, the journal absorbs the same delivery handled twice
    payload = json.loads(first.delivery.body)
    outcome = await stack.runtime.worker.intake.handle("check_run", payload,
                                                       first.delivery.id)
    assert all(a.duplicate for a in outcome.applied)


async def test_a_stale_approval_after_a_push_is_refused(stack: Stack) -> None:
    story = await at_checkpoint_a(stack)
    await story.approve("A", State.PLANNED)
    await story.approve("B", State.READY)
    before = await stack.quest(story.quest_id)
    await stack.fake.push(REPO, f"quest/{story.quest_id}", {"NOTES.md": "a person's note\n"},
                          user="carol")
    await stack.settle()
    moved = await stack.quest(story.quest_id)
    assert moved.revision == before.revision + 1 and moved.head != before.head
    # the proof of the person's head runs and the quest is back at C, at revision 2;
    # an /approve written against the old head (the button on it) is refused as stale
    assert moved.state is State.READY
    run = next(r for r in stack.fake.repo(REPO).check_runs.values()
               if r.name == "questbot" and r.head_sha == before.head)
    await stack.fake.deliver(stack.fake.repo(REPO), "check_run", "requested_action.payload.json",
                             {"check_run": {"id": run.id, "external_id": story.quest_id,
                                            "head_sha": before.head, "pull_requests": [
                                                {"number": story.pr_number()}]},
                              "requested_action": {"identifier": "approve"}},
                             sender=MAINTAINER)
    await stack.settle()
    assert (await stack.quest(story.quest_id)).state is State.READY
    assert any("stale" in r for r in replies(stack, story.pr_number()))


async def test_the_merge_passes_the_approved_sha_and_a_regression_while_watching_rolls_back(
        stack: Stack) -> None:
    story = await at_checkpoint_a(stack)
    await story.approve("A", State.PLANNED)
    await story.approve("B", State.READY)
    quest = await story.approve("C", State.WATCHING)
    (merge,) = stack.calls("pulls/merge")
    assert merge.json["sha"] == quest.head
    main = str(stack.fake.repo(REPO).branch_sha("main"))
    await stack.fake.fail_check(REPO, main, name="tests")
    await stack.settle()  # one failure is a suspect: another App's check, waiting for its re-run
    watched = await stack.quest(story.quest_id)
    assert watched.state is State.WATCHING and len(watched.suspects) == 1
    await stack.fake.fail_check(REPO, main, name="tests")  # the CI ran it again: red again
    quest = await story.step("tests failed while watching", State.HYPOTHESISED, 2)
    revert = [p for p in stack.fake.repo(REPO).pulls.values() if "-revert-" in p.head_ref]
    assert len(revert) == 1 and revert[0].merged
    pager = stack.fake.repo(REPO).git.read(stack.fake.repo(REPO).branch_sha("main"), "pager.py")
    assert b"return total // per_page" in pager  # the fix was reverted on main


async def test_every_example_payload_is_accepted_and_handled(stack: Stack) -> None:
    for example in example_files():
        payload = example.load()
        result = await send(stack.fake.webhook_url or "", _delivery(example.event, payload))
        assert result.status < 500, (example.event, example.name, result.body)
    await stack.settle()  # the worker handles every stored delivery without crashing
    assert await stack.runtime.worker.inbound.backlog() == 0


def _delivery(event: str, payload: dict[str, object]) -> object:
    from questbot_testing.fakegithub import build_delivery
    from questbot_testing.stack import SECRET

    return build_delivery(event, payload, SECRET)


async def test_a_claim_holds_the_review_and_refuses_others(stack: Stack) -> None:
    story = await at_checkpoint_a(stack)
    number = story.pr_number()
    stack.fake.set_permission(REPO, "otto", "write")
    await stack.fake.comment(REPO, number, "/claim", user=MAINTAINER)
    await stack.settle()
    assert (await stack.quest(story.quest_id)).state is State.HANDED_OFF
    await stack.fake.comment(REPO, number, "/approve", user="otto")
    await stack.settle()
    assert (await stack.quest(story.quest_id)).state is State.HANDED_OFF
    assert any("@otto" in r and f"@{MAINTAINER} holds the review" in r
               for r in replies(stack, number))
    await stack.fake.comment(REPO, number, "/approve A", user=MAINTAINER)  # the owner decides
    await stack.settle()
    assert (await stack.quest(story.quest_id)).state is State.PLANNED


async def test_status_pause_resume_and_kill_by_comment(stack: Stack) -> None:
    story = await at_checkpoint_a(stack)
    number = story.pr_number()
    await stack.fake.comment(REPO, number, "/status", user=READER)  # anyone may ask
    await stack.settle()
    assert any("Checkpoint A is open" in r and "`/approve A`" in r for r in replies(stack, number))
    await stack.fake.comment(REPO, number, "/pause waiting for the release", user=MAINTAINER)
    await stack.settle()
    assert (await stack.quest(story.quest_id)).state is State.PARKED
    await stack.fake.comment(REPO, number, "/resume", user=MAINTAINER)
    await stack.settle()
    assert (await stack.quest(story.quest_id)).state is State.HYPOTHESISED
    await stack.fake.comment(REPO, number, "/kill not worth it", user=MAINTAINER)
    await stack.settle()
    quest = await stack.quest(story.quest_id)
    assert quest.state is State.ABANDONED
    (run,) = [r for r in stack.fake.repo(REPO).check_runs.values()
              if r.name == "questbot" and r.status == "completed" and r.head_sha == pr_head(stack,
                                                                                            number)]
    assert run.conclusion != "success"  # an abandoned quest never shows as a success


async def test_the_approve_button_acts_with_the_clickers_identity(stack: Stack) -> None:
    story = await at_checkpoint_a(stack)
    quest = await stack.quest(story.quest_id)
    run = next(r for r in stack.fake.repo(REPO).check_runs.values() if r.name == "questbot")
    payload = {"check_run": {"id": run.id, "external_id": story.quest_id, "head_sha": run.head_sha,
                             "pull_requests": [{"number": story.pr_number()}]},
               "requested_action": {"identifier": "approve"}}
    await stack.fake.deliver(stack.fake.repo(REPO), "check_run", "requested_action.payload.json",
                             payload, sender=READER)
    await stack.settle()
    assert (await stack.quest(story.quest_id)).state is State.HYPOTHESISED  # read-only: refused
    await stack.fake.deliver(stack.fake.repo(REPO), "check_run", "requested_action.payload.json",
                             payload, sender=MAINTAINER)
    await stack.settle()
    assert (await stack.quest(story.quest_id)).state is State.PLANNED
    assert quest.revision == 1


def pr_head(stack: Stack, number: int) -> str:
    return str(stack.fake.repo(REPO).pulls[number].head_sha)


async def test_a_labelled_issue_waits_for_a_person_who_starts_it_with_quest_fix(
        stack: Stack) -> None:
    await setup_repository(stack)
    issue = await stack.fake.open_issue(REPO, "the last page is missing", user=READER,
                                        labels=["questbot"])
    await stack.settle()
    (quest,) = await stack.quests(REPO)
    assert quest.state is State.TRIAGED and quest.awaiting_person  # issues: human by default
    inbox = [i for i in stack.fake.repo(REPO).issues.values() if i.title == "questbot inbox"]
    assert len(inbox) == 1 and f"#{issue.number} **" in (inbox[0].body or "")
    await stack.fake.comment(REPO, issue.number, "/quest fix", user=MAINTAINER)
    await stack.settle()
    quest = await stack.quest(quest.id)
    assert quest.state is State.HYPOTHESISED and quest.base is not None


async def test_a_command_handled_twice_is_reacted_to_and_answered_once(stack: Stack) -> None:
    story = await at_checkpoint_a(stack)
    number = story.pr_number()
    comment = await stack.fake.comment(REPO, number, "/approve", user=READER)
    await stack.settle()
    (sent,) = [d.delivery for d in stack.fake.deliveries if d.delivery.event == "issue_comment"
               and d.delivery.payload["comment"]["id"] == comment.id]
    for delivery_id in (sent.id, "redelivered-under-another-id"):
        again = await stack.runtime.worker.intake.handle("issue_comment", sent.payload,
                                                         delivery_id)
        assert again.replies == 0  # its reply is delivered already: nothing new is queued
    await stack.settle()
    (reply,) = replies(stack, number)
    assert f"questbot:reply={REPO.lower()}#{number}:0:reply_comment:comment-{comment.id}-1:0" \
        in reply
    assert stack.fake.repo(REPO).comments[comment.id].reactions == [("questbot[bot]", "eyes")]
    assert len(stack.calls("reactions/create-for-issue-comment")) == 1


async def test_a_reply_on_a_thread_without_a_quest_and_a_failed_reaction_are_only_logged(
        stack: Stack, caplog: pytest.LogCaptureFixture) -> None:
    await setup_repository(stack)
    issue = await stack.fake.open_issue(REPO, "a question", user=READER)
    comment = await stack.fake.comment(REPO, issue.number, "/status", user=READER)
    del stack.fake.repo(REPO).comments[comment.id]  # deleted before questbot could react
    with caplog.at_level(logging.WARNING, logger="bot.worker.process"):
        await stack.settle()
    (reply,) = replies(stack, issue.number)
    assert "There is no quest on this thread." in reply
    trail = f"{REPO.lower()}#{issue.number}"
    (failure,) = await failures(stack.runtime.redis, trail)
    assert failure.effect_type == "react" and "comment may have been deleted" in failure.error
    assert any("which is no quest" in r.getMessage() for r in caplog.records)
    assert await stack.quests(REPO) == []  # the failure made no quest of the thread
    assert (await stack.runtime.worker.journal.snapshot(trail))[1] is None
