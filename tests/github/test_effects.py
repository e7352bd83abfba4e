"""Each adapter against the fake GitHub: happy path, run twice, and the world moving under it."""

from __future__ import annotations

import pytest

from bot.commands import replies as conversation
from bot.core import EffectType, State
from bot.core.events import Landed, PatchPushed, RollbackConfirmed
from bot.github.forge import Forge
from bot.journal import PermanentError
from bot.journal.keys import quest_gh_key
from bot.words.inbox_marks import entry_marker
from questbot_testing.journals import JournalBuilder
from tests.github.conftest import REPO, World, last


def facts(events: object) -> list[dict[str, object]]:
    """Events without their ``at``: a redelivery reports the same outcome at a later time."""
    return [e.model_dump(exclude={"at"}) for e in events or ()]  # type: ignore[attr-defined]


async def ready(world: World, quest_id: str = "q-1") -> JournalBuilder:
    head = await world.push_quest(quest_id)
    b = JournalBuilder(quest_id, repo=REPO).sense(base=world.main_sha).to_ready(head=head)
    await world.record(b)
    return b


async def test_checkpoint_opens_pr_check_run_comment_and_asks_reviewers(world: World) -> None:
    b = await ready(world)
    effect = last(b, EffectType.REQUEST_CHECKPOINT)
    assert effect.payload["checkpoint"] == "C"
    for _ in range(2):  # a redelivery writes nothing new
        assert await world.effects.request_checkpoint(effect) is None
    repo = world.fake.repo(REPO)
    assert world.calls("pulls/create") == 1
    (pr,) = repo.pulls.values()
    assert world.fake.calls("pulls/create")[0].json["draft"] is True  # a draft until C
    assert not pr.draft and pr.head_ref == "quest/q-1"  # at C it is ready for review, once
    assert world.calls("graphql/markPullRequestReadyForReview") == 1
    assert sorted(pr.requested_reviewers) == ["alice", "octo"]
    assert world.calls("pulls/request-reviewers") == 1
    assert world.calls("pulls/get") == 0, "marking it ready reads nothing: its id is recorded"
    (run,) = [r for r in repo.check_runs.values() if r.name == "questbot"]
    assert (run.conclusion, run.external_id, run.head_sha) == ("action_required", "q-1",
                                                                pr.head_sha)
    assert [a["identifier"] for a in run.actions] == ["approve", "revise", "reject"]
    assert all(len(str(a["label"])) <= 20 and len(str(a["description"])) <= 40
               for a in run.actions)
    assert world.calls("checks/create") == 1
    (comment,) = repo.comments.values()
    assert "**State:** ready" in comment.body and "/approve C" in comment.body


async def test_status_comment_is_edited_in_place_and_unchanged_content_is_skipped(
        world: World) -> None:
    head = await world.push_quest()
    b = JournalBuilder("q-1", repo=REPO).sense(base=world.main_sha)
    await world.record(b)
    await world.effects.sync(b.quest)  # type: ignore[arg-type]
    for step in ("hypothesis", "approve"):
        if step == "hypothesis":
            b.add("hypothesis_written", summary="off by one")
        else:
            b.decide("A")
        await world.ctx.journal.apply(b.events[-1], b.policy)
        await world.effects.sync(await world.ctx.quest("q-1"))
    before = len(world.fake.requests)
    await world.effects.sync(await world.ctx.quest("q-1"))
    assert len(world.fake.requests) == before  # nothing changed: no request at all
    assert world.calls("issues/create-comment") == 1
    edits = world.calls("issues/update-comment") + sum(  # by REST, or in the view's batch
        c.operation_id.removeprefix("graphql/").split(",").count("updateIssueComment")
        for c in world.fake.calls() if c.operation_id.startswith("graphql/") and c.status < 300)
    assert edits >= 2
    (comment,) = world.fake.repo(REPO).comments.values()
    assert "**State:** reproducing" in comment.body
    assert head


async def land_ready(world: World) -> JournalBuilder:
    b = await ready(world)
    await world.effects.request_checkpoint(last(b, EffectType.REQUEST_CHECKPOINT))
    b.decide("C")
    await world.ctx.journal.apply(b.events[-1], b.policy)
    return b


async def test_land_merges_exactly_the_approved_head_once(world: World) -> None:
    b = await land_ready(world)
    effect = last(b, EffectType.LAND)
    first = await world.effects.land(effect)
    again = await world.effects.land(effect)
    assert facts(first) == facts(again) and first is not None
    (landed,) = first
    assert isinstance(landed, Landed)
    (merge,) = world.fake.calls("pulls/merge")
    assert merge.json["sha"] == effect.payload["head"]
    assert landed.merge_sha == world.main_sha
    applied = await world.ctx.journal.apply(landed, b.policy)
    assert applied.quest.state is State.WATCHING


async def test_land_does_not_merge_a_moved_head(world: World) -> None:
    b = await land_ready(world)
    await world.push_quest(content="x = 3\n")  # a person pushed after the approval
    assert await world.effects.land(last(b, EffectType.LAND)) is None
    assert world.fake.calls("pulls/merge") == []
    key = last(b, EffectType.LAND).key
    assert "head" in (await world.effects.memory.quest("q-1", f"note:{key}") or "")


async def test_land_409_reports_nothing(world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    b = await land_ready(world)
    real_pull = Forge.pull
    moved = {"done": False}

    async def pull_then_move(self: Forge, number: int):  # type: ignore[no-untyped-def]
        pull = await real_pull(self, number)
        if not moved["done"]:
            moved["done"] = True
            await world.push_quest(content="x = 4\n")  # the head moves after our read
        return pull

    monkeypatch.setattr(Forge, "pull", pull_then_move)
    assert await world.effects.land(last(b, EffectType.LAND)) is None
    (merge,) = world.fake.calls("pulls/merge")
    assert merge.status == 409


async def test_land_of_a_pr_a_person_made_a_draft_again_is_a_permanent_error_saying_what_to_do(
        world: World) -> None:
    b = await ready(world)
    await world.effects.request_checkpoint(last(b, EffectType.REQUEST_CHECKPOINT))
    b.decide("C")
    await world.ctx.journal.apply(b.events[-1], b.policy)
    for pr in world.fake.repo(REPO).pulls.values():
        pr.draft = True  # a person clicked "Convert to draft" after questbot marked it ready
    with pytest.raises(PermanentError, match="ready for review"):
        await world.effects.land(last(b, EffectType.LAND))
    assert world.fake.calls("pulls/merge") == []


async def test_land_marks_a_draft_questbot_opened_ready_before_merging(world: World) -> None:
    b = await ready(world)
    forge = await world.effects.forges.for_repo(REPO)
    await world.effects.projection.ensure_pull(b.quest, forge)  # type: ignore[arg-type]
    (pr,) = world.fake.repo(REPO).pulls.values()
    assert pr.draft  # opened as a draft; C was decided before anything marked it ready
    b.decide("C")
    await world.ctx.journal.apply(b.events[-1], b.policy)
    (landed,) = await world.effects.land(last(b, EffectType.LAND)) or ()
    assert isinstance(landed, Landed) and pr.merged and not pr.draft
    assert world.calls("graphql/markPullRequestReadyForReview") == 1


async def test_rebase_updates_the_branch_and_reports_the_new_head(world: World) -> None:
    b = await ready(world)
    await world.effects.request_checkpoint(last(b, EffectType.REQUEST_CHECKPOINT))
    moved = await world.fake.push(REPO, "main", {"README.md": "new\n"}, user="octo")
    b.add("base_moved", base=moved.sha)
    await world.ctx.journal.apply(b.events[-1], b.policy)
    effect = last(b, EffectType.REBASE)
    events = await world.effects.rebase(effect)
    assert facts(events) == facts(await world.effects.rebase(effect))
    assert world.calls("pulls/update-branch") == 1
    (pushed,) = events or ()
    assert isinstance(pushed, PatchPushed) and pushed.pusher == "questbot[bot]"
    assert pushed.head == world.fake.repo(REPO).refs["refs/heads/quest/q-1"]
    applied = await world.ctx.journal.apply(pushed, b.policy)
    assert applied.quest.state is State.PROVING


async def test_a_rebase_with_nothing_new_to_bring_in_reports_the_head_it_has(
        world: World) -> None:
    b = await ready(world)
    await world.effects.request_checkpoint(last(b, EffectType.REQUEST_CHECKPOINT))
    repo = world.fake.repo(REPO)
    before = repo.refs["refs/heads/main"]
    moved = await world.fake.push(REPO, "main", {"README.md": "new\n"}, user="octo")
    b.add("base_moved", base=moved.sha)
    await world.ctx.journal.apply(b.events[-1], b.policy)
    repo.refs["refs/heads/main"] = before  # the push was taken back: nothing new to bring in
    effect = last(b, EffectType.REBASE)
    (pushed,) = await world.effects.rebase(effect) or ()
    assert [c.status for c in world.fake.calls("pulls/update-branch")] == [422]
    assert isinstance(pushed, PatchPushed) and pushed.head == effect.payload["head"]


async def test_rollback_opens_and_merges_a_revert(world: World) -> None:
    b = await land_ready(world)
    repo = world.fake.repo(REPO)
    before = repo.git.files(world.main_sha)
    (landed,) = await world.effects.land(last(b, EffectType.LAND)) or ()
    assert isinstance(landed, Landed)
    b.add("landed", merge_sha=landed.merge_sha)
    b.add("regression_detected", source="check_run:9")
    for event in b.events[-2:]:
        await world.ctx.journal.apply(event, b.policy)
    effect = last(b, EffectType.ROLLBACK)
    events = await world.effects.reverter.rollback(effect)
    assert facts(events) == facts(await world.effects.reverter.rollback(effect))
    (confirmed,) = events or ()
    assert isinstance(confirmed, RollbackConfirmed)
    assert repo.git.files(world.main_sha) == before
    assert "quest/q-1-revert-1" in {p.head_ref for p in repo.pulls.values()}
    applied = await world.ctx.journal.apply(confirmed, b.policy)
    assert applied.quest.state is State.RESEARCHING


async def test_notify_inbox_opens_one_issue_and_lists_the_quest(world: World) -> None:
    b = JournalBuilder("q-9", repo=REPO).sense(route="human", base=world.main_sha)
    await world.record(b)
    effect = last(b, EffectType.NOTIFY_INBOX)
    await world.effects.notify_inbox(effect)
    await world.effects.notify_inbox(effect)
    assert world.calls("issues/create") == 1
    assert world.calls("issues/update") == 0
    (issue,) = world.fake.repo(REPO).issues.values()
    assert issue.title == "questbot inbox"
    assert entry_marker("q-9") in (issue.body or "") and "/quest fix" in (issue.body or "")


async def test_reply_comment_once_on_the_source_issue_before_a_pr(world: World) -> None:
    b = await ready(world)
    b.add("claimed", actor="alice")
    await world.ctx.journal.apply(b.events[-1], b.policy)
    effect = last(b, EffectType.REPLY_COMMENT)
    with pytest.raises(PermanentError, match="no pull request or source issue"):
        await world.effects.reply_comment(effect)
    issue = await world.fake.open_issue(REPO, "tests fail", user="alice")
    await world.effects.memory.remember_source_issue("q-1", issue.number)
    await world.effects.reply_comment(effect)
    await world.effects.reply_comment(effect)
    (comment,) = world.fake.repo(REPO).comments.values()
    assert comment.issue_number == issue.number
    assert comment.body.count("@alice ") == 1 and f"key={effect.key}" in comment.body


async def test_a_conversation_reply_is_posted_once_even_when_its_record_is_lost(
        world: World) -> None:
    issue = await world.fake.open_issue(REPO, "tests fail", user="alice")
    repo = world.fake.repo(REPO)
    for n in range(120):  # more than one page of comments before the reply
        world.fake.add_comment(repo, repo.issues[issue.number], f"comment {n}", "alice")
    effect = conversation.reply(REPO, issue.number, "comment-7-1", "@alice `/approve` refused")
    await world.effects.reply_comment(effect)
    (reply,) = [c for c in repo.comments.values() if "questbot:reply" in c.body]
    assert reply.body == f"@alice `/approve` refused\n\n<!-- questbot:reply={effect.key} -->"
    # a crash between the post and its record: Redis forgot it, the marker on GitHub did not
    await world.redis.delete(quest_gh_key(effect.quest_id))
    await world.effects.reply_comment(effect)
    assert world.calls("issues/create-comment") == 1
    assert len(repo.comments) == 121
    # two pages searched before the first post, two more to find the reply on the second
    assert len(world.fake.calls("issues/list-comments")) == 4


async def test_a_reaction_is_made_once(world: World) -> None:
    issue = await world.fake.open_issue(REPO, "tests fail", user="alice")
    comment = await world.fake.comment(REPO, issue.number, "/status", user="alice")
    effect = conversation.reaction(REPO, issue.number, comment.id)
    assert effect.type is EffectType.REACT and effect.quest_id == f"{REPO}#{issue.number}"
    for _ in range(2):
        assert await world.effects.react(effect) is None
    assert world.fake.repo(REPO).comments[comment.id].reactions == [("questbot[bot]", "eyes")]


@pytest.mark.parametrize("conflict", [False, True])
async def test_a_rebase_keeps_a_persons_commit_or_stops_and_says_how(world: World,
                                                                    conflict: bool) -> None:
    """issue 24: the quest branch only moves forward. A person pushed to the quest branch, then
    the base moved: the rebase (GitHub's update-branch, a merge) keeps their commit; where it
    cannot (a conflict) it stops with what to do, and the branch stays the person's."""
    b = await ready(world)
    await world.effects.request_checkpoint(last(b, EffectType.REQUEST_CHECKPOINT))
    person = await world.fake.push(REPO, "quest/q-1", {"NOTES.md": "carol's note\n"},
                                   user="carol")
    b.add("human_revision", head=person.sha, pusher="carol")
    await world.ctx.journal.apply(b.events[-1], b.policy)
    base = {"NOTES.md": "the base's own note\n"} if conflict else {"README.md": "new\n"}
    moved = await world.fake.push(REPO, "main", base, user="octo")
    b.add("base_moved", base=moved.sha)
    await world.ctx.journal.apply(b.events[-1], b.policy)
    effect = last(b, EffectType.REBASE)
    repo = world.fake.repo(REPO)
    if conflict:
        with pytest.raises(PermanentError, match="resolve the conflict by pushing"):
            await world.effects.rebase(effect)
        assert repo.refs["refs/heads/quest/q-1"] == person.sha
        return
    (pushed,) = await world.effects.rebase(effect) or ()
    assert isinstance(pushed, PatchPushed)
    seen, todo = set(), [pushed.head]
    while todo:
        sha = todo.pop()
        if sha not in seen:
            seen.add(sha)
            todo.extend(repo.git.commits[sha].parents)
    assert {person.sha, moved.sha} <= seen  # the person's commit and the new base, both kept
