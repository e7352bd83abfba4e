"""Create once: the inbox issue, the revert, review requests and replies exist at most once on
GitHub whatever dies when, and whoever delivers at the same time — counted on the fake."""

from __future__ import annotations

import asyncio
import logging

import pytest

from bot.commands import replies as conversation
from bot.core import EffectType, Policy
from bot.core.events import Landed, RollbackConfirmed
from bot.github.forge import Forge, GitData
from bot.journal.keys import quest_gh_key, repo_gh_key
from bot.words import render
from bot.words.inbox_marks import entry_marker
from questbot_testing.fakegithub.state import Issue, PullRequest
from questbot_testing.journals import JournalBuilder
from tests.github.conftest import REPO, Died, World, dies_after, last, meet_at


def inboxes(world: World) -> list[Issue]:
    return [i for i in world.fake.repo(REPO).issues.values() if i.title == render.INBOX_TITLE]


async def waiting_for_a_person(world: World, quest_id: str = "q-9") -> JournalBuilder:
    b = JournalBuilder(quest_id, repo=REPO).sense(route="human", base=world.main_sha)
    await world.record(b)
    return b


# -- the inbox issue -----------------------------------------------------------------------


async def test_the_projection_and_notify_inbox_at_once_open_one_inbox(
        world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    """No fault at all: the two paths that refresh the inbox run at once on one worker."""
    b = await waiting_for_a_person(world)
    quest = await world.ctx.quest("q-9")
    meet_at(monkeypatch, Forge, "create_issue")
    await asyncio.gather(world.effects.sync(quest),
                         world.effects.notify_inbox(last(b, EffectType.NOTIFY_INBOX)))
    (inbox,) = inboxes(world)
    assert entry_marker("q-9") in (inbox.body or "")
    assert world.calls("issues/create") == 1


async def test_an_inbox_opened_by_a_worker_that_died_is_found_by_its_marker(
        world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    b = await waiting_for_a_person(world)
    effect = last(b, EffectType.NOTIFY_INBOX)
    dies_after(monkeypatch, Forge, "create_issue")
    with pytest.raises(Died):
        await world.effects.notify_inbox(effect)
    await world.effects.notify_inbox(effect)
    (inbox,) = inboxes(world)
    assert await world.effects.memory.repo(REPO, "inbox") == str(inbox.number)
    _, again = world.fake.calls("issues/list-for-repo")  # once before each create
    assert again.query["creator"] == "questbot[bot]" and again.query["state"] == "all"


async def test_an_inbox_a_person_closed_is_reopened_and_single_when_its_record_is_lost(
        world: World) -> None:
    b = await waiting_for_a_person(world)
    await world.effects.notify_inbox(last(b, EffectType.NOTIFY_INBOX))
    (inbox,) = inboxes(world)
    inbox.state = "closed"  # a maintainer closed it
    for n in range(3):  # and questbot opened other issues since, which are not the inbox
        world.fake.repo(REPO).issues[100 + n] = Issue(100 + n, "other", "no marker",
                                                      "questbot[bot]", inbox.created_at)
    await world.redis.delete(repo_gh_key(REPO))  # a failover lost the record
    b2 = await waiting_for_a_person(world, "q-8")
    await world.effects.notify_inbox(last(b2, EffectType.NOTIFY_INBOX))
    assert inboxes(world) == [inbox]
    assert inbox.state == "open"  # found by its marker among questbot's issues, and reopened
    assert entry_marker("q-8") in (inbox.body or "") and entry_marker("q-9") in (inbox.body or "")


async def test_an_issue_a_person_wrote_with_the_inbox_marker_is_not_the_inbox(
        world: World) -> None:
    await world.fake.open_issue(REPO, "copied", f"{render.INBOX_MARKER}\nmine", user="alice")
    b = await waiting_for_a_person(world)
    await world.effects.notify_inbox(last(b, EffectType.NOTIFY_INBOX))
    (inbox,) = inboxes(world)
    assert inbox.user == "questbot[bot]"


async def test_the_inbox_is_pinned_once(world: World) -> None:
    b = await waiting_for_a_person(world)
    await world.effects.notify_inbox(last(b, EffectType.NOTIFY_INBOX))
    b2 = await waiting_for_a_person(world, "q-8")
    await world.effects.notify_inbox(last(b2, EffectType.NOTIFY_INBOX))  # a new body
    (inbox,) = inboxes(world)
    assert inbox.pinned_at
    pins = world.fake.calls("graphql/pinIssue")
    assert len(pins) == 1


async def test_with_three_issues_pinned_the_inbox_stays_unpinned_and_the_log_says_so(
        world: World, caplog: pytest.LogCaptureFixture) -> None:
    repo = world.fake.repo(REPO)
    for n in range(3):  # a maintainer's pins
        repo.issues[200 + n] = Issue(200 + n, f"pinned {n}", "", "alice", "2026-01-01T00:00:00Z",
                                     pinned_at=n + 1)
    b = await waiting_for_a_person(world)
    with caplog.at_level(logging.WARNING, logger="bot.inbox.issue"):
        await world.effects.notify_inbox(last(b, EffectType.NOTIFY_INBOX))
    (inbox,) = inboxes(world)
    assert not inbox.pinned_at and entry_marker("q-9") in (inbox.body or "")
    assert [n for n, i in repo.issues.items() if i.pinned_at] == [200, 201, 202]
    assert any("unpinned" in r.getMessage() and "at most three" in r.getMessage()
               for r in caplog.records)
    b2 = await waiting_for_a_person(world, "q-8")
    await world.effects.notify_inbox(last(b2, EffectType.NOTIFY_INBOX))
    pins = world.fake.calls("graphql/pinIssue")
    assert len(pins) == 1  # asked once for this issue, not on every edit


# -- the revert ----------------------------------------------------------------------------


async def regressed(world: World) -> tuple[JournalBuilder, dict[str, str]]:
    head = await world.push_quest()
    b = JournalBuilder("q-1", repo=REPO).sense(base=world.main_sha).to_ready(head=head)
    await world.record(b)
    await world.effects.request_checkpoint(last(b, EffectType.REQUEST_CHECKPOINT))
    b.decide("C")
    await world.ctx.journal.apply(b.events[-1], b.policy)
    for pr in world.fake.repo(REPO).pulls.values():
        pr.draft = False  # a person clicked "Ready for review"
    before = world.fake.repo(REPO).git.files(world.main_sha)
    (landed,) = await world.effects.land(last(b, EffectType.LAND)) or ()
    assert isinstance(landed, Landed)
    b.add("landed", merge_sha=landed.merge_sha)
    b.add("regression_detected", source="check_run:9")
    for event in b.events[-2:]:
        await world.ctx.journal.apply(event, b.policy)
    return b, before


def reverts(world: World) -> list[PullRequest]:
    return [p for p in world.fake.repo(REPO).pulls.values()
            if p.head_ref == "quest/q-1-revert-1"]


@pytest.mark.parametrize(("owner", "step"), [
    (GitData, "create_commit"), (GitData, "ensure_branch"), (Forge, "create_pull"),
    (Forge, "merge")])
async def test_a_rollback_that_dies_after_any_step_reverts_once(
        world: World, monkeypatch: pytest.MonkeyPatch, owner: type, step: str) -> None:
    b, before = await regressed(world)
    effect = last(b, EffectType.ROLLBACK)
    dies_after(monkeypatch, owner, step)
    with pytest.raises(Died):
        await world.effects.reverter.rollback(effect)
    (confirmed,) = await world.effects.reverter.rollback(effect) or ()
    assert isinstance(confirmed, RollbackConfirmed)
    (revert,) = reverts(world)
    assert revert.merged and confirmed.revert_sha == revert.merge_commit_sha
    (quest_pr,) = [p for p in world.fake.repo(REPO).pulls.values() if p.head_ref == "quest/q-1"]
    assert [m.path for m in world.fake.calls("pulls/merge") if m.status == 200] == [
        f"/repos/{REPO}/pulls/{n}/merge" for n in (quest_pr.number, revert.number)]
    assert world.fake.repo(REPO).git.files(world.main_sha) == before


async def test_a_rollback_whose_record_is_lost_finds_its_merged_revert(world: World) -> None:
    b, before = await regressed(world)
    effect = last(b, EffectType.ROLLBACK)
    first = await world.effects.reverter.rollback(effect)
    await world.redis.hdel(quest_gh_key("q-1"), f"revert:{effect.key}")
    again = await world.effects.reverter.rollback(effect)
    assert [e.model_dump(exclude={"at"}) for e in first or ()] == [
        e.model_dump(exclude={"at"}) for e in again or ()]
    assert len(reverts(world)) == 1
    assert world.fake.repo(REPO).git.files(world.main_sha) == before


# -- review requests and replies -----------------------------------------------------------


async def test_a_review_request_made_by_a_worker_that_died_is_not_made_again(
        world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    head = await world.push_quest()
    b = JournalBuilder("q-1", repo=REPO).sense(base=world.main_sha).to_ready(head=head)
    await world.record(b)
    effect = last(b, EffectType.REQUEST_CHECKPOINT)
    dies_after(monkeypatch, Forge, "request_reviewers")
    with pytest.raises(Died):
        await world.effects.request_checkpoint(effect)
    await world.effects.request_checkpoint(effect)
    await world.effects.request_checkpoint(effect)
    (pr,) = world.fake.repo(REPO).pulls.values()
    assert sorted(pr.requested_reviewers) == ["alice", "octo"]
    assert world.calls("pulls/request-reviewers") == 1
    assert await world.effects.memory.quest("q-1", f"reviews:{effect.key}") == "alice,octo"


async def test_two_deliveries_of_one_reply_at_once_post_it_once(
        world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    meet_at(monkeypatch, Forge, "comment")
    issue = await world.fake.open_issue(REPO, "tests fail", user="alice")
    effect = conversation.reply(REPO, issue.number, "comment-7-1", "@alice `/approve` refused")
    await asyncio.gather(world.effects.reply_comment(effect),
                         world.effects.reply_comment(effect))
    assert world.calls("issues/create-comment") == 1
    assert len(world.fake.repo(REPO).comments) == 1


async def test_a_spend_request_posted_by_a_worker_that_died_is_not_posted_again(
        world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    await world.push_quest()
    b = JournalBuilder("q-1", repo=REPO, policy=Policy(budget_cents=1)).sense(
        base=world.main_sha)
    b.add("usage_recorded", cost_cents=3, tokens=900, stage="research")
    b.add("hypothesis_written", summary="off by one")
    b.decide("A")
    await world.record(b)
    await world.effects.request_checkpoint(last(b, EffectType.REQUEST_CHECKPOINT))  # the PR
    effect = last(b, EffectType.REQUEST_SPEND)
    dies_after(monkeypatch, Forge, "comment")
    with pytest.raises(Died):
        await world.effects.request_spend(effect)
    await world.effects.request_spend(effect)
    await world.effects.request_spend(effect)
    asked = [c for c in world.fake.repo(REPO).comments.values()
             if "This quest's budget is spent" in c.body]
    assert len(asked) == 1 and "$0.03 and 900 tokens so far" in asked[0].body
