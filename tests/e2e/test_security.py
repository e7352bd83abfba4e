"""Who may steer a quest, end to end: permission levels, bots and accounts pretending to be one,
edited and deleted comments, forged and replayed deliveries, and a push after approval.

Each test drives the real web process and worker on the fake GitHub, whose permission endpoint
answers as GitHub's does for each role (``questbot_testing.fakegithub.collaborators``). "Nothing
changes" means what a maintainer would check: the quest's journal did not grow, and questbot wrote
nothing to GitHub but its reaction and, where it refused, one reply in people's words. Every
log line of these tests is also checked for credentials (``tests/e2e/conftest.py``).
"""

from __future__ import annotations

import json
import logging
import re
import uuid
from dataclasses import dataclass

import pytest

from bot.core import State
from questbot_testing.fakegithub import build_delivery, send, signature_headers
from questbot_testing.fakegithub.calls import Call, Reply
from questbot_testing.fakegithub.comments import comment_by, delete_comment, edit_comment
from questbot_testing.fakegithub.server import HANDLERS
from questbot_testing.fakegithub.webhooks import Delivery, DeliveryResult
from questbot_testing.scenario import MAINTAINER, READER, REPO, Story
from questbot_testing.stack import SECRET, Stack
from tests.e2e.conftest import leaks
from tests.e2e.test_github_flows import at_checkpoint_a, replies

REFUSED = ("@{login} `{command}` was not applied: it needs write access to this repository, or "
           "being one of the reviewers in `.github/questbot.yml`. Ask a maintainer to run it, "
           "or to add you as a reviewer; `/status` shows where things stand.")


@dataclass
class Mark:
    """Where the world stood: the quest's journal version and GitHub's request log."""

    version: int
    requests: int


async def mark(stack: Stack, story: Story) -> Mark:
    version, _quest = await stack.runtime.worker.journal.snapshot(story.quest_id)
    return Mark(version, len(stack.fake.requests))


def writes_since(stack: Stack, since: Mark) -> list[str]:
    """The writes questbot made of GitHub since ``since`` (token requests aside)."""
    return sorted(str(e.operation_id) for e in stack.fake.requests[since.requests:]
                  if e.method != "GET" and not e.path.startswith("/app/"))


async def unchanged(stack: Stack, story: Story, since: Mark, state: State) -> None:
    version, quest = await stack.runtime.worker.journal.snapshot(story.quest_id)
    assert quest is not None and quest.state is state
    assert version == since.version, "the quest's journal grew"


REACTION = "reactions/create-for-issue-comment"
REPLY = "issues/create-comment"


# --- permission levels ----------------------------------------------------------------------


@pytest.mark.parametrize("level", ["none", "read", "triage"])
async def test_without_write_access_commands_are_refused_and_nothing_changes(
        stack: Stack, level: str) -> None:
    story = await at_checkpoint_a(stack)
    if level != "none":
        stack.fake.set_permission(REPO, "pat", level)
    before = await mark(stack, story)
    await stack.fake.comment(REPO, story.pr_number(), "/approve", user="pat")
    await stack.fake.comment(REPO, story.pr_number(), "/pause not now", user="pat")
    await stack.settle()
    await unchanged(stack, story, before, State.HYPOTHESISED)
    assert sorted(said(reply) for reply in replies(stack, story.pr_number())) == sorted(
        REFUSED.format(login="pat", command=command)
        for command in ("/approve", "/pause not now"))
    assert writes_since(stack, before) == [REPLY, REPLY, REACTION, REACTION]


def said(reply: str) -> str:
    """What a reply says to people, without questbot's hidden marker."""
    return re.sub(r"\s*<!-- questbot:[^>]*-->\s*$", "", reply)


@pytest.mark.parametrize("level", ["write", "maintain", "admin"])
async def test_with_write_access_or_above_commands_act(stack: Stack, level: str) -> None:
    story = await at_checkpoint_a(stack)
    stack.fake.set_permission(REPO, "pat", level)
    await stack.fake.comment(REPO, story.pr_number(), "/approve", user="pat")
    await story.step("pat approved A", State.PLANNED)
    await stack.fake.comment(REPO, story.pr_number(), "/pause a release first", user="pat")
    await story.step("pat paused the quest", State.PARKED)
    assert not replies(stack, story.pr_number())


async def test_a_configured_reviewer_acts_without_write_access(stack: Stack) -> None:
    story = await at_checkpoint_a(stack)
    stack.fake.set_permission(REPO, MAINTAINER, "read")  # still in `reviewers: [maya]`
    await story.approve("A", State.PLANNED)
    assert not replies(stack, story.pr_number())


# --- bots, and accounts that pretend to be one ----------------------------------------------------


async def test_a_bots_commands_are_ignored(stack: Stack) -> None:
    story = await at_checkpoint_a(stack)
    stack.fake.set_permission(REPO, "dependabot[bot]", "write")
    before = await mark(stack, story)
    await stack.fake.comment(REPO, story.pr_number(), "/approve", user="dependabot[bot]")
    await stack.settle()
    await unchanged(stack, story, before, State.HYPOTHESISED)
    assert writes_since(stack, before) == []  # not even a reaction: no conversation with bots


async def test_a_user_whose_login_ends_in_bot_is_a_person_not_questbot(stack: Stack) -> None:
    story = await at_checkpoint_a(stack)
    before = await mark(stack, story)
    await comment_by(stack.fake, REPO, story.pr_number(), "/approve", user="questbot[bot]",
                     user_type="User")
    await stack.settle()
    await unchanged(stack, story, before, State.HYPOTHESISED)
    (reply,) = replies(stack, story.pr_number())
    assert reply.startswith(REFUSED.format(login="questbot[bot]", command="/approve"))
    stack.fake.set_permission(REPO, "helper[bot]", "write")  # a person, with write access
    await comment_by(stack.fake, REPO, story.pr_number(), "/approve", user="helper[bot]",
                     user_type="User")
    await story.step("a person called helper[bot] approved A", State.PLANNED)


async def test_a_push_by_a_user_pretending_to_be_questbot_is_a_persons_revision(
        stack: Stack) -> None:
    story = await at_checkpoint_a(stack)
    await story.approve("A", State.PLANNED)
    await story.approve("B", State.READY)
    before = await stack.quest(story.quest_id)
    recorded = await _silently(stack, stack.fake.push(
        REPO, f"quest/{story.quest_id}", {"NOTES.md": "not questbot's\n"}, user="questbot[bot]"))
    for result in recorded:  # GitHub would call the account a User: it is one
        payload = json.loads(result.delivery.body)
        payload["sender"]["type"] = "User"
        await send(stack.fake.webhook_url or "", build_delivery(result.delivery.event, payload,
                                                                SECRET))
    await stack.settle()
    moved = await stack.quest(story.quest_id)
    assert moved.revision == before.revision + 1 and moved.head != before.head
    assert moved.state is State.READY  # proved again at the person's head, asked at C again


async def _silently(stack: Stack, action: object) -> list[DeliveryResult]:
    """Run a fake action with its webhooks recorded but not sent; return them."""
    url, stack.fake.webhook_url = stack.fake.webhook_url, None
    count = len(stack.fake.deliveries)
    try:
        await action  # type: ignore[misc]
    finally:
        stack.fake.webhook_url = url
    return stack.fake.deliveries[count:]


# --- edited and deleted comments ----------------------------------------------------------------


async def test_a_command_added_by_an_edit_acts_once(stack: Stack) -> None:
    story = await at_checkpoint_a(stack)
    comment = await stack.fake.comment(REPO, story.pr_number(), "Looks right to me.",
                                       user=MAINTAINER)
    await stack.settle()
    await edit_comment(stack.fake, REPO, comment.id, "Looks right to me.\n\n/approve")
    await story.step("maya added /approve to her comment", State.PLANNED)
    before = await mark(stack, story)
    await edit_comment(stack.fake, REPO, comment.id, "Looks right to me!\n\n/approve")
    await stack.settle()
    await unchanged(stack, story, before, State.PLANNED)  # not read again as approving B
    assert writes_since(stack, before) == []


async def test_editing_a_comment_that_acted_does_not_act_again(stack: Stack) -> None:
    story = await at_checkpoint_a(stack)
    comment = await stack.fake.comment(REPO, story.pr_number(), "/approve", user=MAINTAINER)
    await story.step("maya approved A", State.PLANNED)
    before = await mark(stack, story)
    await edit_comment(stack.fake, REPO, comment.id, "/approve\n\nthanks for the test")
    await edit_comment(stack.fake, REPO, comment.id, "Thanks for the test.\n/approve")
    await stack.settle()
    await unchanged(stack, story, before, State.PLANNED)
    assert writes_since(stack, before) == []


async def test_an_edit_acts_as_the_person_who_edited(stack: Stack) -> None:
    story = await at_checkpoint_a(stack)
    comment = await stack.fake.comment(REPO, story.pr_number(), "Is this right?", user=READER)
    await stack.settle()
    before = await mark(stack, story)
    await edit_comment(stack.fake, REPO, comment.id, "Is this right?\n/approve", user=READER)
    await stack.settle()
    await unchanged(stack, story, before, State.HYPOTHESISED)  # rex may not approve
    assert any(r.startswith(REFUSED.format(login=READER, command="/approve"))
               for r in replies(stack, story.pr_number()))
    await edit_comment(stack.fake, REPO, comment.id, "Is this right? Yes.\n/approve A",
                       user=MAINTAINER)  # maya edits rex's comment: maya decides
    await story.step("maya edited rex's comment to approve A", State.PLANNED)
    decided = [e for e in await stack.runtime.worker.journal.events(story.quest_id)
               if e.type == "checkpoint_decided"]
    assert [e.actor for e in decided] == [MAINTAINER]


async def test_an_edit_that_replaces_a_command_acts_on_the_new_one(stack: Stack) -> None:
    story = await at_checkpoint_a(stack)
    comment = await stack.fake.comment(REPO, story.pr_number(), "/claim", user=MAINTAINER)
    await story.step("maya claimed the review", State.HANDED_OFF)
    await edit_comment(stack.fake, REPO, comment.id, "/approve A")
    await story.step("maya changed her comment to approve A", State.PLANNED)


async def test_deleting_a_comment_that_acted_changes_nothing(stack: Stack) -> None:
    story = await at_checkpoint_a(stack)
    comment = await stack.fake.comment(REPO, story.pr_number(), "/approve", user=MAINTAINER)
    await story.step("maya approved A", State.PLANNED)
    before = await mark(stack, story)
    await delete_comment(stack.fake, REPO, comment.id)
    await stack.settle()
    await unchanged(stack, story, before, State.PLANNED)  # a decision stands once made
    assert writes_since(stack, before) == []


async def test_a_command_deleted_before_questbot_reads_it_still_counts(stack: Stack) -> None:
    """Deleting undoes nothing, whenever it happens: whether a command acts must not depend
    on how far behind the worker was. Only the reaction, on a comment that is gone, fails."""
    story = await at_checkpoint_a(stack)
    comment = await stack.fake.comment(REPO, story.pr_number(), "/approve", user=MAINTAINER)
    await delete_comment(stack.fake, REPO, comment.id)  # before the worker got to it
    await story.step("maya approved A and deleted her comment at once", State.PLANNED)
    assert await stack.runtime.worker.inbound.backlog() == 0
    assert await stack.runtime.worker.inbound.dead_letters() == 0
    assert not replies(stack, story.pr_number())


# --- forged and replayed deliveries -----------------------------------------------------------


async def _recorded_comment(stack: Stack, story: Story, body: str, user: str) -> Delivery:
    (result,) = [r for r in await _silently(
        stack, stack.fake.comment(REPO, story.pr_number(), body, user=user))]
    return result.delivery


async def test_a_forged_delivery_is_refused_and_nothing_is_stored(stack: Stack) -> None:
    story = await at_checkpoint_a(stack)
    genuine = await _recorded_comment(stack, story, "/approve", MAINTAINER)
    before = await mark(stack, story)
    url = stack.fake.webhook_url or ""
    forged = {
        "another secret": {**genuine.headers, **signature_headers(genuine.body, "guessed")},
        "no signature": {k: v for k, v in genuine.headers.items() if "Signature" not in k},
        "a changed body": genuine.headers,
    }
    for name, headers in forged.items():
        body = genuine.body.replace(b"/approve", b"/reject no") if name == "a changed body" \
            else genuine.body
        result = await send(url, Delivery(genuine.event, genuine.id, {}, body, headers))
        assert result.status == 401, (name, result.body)
    assert await stack.runtime.worker.inbound.backlog() == 0  # nothing stored
    await stack.settle()
    await unchanged(stack, story, before, State.HYPOTHESISED)
    assert writes_since(stack, before) == []
    assert (await send(url, genuine)).status == 202  # the genuine one, later, is still fine


async def test_a_redelivery_is_acknowledged_once_and_acted_on_once(stack: Stack) -> None:
    story = await at_checkpoint_a(stack)
    await story.approve("A", State.PLANNED)
    delivery = stack.fake.deliveries[-1].delivery
    before = await mark(stack, story)
    again = await send(stack.fake.webhook_url or "", delivery)
    assert again.status == 200 and json.loads(again.body)["status"] == "duplicate"
    await stack.settle()
    await unchanged(stack, story, before, State.PLANNED)  # not read again as approving B
    assert writes_since(stack, before) == []


async def test_the_same_body_under_a_new_delivery_id_acts_once(stack: Stack) -> None:
    """A signature covers the body, not the headers: a captured delivery can be sent again
    with a fresh id, and GitHub itself redelivers with the same one. The web process cannot
    tell, so the worker must: a comment's command is the comment's, whichever delivery
    carried it."""
    story = await at_checkpoint_a(stack)
    await story.approve("A", State.PLANNED)
    delivery = stack.fake.deliveries[-1].delivery
    before = await mark(stack, story)
    replay = {**delivery.headers, "X-GitHub-Delivery": str(uuid.uuid4())}
    result = await send(stack.fake.webhook_url or "", Delivery(
        delivery.event, replay["X-GitHub-Delivery"], {}, delivery.body, replay))
    assert result.status == 202
    await stack.settle()
    await unchanged(stack, story, before, State.PLANNED)
    comment = max(stack.fake.repo(REPO).comments.values(), key=lambda c: c.id
                  if c.user == MAINTAINER else 0)
    assert comment.reactions == [("questbot[bot]", "eyes")]  # GitHub keeps one reaction
    assert set(writes_since(stack, before)) <= {REACTION}


async def test_a_refused_command_under_a_new_delivery_id_is_answered_once(
        stack: Stack) -> None:
    story = await at_checkpoint_a(stack)
    await stack.fake.comment(REPO, story.pr_number(), "/approve", user=READER)
    await stack.settle()
    delivery = stack.fake.deliveries[-1].delivery
    replay = {**delivery.headers, "X-GitHub-Delivery": str(uuid.uuid4())}
    await send(stack.fake.webhook_url or "", Delivery(
        delivery.event, replay["X-GitHub-Delivery"], {}, delivery.body, replay))
    await stack.settle()
    assert len(replies(stack, story.pr_number())) == 1


async def test_a_failure_under_a_new_delivery_id_does_not_open_a_second_pull_request(
        stack: Stack) -> None:
    story = await at_checkpoint_a(stack)
    failure = next(r.delivery for r in stack.fake.deliveries if r.delivery.event == "check_run")
    replay = {**failure.headers, "X-GitHub-Delivery": str(uuid.uuid4())}
    await send(stack.fake.webhook_url or "", Delivery(
        failure.event, replay["X-GitHub-Delivery"], {}, failure.body, replay))
    await stack.settle()
    assert [p.head_ref for p in stack.fake.repo(REPO).pulls.values()] == [
        f"quest/{story.quest_id}"]
    assert (await stack.quest(story.quest_id)).state is State.HYPOTHESISED


# --- a push after the approval at C --------------------------------------------------------


async def _approved_at_c(stack: Stack) -> tuple[Story, str, str]:
    """A quest whose C was just approved by comment (not yet handled): story, head, main."""
    story = await at_checkpoint_a(stack)
    await story.approve("A", State.PLANNED)
    await story.approve("B", State.READY)
    approved = await stack.quest(story.quest_id)
    await stack.fake.comment(REPO, story.pr_number(), "/approve C", user=MAINTAINER)
    return story, str(approved.head), str(stack.fake.repo(REPO).branch_sha("main"))


def _person_pushes(stack: Stack, story: Story) -> object:
    return stack.fake.push(REPO, f"quest/{story.quest_id}",
                           {"NOTES.md": "not what was approved\n"}, user="carol")


async def _not_landed(stack: Stack, story: Story, approved: str, main: str,
                      late: list[DeliveryResult], *, recover: bool = True) -> None:
    assert all(m.json["sha"] == approved for m in stack.calls("pulls/merge"))
    assert not stack.fake.repo(REPO).pulls[story.pr_number()].merged
    assert stack.fake.repo(REPO).branch_sha("main") == main
    waiting = await stack.quest(story.quest_id)
    assert waiting.state is State.LANDING and waiting.head == approved  # waits for the push
    if not recover:
        return
    for result in late:  # the push's webhooks arrive: the person's head is a new revision
        await send(stack.fake.webhook_url or "", result.delivery)
    await stack.settle()
    quest = await stack.quest(story.quest_id)
    assert quest.head != approved and quest.revision == waiting.revision + 1
    assert quest.state is State.READY  # the person's head proved, and C asked again
    assert stack.fake.repo(REPO).branch_sha("main") == main


async def test_a_push_after_approval_at_c_is_not_merged(stack: Stack) -> None:
    story, approved, main = await _approved_at_c(stack)
    # the push reaches GitHub right after the approval; its webhook comes after questbot acted
    late = await _silently(stack, _person_pushes(stack, story))
    await stack.settle()
    await _not_landed(stack, story, approved, main, late)


async def test_a_push_racing_the_merge_is_refused_by_github_for_the_pinned_sha(
        stack: Stack, monkeypatch: pytest.MonkeyPatch) -> None:
    story, approved, main = await _approved_at_c(stack)
    late: list[DeliveryResult] = []
    merge = HANDLERS["pulls/merge"]

    async def push_first(call: Call) -> Reply:  # the push lands between questbot's last
        late.extend(await _silently(stack, _person_pushes(stack, story)))  # look and its merge
        return await merge(call)

    monkeypatch.setitem(HANDLERS, "pulls/merge", push_first)
    await stack.settle()
    (refused,) = stack.calls("pulls/merge")
    assert refused.json["sha"] == approved and refused.status == 409
    await _not_landed(stack, story, approved, main, late, recover=False)  # as above from here


# --- the log guard itself ---------------------------------------------------------------------


async def test_the_log_guard_reads_every_logger_and_knows_a_credential(
        no_secrets_in_logs: list[str]) -> None:
    logging.getLogger("somebody.else").debug("a quiet line with %s", "an argument",
                                             extra={"field": "a value"})
    (line,) = [line for line in no_secrets_in_logs if line.startswith("somebody.else")]
    assert "an argument" in line and "a value" in line
    secrets = {"the webhook secret": SECRET}
    assert leaks(f"x {SECRET} y", secrets) == ["the webhook secret"]
    assert leaks("token ghs_" + "a" * 36, secrets) == ["a credential: ghs_aaaaaaaa…"]
    assert leaks("a JWT eyJhbGciOiJSUzI1NiJ9.eyJpc3MiOiI0MiJ9.c2ln", secrets)
    assert leaks("nothing to see", secrets) == []
