"""A transition's view edits go to GitHub as one GraphQL request (issue 24, item 8).

The check run (the old head's finished as superseded, the new head's made), the pull request's
title and description, the status comment and the inbox's entry: one document of mutations,
which GitHub runs one after the other and charges as one write (``bot.github.forge.batch``).
What GitHub shows afterwards is what the REST path writes, each write is recorded only from
GitHub's answer, and a mutation GitHub refuses leaves its view to the REST path — the rest of
the batch still recorded. Counted on the fake, which is GitHub's record.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.core import Quest
from bot.github.forge import CHECK_NAME
from bot.github.forge.batch import MutationBatch, check_run_input, edit_comment, edit_issue
from bot.github.forge.graphql import GraphQLRefused
from bot.journal.keys import quest_gh_key
from questbot_testing.fakegithub.graphql_resolvers import _rest_check_body
from questbot_testing.fakegithub.state import CheckRun, Comment
from questbot_testing.journals import JournalBuilder
from tests.github.conftest import REPO, World
from tests.github.test_once_projection import proving as proving_recorded


async def proving(world: World, quest_id: str = "q-1") -> JournalBuilder:
    """A quest proving its first patch: its pull request, comment and run are made by REST."""
    b = await proving_recorded(world, quest_id)
    await world.effects.sync(await world.ctx.quest(quest_id))
    return b


async def new_head(world: World, b: JournalBuilder, content: str) -> str:
    head = await world.push_quest(content=content)
    b.add("human_revision", head=head, pusher="alice")
    await world.ctx.journal.apply(b.events[-1], b.policy)
    return head


def runs(world: World) -> list[CheckRun]:
    return sorted((r for r in world.fake.repo(REPO).check_runs.values()
                   if r.name == CHECK_NAME and r.external_id == "q-1"), key=lambda r: r.id)


def statuses(world: World) -> list[Comment]:
    return [c for c in world.fake.repo(REPO).comments.values()
            if "questbot:status quest=q-1" in c.body]


def writes(world: World, since: int) -> list[str]:
    return [c.operation_id for c in world.fake.calls()[since:]
            if c.method != "GET" and c.status < 300]


async def test_a_new_head_is_shown_by_one_request_recorded_from_githubs_answer(
        world: World) -> None:
    b = await proving(world)
    (first,) = runs(world)
    (comment,) = statuses(world)
    before = len(world.fake.calls())
    head = await new_head(world, b, "x = 3\n")
    await world.effects.sync(await world.ctx.quest("q-1"))
    assert writes(world, before) == [
        "graphql/updateCheckRun,createCheckRun,updatePullRequest,updateIssueComment"]
    assert [c.operation_id for c in world.fake.calls()[before:]
            if c.method == "GET"] == []  # nothing looked up: every record was whole
    old, new = runs(world)
    assert (old.id, old.status, old.conclusion) == (first.id, "completed", "neutral")
    assert (new.head_sha, new.status) == (head, "in_progress")
    memory = world.effects.memory
    assert await memory.quest_fields("q-1", "check_run", "check_node", "check_head",
                                     "check_url", "check_creating") == [
        str(new.id), f"CR_{new.id}", head, f"https://github.com/{REPO}/runs/{new.id}", None]
    # the comment as the REST path would write it, and its digest recorded
    quest = await world.ctx.quest("q-1")
    pr = await world.effects.projection.recorded_pull(quest)
    assert pr is not None
    body, digest = await world.effects.projection._status_text(quest, pr, pr, None)
    assert world.fake.repo(REPO).comments[comment.id].body == body
    assert await memory.quest("q-1", "status_digest") == digest
    # nothing owed: syncing again sends nothing
    again = len(world.fake.calls())
    await world.effects.sync(await world.ctx.quest("q-1"))
    assert writes(world, again) == []
    world.fake.assert_clean()


async def test_a_refused_edit_is_left_to_the_rest_path_and_the_rest_is_recorded(
        world: World) -> None:
    """A person deleted the status comment: its alias answers ``NOT_FOUND``, the check run's
    writes in the same request still happen and are recorded, and the REST path posts a new
    comment (after looking for one, as after any comment it cannot edit)."""
    b = await proving(world)
    (comment,) = statuses(world)
    del world.fake.repo(REPO).comments[comment.id]
    before = len(world.fake.calls())
    head = await new_head(world, b, "x = 3\n")
    await world.effects.sync(await world.ctx.quest("q-1"))
    assert writes(world, before) == [
        "graphql/updateCheckRun,createCheckRun,updatePullRequest,updateIssueComment",
        "issues/create-comment"]
    assert [c.status for c in world.fake.calls("issues/update-comment")][-1] == 404
    assert world.calls("issues/list-comments") == 1
    (posted,) = statuses(world)
    assert posted.id != comment.id
    assert await world.effects.memory.quest_int("q-1", "status_comment") == posted.id
    assert [(r.head_sha, r.status) for r in runs(world)][-1] == (head, "in_progress")
    assert len(runs(world)) == 2  # made once, in the batch; the REST path found it recorded
    world.fake.assert_clean()


async def test_a_batch_answers_each_mutation_by_its_alias(world: World) -> None:
    """GitHub's partial answer read per alias: ``null`` with an error whose ``path`` names it
    is that mutation's refusal; the others are their payloads (BEHAVIOUR §16)."""
    b = await proving(world)
    del b
    forge = await world.effects.forges.for_repo(REPO)
    memory = world.effects.memory
    node = await memory.quest("q-1", "status_node")
    assert node
    batch = MutationBatch(forge.graphql)
    batch.add(edit_issue("I_kwbogus", "x", "edit a missing issue"))
    batch.add(edit_comment(node, "new words", "edit the status comment"))
    answers = await batch.send()
    assert isinstance(answers[0], GraphQLRefused) and answers[0].kind == "NOT_FOUND"
    assert "edit a missing issue" in str(answers[0])
    payload: Any = answers[1]
    assert payload["issueComment"]["id"] == node
    assert [c.body for c in world.fake.repo(REPO).comments.values()
            if c.id == int(node.removeprefix("IC_"))] == ["new words"]


@pytest.mark.parametrize("field", ["check_node", "repo_node"])
async def test_a_record_without_global_ids_takes_the_rest_path(world: World,
                                                               field: str) -> None:
    """A quest recorded before questbot kept global ids: its check run is written by REST,
    as before, and the id is kept from that answer for the next time."""
    b = await proving(world)
    await world.redis.hdel(quest_gh_key("q-1"), field)
    before = len(world.fake.calls())
    await new_head(world, b, "x = 3\n")
    quest: Quest = await world.ctx.quest("q-1")
    await world.effects.sync(quest)
    done = writes(world, before)
    assert "checks/create" in done
    assert not any("createCheckRun" in w for w in done)
    assert len(runs(world)) == 2
    world.fake.assert_clean()


REST_STATUSES = ("queued", "in_progress", "completed")
CONCLUSIONS = ("success", "failure", "neutral", "action_required", "cancelled", "skipped")


@settings(max_examples=60, deadline=None)
@given(status=st.sampled_from(REST_STATUSES), conclusion=st.none() | st.sampled_from(CONCLUSIONS),
       text=st.text(max_size=80), details=st.none() | st.just("https://github.com/o/r/pull/1"),
       actions=st.lists(st.builds(lambda label: {"label": label, "description": "d",
                                                 "identifier": label.lower()},
                                  st.sampled_from(["Approve", "Revise", "Claim"])),
                        max_size=3))
def test_a_check_run_body_reads_the_same_as_graphql_input(
        status: str, conclusion: str | None, text: str, details: str | None,
        actions: list[dict[str, str]]) -> None:
    """The REST body questbot renders a run into, as ``CreateCheckRunInput`` and read back as
    the fake's REST handler takes it, is the body it was: the same run either way."""
    body: dict[str, Any] = {"name": CHECK_NAME, "head_sha": "a" * 40, "external_id": "q-1",
                            "status": status, "output": {"title": "t", "summary": "s",
                                                         "text": text}, "actions": actions}
    if conclusion is not None:
        body["conclusion"] = conclusion
    if details is not None:
        body["details_url"] = details
    created = check_run_input("R_1", body)
    assert created["status"] == status.upper() and "checkRunId" not in created
    assert _rest_check_body(created) == body
    updated = check_run_input("R_1", body, run_id="CR_9")
    assert updated["checkRunId"] == "CR_9" and "headSha" not in updated
    assert _rest_check_body(updated) == {k: v for k, v in body.items() if k != "head_sha"}
