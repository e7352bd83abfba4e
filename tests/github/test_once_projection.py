"""Create once: the quest's pull request, status comment and check run exist at most once on
GitHub whatever dies when, and whoever syncs at the same time. Each test makes the bad moment
happen — the worker dies right after GitHub did the write, Redis loses the record, two paths
sync at once — and counts on the fake, which is GitHub's record."""

from __future__ import annotations

import asyncio
from http import HTTPStatus

import gidgethub
import pytest

from bot.core import EffectType, Quest
from bot.github.forge import CHECK_NAME, Forge
from bot.github.forge.batch import MutationBatch
from bot.journal import PermanentError
from bot.journal.keys import quest_gh_key
from questbot_testing.fakegithub.state import CheckRun, Comment, PullRequest, iso
from questbot_testing.journals import JournalBuilder
from tests.github.conftest import REPO, Died, World, dies_after, last, meet_at


async def ready(world: World, quest_id: str = "q-1") -> JournalBuilder:
    head = await world.push_quest(quest_id)
    b = JournalBuilder(quest_id, repo=REPO).sense(base=world.main_sha).to_ready(head=head)
    await world.record(b)
    return b


async def proving(world: World, quest_id: str = "q-1") -> JournalBuilder:
    """A quest proving its first patch: its check run is in progress."""
    head = await world.push_quest(quest_id)
    b = JournalBuilder(quest_id, repo=REPO).sense(base=world.main_sha)
    b.add("hypothesis_written", summary="off-by-one in pager")
    b.decide("A")
    b.add("reproduced", check="test_pager_last_page")
    b.add("plan_written", summary="fix the bound", risk="low")
    b.decide("B")
    b.add("patch_pushed", head=head, pusher="questbot[bot]")
    await world.record(b)
    return b


def pulls(world: World, quest_id: str = "q-1") -> list[PullRequest]:
    return [p for p in world.fake.repo(REPO).pulls.values() if p.head_ref == f"quest/{quest_id}"]


def status_comments(world: World, quest_id: str = "q-1") -> list[Comment]:
    return [c for c in world.fake.repo(REPO).comments.values()
            if f"questbot:status quest={quest_id}" in c.body and "now lives on" not in c.body]


def runs(world: World, quest_id: str = "q-1") -> list[CheckRun]:
    return sorted((r for r in world.fake.repo(REPO).check_runs.values()
                   if r.name == CHECK_NAME and r.external_id == quest_id), key=lambda r: r.id)


async def now(world: World, quest_id: str = "q-1") -> Quest:
    return await world.ctx.quest(quest_id)


def mutations(world: World, field: str) -> int:
    """How many times ``field`` was asked of GraphQL, alone or among a batch's mutations
    (``bot.github.forge.batch``): the fake names a document by its root fields."""
    return sum(call.operation_id.removeprefix("graphql/").split(",").count(field)
               for call in world.fake.calls() if call.operation_id.startswith("graphql/")
               and call.status < 300)


def creates(world: World) -> int:
    """Check runs created, by REST or in a batch."""
    return world.calls("checks/create") + mutations(world, "createCheckRun")


# -- the pull request ----------------------------------------------------------------------


async def test_a_pull_request_opened_by_a_worker_that_died_is_found_not_refused(
        world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    await ready(world)
    dies_after(monkeypatch, Forge, "create_pull")
    with pytest.raises(Died):
        await world.effects.sync(await now(world))
    await world.effects.sync(await now(world))  # GitHub would answer 422 "already exists"
    (pr,) = pulls(world)
    assert await world.effects.memory.quest_int("q-1", "pr") == pr.number
    assert world.calls("pulls/create") == 1
    (comment,) = status_comments(world)
    assert comment.issue_number == pr.number


async def researching(world: World, quest_id: str = "q-1") -> JournalBuilder:
    """A quest triage just gave the agent: no branch, no pull request, no view yet."""
    b = JournalBuilder(quest_id, repo=REPO).sense(base=world.main_sha)
    await world.record(b)
    return b


async def test_a_new_quest_opens_its_pull_request_comment_and_run_without_looking(
        world: World) -> None:
    """The branch questbot makes is new, so are its pull request and first commit: nothing
    of questbot's can be there to find (issue 24, item 8)."""
    await researching(world)
    await world.effects.sync(await now(world))
    (pr,) = pulls(world)
    (comment,) = status_comments(world)
    (run,) = runs(world)
    assert comment.issue_number == pr.number and run.head_sha == pr.head_sha
    for lookup in ("git/get-ref", "pulls/list", "issues/list-comments", "checks/list-for-ref"):
        assert world.calls(lookup) == 0, lookup


async def test_a_first_status_comment_posted_by_a_worker_that_died_is_found_not_doubled(
        world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    b = await researching(world)
    dies_after(monkeypatch, Forge, "comment")
    with pytest.raises(Died):
        await world.effects.sync(await now(world))
    b.add("hypothesis_written", summary="off-by-one in pager")  # the view moves on
    await world.ctx.journal.apply(b.events[-1], b.policy)
    await world.effects.sync(await now(world))
    assert len(status_comments(world)) == 1
    assert world.calls("issues/create-comment") == 1
    assert world.calls("issues/list-comments") == 1  # looked, since the post went unrecorded


async def test_a_first_check_run_created_by_a_worker_that_died_is_found_not_doubled(
        world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    """The first run goes in the view's one GraphQL request (``MutationBatch.send``), its
    create reserved first: a worker that dies once GitHub made it leaves the reservation, and
    the next one lists the head's runs and finds it."""
    b = await researching(world)
    dies_after(monkeypatch, MutationBatch, "send")
    with pytest.raises(Died):
        await world.effects.sync(await now(world))
    b.add("hypothesis_written", summary="off-by-one in pager")
    await world.ctx.journal.apply(b.events[-1], b.policy)
    await world.effects.sync(await now(world))
    assert len(runs(world)) == 1
    assert creates(world) == 1
    assert world.calls("checks/list-for-ref") == 1  # looked, since the create went unrecorded


async def test_a_quest_whose_branch_a_dead_worker_made_finds_its_pull_request(
        world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    """The branch is there, so a pull request may be: the lookups come back."""
    await researching(world)
    dies_after(monkeypatch, Forge, "create_pull")
    with pytest.raises(Died):
        await world.effects.sync(await now(world))
    await world.effects.sync(await now(world))
    (pr,) = pulls(world)
    (comment,) = status_comments(world)
    assert comment.issue_number == pr.number
    assert world.calls("pulls/create") == 1 and world.calls("git/create-ref") == 1
    assert world.calls("issues/list-comments") == 1  # not opened by this path: looked


async def test_the_projection_and_a_checkpoint_at_once_open_one_pull_request(
        world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    b = await ready(world)
    quest = await now(world)
    meet_at(monkeypatch, Forge, "create_pull")
    await asyncio.gather(world.effects.sync(quest),
                         world.effects.request_checkpoint(last(b, EffectType.REQUEST_CHECKPOINT)))
    assert len(pulls(world)) == 1
    assert world.calls("pulls/create") == 1
    assert len(status_comments(world)) == 1
    assert len(runs(world)) == 1


async def test_with_its_records_lost_the_quest_finds_its_pull_request_and_comment(
        world: World) -> None:
    await ready(world)
    await world.effects.sync(await now(world))
    (pr,) = pulls(world)
    await world.redis.delete(quest_gh_key("q-1"))  # a failover lost the last writes
    await world.effects.sync(await now(world))
    assert pulls(world) == [pr]
    assert await world.effects.memory.quest_int("q-1", "pr") == pr.number
    assert len(status_comments(world)) == 1
    assert world.calls("issues/create-comment") == 1
    assert len(runs(world)) == 1


async def test_a_pull_request_someone_else_opened_from_the_branch_is_not_taken_over(
        world: World) -> None:
    await ready(world)
    other = await world.fake.open_pull_request(REPO, "quest/q-1", user="alice")
    with pytest.raises(PermanentError, match="someone else opened one"):
        await world.effects.sync(await now(world))
    assert pulls(world) == [other]
    assert await world.effects.memory.quest_int("q-1", "pr") is None


# -- the status comment --------------------------------------------------------------------


async def test_a_status_comment_posted_by_a_worker_that_died_is_edited_not_doubled(
        world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    b = await ready(world)
    dies_after(monkeypatch, Forge, "comment")
    with pytest.raises(Died):
        await world.effects.sync(await now(world))
    b.add("claimed", actor="alice")  # the quest moves on: the comment must say so
    await world.ctx.journal.apply(b.events[-1], b.policy)
    await world.effects.sync(await now(world))
    (comment,) = status_comments(world)
    assert "**State:** handed off" in comment.body
    assert world.calls("issues/create-comment") == 1


async def test_a_person_quoting_the_status_comment_is_not_taken_for_it(world: World) -> None:
    b = await ready(world)
    await world.effects.sync(await now(world))
    (mine,) = status_comments(world)
    repo = world.fake.repo(REPO)
    quote = "\n".join(f"> {line}" for line in mine.body.splitlines()) + "\n\nwhy this?"
    world.fake.add_comment(repo, repo.issues[mine.issue_number], quote, "alice")
    del repo.comments[mine.id]  # and a person deleted questbot's own
    await world.redis.delete(quest_gh_key("q-1"))
    b.add("claimed", actor="alice")
    await world.ctx.journal.apply(b.events[-1], b.policy)
    await world.effects.sync(await now(world))  # not an edit of alice's comment (a 403)
    (alices, fresh) = status_comments(world)
    assert (alices.user, alices.body) == ("alice", quote)
    assert fresh.user == "questbot[bot]" and "**State:** handed off" in fresh.body


async def test_two_syncs_at_once_post_one_status_comment_and_one_check_run(
        world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    await ready(world)
    quest = await now(world)
    forge = await world.effects.forges.for_repo(REPO)
    await world.effects.projection.ensure_pull(quest, forge)
    meet_at(monkeypatch, Forge, "comment")
    meet_at(monkeypatch, Forge, "create_check_run")
    await asyncio.gather(world.effects.projection.sync_with(quest, forge),
                         world.effects.projection.sync_with(quest, forge))
    assert len(status_comments(world)) == 1
    assert len(runs(world)) == 1


# -- the check run -------------------------------------------------------------------------


async def test_a_check_run_created_by_a_worker_that_died_is_not_left_in_progress(
        world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    b = await ready(world)
    await world.effects.request_checkpoint(last(b, EffectType.REQUEST_CHECKPOINT))
    (waiting,) = runs(world)
    assert waiting.conclusion == "action_required"
    b.decide("C")  # landing: in progress again, so a new run follows the finished one
    await world.ctx.journal.apply(b.events[-1], b.policy)
    dies_after(monkeypatch, MutationBatch, "send")  # the run made in the view's one request
    with pytest.raises(Died):
        await world.effects.sync(await now(world))
    (_, orphan) = runs(world)
    await world.effects.sync(await now(world))
    assert [r.id for r in runs(world)] == [waiting.id, orphan.id]  # adopted, not doubled
    for event_type, fields in (("landed", {"merge_sha": world.main_sha}), ("watch_clean", {})):
        b.add(event_type, **fields)
        await world.ctx.journal.apply(b.events[-1], b.policy)
        await world.effects.sync(await now(world))
    assert [(r.status, r.conclusion) for r in runs(world)] == [
        ("completed", "action_required"), ("completed", "success")]


async def test_the_previous_heads_run_is_completed_as_superseded(world: World) -> None:
    b = await proving(world)
    await world.effects.sync(await now(world))
    (first,) = runs(world)
    assert first.status == "in_progress"
    head = await world.push_quest(content="x = 3\n")  # a person pushed to the quest branch
    b.add("human_revision", head=head, pusher="alice")
    await world.ctx.journal.apply(b.events[-1], b.policy)
    await world.effects.sync(await now(world))
    old, new = runs(world)
    assert (old.id, old.status, old.conclusion, old.actions) == (
        first.id, "completed", "neutral", [])
    assert f"Superseded by `{head[:12]}`" in str(old.output["summary"])
    assert (new.head_sha, new.status) == (head, "in_progress")


async def test_a_run_on_a_new_head_is_created_without_a_listing_while_the_record_holds(
        world: World) -> None:
    """Every create is reserved first, so with the record whole and no reservation left there
    is no unrecorded run to look for; with the record lost, GitHub's runs are listed."""
    b = await proving(world)
    await world.effects.sync(await now(world))
    listings = len(world.fake.calls("checks/list-for-ref"))
    assert listings == 1  # the quest's first run: nothing recorded yet, so GitHub is asked
    head = await world.push_quest(content="x = 3\n")
    b.add("human_revision", head=head, pusher="alice")
    await world.ctx.journal.apply(b.events[-1], b.policy)
    await world.effects.sync(await now(world))
    assert len(world.fake.calls("checks/list-for-ref")) == listings
    assert [r.head_sha for r in runs(world)][-1] == head
    await world.redis.delete(quest_gh_key("q-1"))  # the record lost
    again = await world.push_quest(content="x = 4\n")
    b.add("human_revision", head=again, pusher="alice")
    await world.ctx.journal.apply(b.events[-1], b.policy)
    await world.effects.sync(await now(world))
    assert len(world.fake.calls("checks/list-for-ref")) == listings + 1
    assert [r.head_sha for r in runs(world)][-1] == again


async def test_a_check_run_orphaned_on_a_head_the_quest_left_is_completed(
        world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    b = await proving(world)
    await world.effects.sync(await now(world))
    (first,) = runs(world)
    head = await world.push_quest(content="x = 3\n")
    b.add("human_revision", head=head, pusher="alice")
    await world.ctx.journal.apply(b.events[-1], b.policy)
    dies_after(monkeypatch, MutationBatch, "send")  # the run on the new head, unrecorded
    with pytest.raises(Died):
        await world.effects.sync(await now(world))
    back = await world.push_quest(content="x = 4\n")  # and the head moves on again
    b.add("human_revision", head=back, pusher="alice")
    await world.ctx.journal.apply(b.events[-1], b.policy)
    await world.effects.sync(await now(world))
    assert [(r.head_sha, r.status, r.conclusion) for r in runs(world)] == [
        (first.head_sha, "completed", "neutral"), (head, "completed", "neutral"),
        (back, "in_progress", None)]


async def test_finding_the_quests_run_reads_every_page_of_every_run(world: World) -> None:
    """Two quests on one commit: the other's forty runs are newer than this one's, so the
    first page (and ``filter=latest``) holds none of this quest's."""
    repo = world.fake.repo(REPO)
    sha = world.main_sha

    def add(external_id: str) -> CheckRun:
        run = CheckRun(world.fake.world.new_id(), sha, CHECK_NAME, "in_progress", None,
                       external_id, iso())
        repo.check_runs[run.id] = run
        return run

    mine = add("q-1")
    for _ in range(40):
        add("q-2")
    forge = await world.effects.forges.for_repo(REPO)
    found = await forge.find_check_run(sha, "q-1")
    assert found is not None and found.id == mine.id
    (listing, *more) = world.fake.calls("checks/list-for-ref")
    assert listing.query["filter"] == "all" and listing.query["check_name"] == CHECK_NAME
    assert more == []  # 41 runs fit one page of 100
    for _ in range(80):
        add("q-2")
    found = await forge.find_check_run(sha, "q-1")
    assert found is not None and found.id == mine.id
    assert len(world.fake.calls("checks/list-for-ref")) == 3  # two pages the second time


async def test_a_stale_view_never_overwrites_a_newer_one(world: World) -> None:
    """Two workers project one quest, one still holding it as it was while watched: the check
    run ends completed and no run is opened again for the old state (seen in a chaos run)."""
    b = await ready(world)
    b.decide("C")
    b.add("landed", merge_sha=world.main_sha)
    await world.record(b)
    watching = await now(world)  # the check run is in progress while the quest is watched
    await world.effects.sync(watching)
    b.add("watch_clean")
    await world.record(b)
    await world.effects.sync(await now(world))  # closed: the run is completed
    await world.effects.sync(watching)  # a late sync from a worker that applied `landed`
    assert [r.status for r in runs(world)] == ["completed"]


async def test_a_status_comment_that_fails_does_not_keep_the_check_run_from_completing(
        world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    """The closing sync's comment edit was refused (a 429 in a chaos run): the check run, what
    CI and branch protection read, is still completed, and the sync still reports the error.
    With the view's one GraphQL request refused as a whole too, the REST path after it writes
    each view on its own, the run first."""
    b = await ready(world)
    b.decide("C")
    b.add("landed", merge_sha=world.main_sha)
    await world.record(b)
    await world.effects.sync(await now(world))
    b.add("watch_clean")
    await world.record(b)

    async def refused(self: MutationBatch) -> list[object]:
        raise gidgethub.BadRequest(HTTPStatus.TOO_MANY_REQUESTS, "You have exceeded a "
                                   "secondary rate limit")

    monkeypatch.setattr(MutationBatch, "send", refused)
    dies_after(monkeypatch, Forge, "edit_comment")
    with pytest.raises(Died):
        await world.effects.sync(await now(world))
    assert [(r.status, r.conclusion) for r in runs(world)][-1] == ("completed", "success")


async def test_a_view_github_refused_is_written_again_by_whoever_finds_it_owed(
        world: World) -> None:
    """The last transition's sync met GitHub's rate limit: no later event would sync the quest
    again, so the view stays owed in Redis until a worker's projector writes it."""
    from bot.journal.views import OwedViews
    from bot.worker.projector import Projector
    from questbot_testing.fakegithub.faults import Faults

    b = await ready(world)
    b.decide("C")
    b.add("landed", merge_sha=world.main_sha)
    await world.record(b)
    await world.effects.sync(await now(world))
    b.add("watch_clean")
    await world.record(b)
    journal = world.ctx.journal

    async def load(quest_id: str) -> Quest | None:
        return (await journal.snapshot(quest_id))[1]

    views = OwedViews(world.redis, journal.shards)
    projector = Projector(world.effects.sync, views=views, load=load, retry_after_s=0.0)
    world.fake.faults = Faults(rate=1.0, kinds=("429",))
    projector.pending["q-1"] = await now(world)
    await projector.drain()
    world.fake.faults = Faults()
    assert runs(world)[-1].status == "in_progress"
    assert await views.due(older_than_s=0.0) == ["q-1"]
    assert await projector.owed() == 1
    await projector.drain()
    assert [(r.status, r.conclusion) for r in runs(world)][-1] == ("completed", "success")
    assert await views.due(older_than_s=0.0) == []
