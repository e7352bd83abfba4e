"""The repository's own life under a live quest, end to end on the whole stack (issue 26):
archived, removed from the App, the App suspended or uninstalled, the quest's branch deleted,
the repository deleted outright, renamed, its default branch renamed. A change questbot cannot
work through parks the quest with a note people read (what happened, what sets it right);
nothing is retried for ever; the change that undoes it takes the quest up again. A deleted
repository's quest waits while GitHub lets it be restored, and is abandoned after; an
operator ends a parked quest from the command line (``python -m bot abandon``)."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest

from bot.__main__ import main
from bot.core import Outcome, ParkReason, Policy, State
from bot.core.events import Killed
from bot.journal import Indexes
from bot.journal.compaction import due as compaction_due
from bot.journal.memory import PARKED_BY_REPOSITORY
from bot.repository.restorable import note_deleted, waiting
from bot.tools.quests import listed_text, live_quests
from bot.words.render import INBOX_TITLE
from questbot_testing.scenario import MAINTAINER, REPO, Story
from questbot_testing.stack import Stack
from tests.e2e.test_github_flows import at_checkpoint_a

GITHUB_WRITES = ("POST", "PATCH", "PUT", "DELETE")


def refused_writes(stack: Stack, since: int, status: int) -> int:
    return sum(1 for e in stack.fake.requests[since:]
               if e.method in GITHUB_WRITES and e.status == status)


def said(stack: Stack, number: int, words: str) -> list[str]:
    """What questbot said on ``number`` holding ``words``."""
    return [c.body for c in stack.fake.repo(REPO).comments.values()
            if c.issue_number == number and words in c.body]


async def parked_by_repository(stack: Stack, quest_id: str, *words: str) -> str:
    quest = await stack.quest(quest_id)
    assert (quest.state, quest.park_reason) == (State.PARKED, ParkReason.REPOSITORY_CHANGED), \
        (quest.state, quest.park_reason, quest.last_failure)
    assert quest.resume_state is State.HYPOTHESISED
    note = quest.park_note or ""
    for word in words:
        assert word in note, note
    return note


async def test_an_archived_repository_parks_its_quest_and_unarchiving_takes_it_up_again(
        stack: Stack) -> None:
    story = await at_checkpoint_a(stack)
    since = len(stack.fake.requests)
    await stack.fake.archive(REPO, user=MAINTAINER)
    await stack.settle()
    note = await parked_by_repository(stack, story.quest_id, "archived", "Unarchive")
    assert MAINTAINER in note
    await stack.advance(60)  # whatever failed is not tried again and again
    refused = refused_writes(stack, since, 403)
    assert 0 < refused <= 6
    await stack.advance(60)
    assert refused_writes(stack, since, 403) == refused
    await stack.fake.unarchive(REPO, user=MAINTAINER)
    await story.step("unarchived", State.HYPOTHESISED)
    quest = await stack.quest(story.quest_id)
    assert quest.park_reason is None
    assert "checkpoint a" in story.status_comment().lower()
    (told,) = said(stack, story.pr_number(), "took the quest up again")
    assert f"{REPO} was archived" in told and "unarchived now" in told


async def test_a_repository_removed_from_the_app_parks_its_quest_until_it_is_added_again(
        stack: Stack) -> None:
    story = await at_checkpoint_a(stack)
    installation = stack.fake.repo(REPO).installation_id
    since = len(stack.fake.requests)
    await stack.fake.remove_from_installation(REPO, user=MAINTAINER)
    await stack.settle()
    await parked_by_repository(stack, story.quest_id, "removed from questbot's App",
                               "access to the repository again")
    await stack.advance(60)
    assert [e for e in stack.fake.requests[since:] if e.path.startswith("/repos/")] == []
    await stack.fake.add_to_installation(REPO, installation, user=MAINTAINER)
    await story.step("added to the App again", State.HYPOTHESISED)
    (told,) = said(stack, story.pr_number(), "took the quest up again")
    assert "given back to questbot's App" in told


async def test_a_suspended_app_parks_its_quests_until_it_is_unsuspended(stack: Stack) -> None:
    story = await at_checkpoint_a(stack)
    installation = stack.fake.repo(REPO).installation_id
    await stack.fake.suspend(installation, user=MAINTAINER)
    await stack.settle()
    await parked_by_repository(stack, story.quest_id, "suspended", "Unsuspend")
    await stack.advance(60)
    mints = len(stack.calls("apps/create-installation-access-token"))
    await stack.advance(60)  # a refused token is not asked for again and again
    assert len(stack.calls("apps/create-installation-access-token")) == mints
    await stack.fake.unsuspend(installation, user=MAINTAINER)
    await story.step("unsuspended", State.HYPOTHESISED)


async def test_an_uninstalled_app_parks_its_quests_and_asks_github_nothing_more(
        stack: Stack) -> None:
    story = await at_checkpoint_a(stack)
    installation = stack.fake.repo(REPO).installation_id
    await stack.fake.uninstall(installation, user=MAINTAINER)
    since = len(stack.fake.requests)
    await stack.settle()
    await parked_by_repository(stack, story.quest_id, "uninstalled", "Install the App")
    await stack.advance(60)
    assert [e for e in stack.fake.requests[since:] if e.path.startswith("/repos/")] == []
    await stack.fake.install("octo", [REPO], user=MAINTAINER)  # a new installation, a new id
    await story.step("installed again", State.HYPOTHESISED)


async def test_a_deleted_quest_branch_parks_the_quest_and_the_inbox_says_so(
        stack: Stack) -> None:
    story = await at_checkpoint_a(stack)
    quest = await stack.quest(story.quest_id)
    await stack.fake.delete_branch(REPO, quest.branch, user=MAINTAINER)
    await stack.settle()
    await parked_by_repository(stack, story.quest_id, quest.branch, "deleted", "Restore")
    repo = stack.fake.repo(REPO)
    (inbox,) = [i for i in repo.issues.values() if i.title == INBOX_TITLE]
    (entry,) = [line for line in (inbox.body or "").splitlines() if story.quest_id in line]
    assert f"#{story.pr_number()}" in entry and "deleted by maya" in entry
    assert "Restore the branch" in entry
    assert "why:" not in (inbox.body or "")  # said once, on the entry


@pytest.mark.parametrize("removed_first", [False, True], ids=["deleted-first", "removed-first"])
async def test_a_deleted_repository_parks_its_quests_says_why_where_it_can_and_retries_nothing(
        stack: Stack, removed_first: bool) -> None:
    """Deleted outright, the repository takes its pull requests, issues and inbox with it:
    GitHub answers 404 from then on. Its quests park, the command line's ``status`` says why
    (the only place left), and nothing owed to GitHub for it — effects, views — is tried
    again. GitHub sends ``repository`` ``deleted`` and ``installation_repositories``
    ``removed`` in no documented order: either way the quest parks and stays parked."""
    story = await at_checkpoint_a(stack)
    worker = stack.runtime.worker
    since = len(stack.fake.requests)
    await stack.fake.delete_repository(REPO, user=MAINTAINER, removed_first=removed_first)
    await stack.settle()
    quest = await stack.quest(story.quest_id)
    assert (quest.state, quest.park_reason) == (State.PARKED, ParkReason.REPOSITORY_CHANGED)
    assert quest.resume_state is State.HYPOTHESISED
    assert await worker.intake.memory.quest(quest.id, PARKED_BY_REPOSITORY) == "deleted"
    if not removed_first:  # the removal came second and found the quest parked: it stays so
        assert f"{REPO} was deleted by {MAINTAINER}" in (quest.park_note or "")
        assert "If the repository is restored" in (quest.park_note or "")
        listed = listed_text(await live_quests(stack.web_client, REPO, Policy()))
        assert f"why it is parked: {REPO} was deleted by {MAINTAINER}" in listed, listed
    await stack.advance(60)
    views = worker.projector.views
    assert views is not None
    assert await views.due(older_than_s=0) == []  # no view owed for it
    assert await worker.projector.owed() == 0
    await stack.advance(60)
    asked = [(e.method, e.path, e.status) for e in stack.fake.requests[since:]
             if e.path.startswith(f"/repos/{REPO}/") or e.path.startswith(f"/{REPO}.git")]
    assert asked == []  # forgotten with its installation before anything was asked of it
    before = len(stack.fake.requests)
    await stack.advance(60)
    # nothing but the look for it restored (``bot.repository.restorable``), answered 404
    (repo_id,) = stack.fake.world.deleted
    assert [(e.method, e.path, e.status) for e in stack.fake.requests[before:]] == [
        ("GET", f"/repositories/{repo_id}", 404)]
    assert (await stack.quest(story.quest_id)).state is State.PARKED


async def test_a_renamed_repository_keeps_its_quest_which_follows_it_by_id(
        stack: Stack) -> None:
    """GitHub keeps the id: the quest's people steer it under the new name, and questbot asks
    GitHub there rather than through the old name's redirect."""
    story = await at_checkpoint_a(stack)
    number = story.pr_number()
    await stack.fake.rename(REPO, "pager", user=MAINTAINER)
    await stack.settle()
    since = len(stack.fake.requests)
    await stack.fake.comment("octo/pager", number, "/approve A", user=MAINTAINER)
    quest = await story.step("approved A under the new name", State.PLANNED)
    assert quest.repo == REPO  # the name questbot knew it by, whatever GitHub calls it now
    after = stack.fake.requests[since:]
    assert after and all(e.status not in (301, 307) for e in after), \
        [(e.method, e.path, e.status) for e in after if e.status in (301, 307)]
    assert any(e.path.startswith("/repos/octo/pager/") for e in after)
    assert not any(e.path.startswith(f"/repos/{REPO}/") for e in after)


async def test_a_transferred_repository_keeps_its_quest_under_its_new_owner(
        stack: Stack) -> None:
    story = await at_checkpoint_a(stack)
    number = story.pr_number()
    await stack.fake.transfer(REPO, "newco", user=MAINTAINER)
    stack.fake.set_permission("newco/sample", MAINTAINER, "write")
    await stack.settle()
    since = len(stack.fake.requests)
    await stack.fake.comment("newco/sample", number, "/approve A", user=MAINTAINER)
    await story.step("approved A under its new owner", State.PLANNED)
    after = stack.fake.requests[since:]
    assert any(e.path.startswith("/repos/newco/sample/") for e in after)
    assert not any(e.path.startswith(f"/repos/{REPO}/") for e in after)
    assert all(e.status < 400 or e.status == 404 for e in after), \
        [(e.method, e.path, e.status) for e in after if e.status >= 400]


async def test_a_renamed_default_branch_is_where_the_quest_lands(stack: Stack) -> None:
    """GitHub retargets the quest's pull request; questbot reads the new default branch from
    the webhook and the quest goes on to land there, parked by nothing."""
    story = await at_checkpoint_a(stack)
    await stack.fake.rename_default_branch(REPO, "trunk", user=MAINTAINER)
    await stack.settle()
    assert (await stack.quest(story.quest_id)).state is State.HYPOTHESISED
    await story.approve("A", State.PLANNED)
    await story.approve("B", State.READY)
    quest = await story.approve("C", State.WATCHING)
    repo = stack.fake.repo(REPO)
    assert repo.branch_sha("trunk") == quest.merge_sha
    assert repo.pulls[story.pr_number()].base_ref == "trunk"


async def test_a_repository_made_private_keeps_its_quest_going(stack: Stack) -> None:
    story = await at_checkpoint_a(stack)
    repo = stack.fake.repo(REPO)
    repo.private = True  # the repository object of the webhook says so (``_webhook_repo``)
    sent = await stack.fake.deliver(repo, "repository", "privatized.payload.json",
                                    sender=MAINTAINER)
    assert sent.delivery.payload["repository"]["full_name"] == REPO
    await stack.settle()
    assert (await stack.quest(story.quest_id)).state is State.HYPOTHESISED
    await story.approve("A", State.PLANNED)


async def at_checkpoint_c(stack: Stack) -> Story:
    story = await at_checkpoint_a(stack)
    await story.approve("A", State.PLANNED)
    await story.approve("B", State.READY)
    return story


async def test_branch_protection_added_mid_quest_holds_the_merge_and_says_why(
        stack: Stack) -> None:
    """A required check added after the quest started: GitHub refuses the merge (405) until
    it passes; questbot says so once and merges nothing else."""
    story = await at_checkpoint_c(stack)
    stack.fake.repo(REPO).required_checks = ["lint"]  # a maintainer protects main now
    await story.approve("C", State.LANDING)
    (told,) = [c.body for c in stack.fake.repo(REPO).comments.values()
               if c.issue_number == story.pr_number() and "auto-merge is off" in c.body]
    assert "Required status check" in told and "lint" in told  # GitHub's reason, quoted
    merged = [e for e in stack.calls("pulls/merge") if e.status == 200]
    assert merged == []
    await stack.advance(60)
    assert len(stack.calls("pulls/merge")) <= 1  # not asked again and again


async def test_a_force_pushed_base_sends_proved_work_back_to_be_rebased(stack: Stack) -> None:
    """Someone rewrites main's history under a proved quest: the proof is for a base that is
    gone, so the quest must work from the new one; here GitHub cannot rebase it, and the
    quest parks saying why — never landing work proved on the old history."""
    story = await at_checkpoint_c(stack)
    repo = stack.fake.repo(REPO)
    before = str(repo.branch_sha("main"))
    rewritten = repo.git.put_commit(repo.git.commits[before].tree, [], "history rewritten",
                                    author="carol")
    repo.refs["refs/heads/main"] = rewritten.sha
    await stack.fake.ref_moved(repo, "refs/heads/main", before, rewritten.sha, pusher="carol")
    push = [d.delivery.payload for d in stack.fake.deliveries if d.delivery.event == "push"][-1]
    assert push["forced"] is True
    await stack.settle()
    quest = await stack.quest(story.quest_id)
    assert quest.base == rewritten.sha
    assert quest.approved is None
    # the rewritten history shares no commit with the quest's: GitHub cannot update the pull
    # request's branch (422), so the quest parks saying so, and what to do
    assert (quest.state, quest.park_reason) == (State.PARKED, ParkReason.WORK_FAILED)
    assert "rebase" in (quest.park_note or "") and "resolve the conflict" in (quest.park_note or "")
    assert quest.resume_state is State.PATCHING and quest.rebasing
    (inbox,) = [i for i in repo.issues.values() if i.title == INBOX_TITLE]
    assert "could not rebase" in (inbox.body or "")


# A deleted repository can come back for GitHub's 90 days, and not after (issue 26, item 2)


async def deleted_under_a_parked_quest(stack: Stack) -> Story:
    story = await at_checkpoint_a(stack)
    await stack.fake.delete_repository(REPO, user=MAINTAINER)
    await stack.settle()
    quest = await stack.quest(story.quest_id)
    assert (quest.state, quest.park_reason) == (State.PARKED, ParkReason.REPOSITORY_CHANGED)
    assert [q for q, _ in await waiting(stack.web_client)] == [story.quest_id]
    return story


async def test_a_deleted_repository_restored_and_given_back_takes_its_quest_up_again(
        stack: Stack) -> None:
    """GitHub sends nothing for the restore itself; the repository given back to the App
    (``installation_repositories`` ``added``, its old id) is what arrives, and the quest takes
    up where it stopped, its pull request told what happened."""
    story = await deleted_under_a_parked_quest(stack)
    restored = stack.fake.restore_repository(REPO, user=MAINTAINER)
    await stack.advance(60)
    assert (await stack.quest(story.quest_id)).state is State.PARKED  # nothing arrived yet
    installation = stack.fake.world.installation_for("octo").id
    await stack.fake.add_to_installation(REPO, installation, user=MAINTAINER)
    await story.step("restored and given back", State.HYPOTHESISED)
    assert restored.pulls[story.pr_number()].number == story.pr_number()
    (told,) = said(stack, story.pr_number(), "took the quest up again")
    assert f"{REPO} was deleted" in told and "restored" in told
    assert await waiting(stack.web_client) == []
    await story.approve("A", State.PLANNED)


async def test_a_repository_made_under_a_deleted_ones_name_takes_up_nothing(
        stack: Stack) -> None:
    """Quests follow a repository by its id: a new repository under the old name, given to
    the App, is not the one deleted, and the quest keeps waiting for that one."""
    story = await deleted_under_a_parked_quest(stack)
    made = stack.fake.create_repository(REPO, {"README.md": "another"})
    await stack.fake.add_to_installation(REPO, made.installation_id, user=MAINTAINER)
    await stack.settle()
    quest = await stack.quest(story.quest_id)
    assert (quest.state, quest.park_reason) == (State.PARKED, ParkReason.REPOSITORY_CHANGED)
    assert [q for q, _ in await waiting(stack.web_client)] == [story.quest_id]


async def test_a_quest_whose_deleted_repository_is_not_restored_is_abandoned_after_90_days(
        stack: Stack) -> None:
    """It waits parked while GitHub lets the repository be restored; then it is abandoned
    with its reason, leaves the live index, and compaction takes it."""
    story = await deleted_under_a_parked_quest(stack)
    await stack.advance(89 * 24 * 60)
    assert (await stack.quest(story.quest_id)).state is State.PARKED
    assert story.quest_id in await Indexes(stack.web_client).live_quests(REPO)
    await stack.advance(2 * 24 * 60)
    quest = await stack.quest(story.quest_id)
    assert (quest.state, quest.outcome) == (State.ABANDONED, Outcome.KILLED)
    killed = (await stack.runtime.worker.journal.events(story.quest_id))[-1]
    assert isinstance(killed, Killed) and killed.actor is None
    assert f"{REPO} was deleted and not restored within 90 days" in killed.reason
    assert story.quest_id not in await Indexes(stack.web_client).live_quests(REPO)
    assert await waiting(stack.web_client) == []
    later = stack.clock() + timedelta(days=30)
    assert story.quest_id in await compaction_due(stack.web_client, later, 72 * 3600.0)


async def test_the_window_is_the_operators_to_set(stack: Stack) -> None:
    story = await deleted_under_a_parked_quest(stack)
    sweep = stack.runtime.worker.restorable
    assert sweep is not None and sweep.days == 90
    sweep.days = 2
    await stack.advance(2 * 24 * 60 + 1)
    killed = (await stack.runtime.worker.journal.events(story.quest_id))[-1]
    assert isinstance(killed, Killed) and "within 2 days" in killed.reason


async def test_an_operator_abandons_a_parked_quest_from_the_command_line(
        stack: Stack, capsys: pytest.CaptureFixture[str]) -> None:
    """Nobody can ``/kill`` a quest whose repository is gone; an operator ends it with
    ``python -m bot abandon``, journaled like any other event, its reason kept."""
    story = await deleted_under_a_parked_quest(stack)
    code = await asyncio.to_thread(main, [
        "abandon", story.quest_id, "--reason", "the team moved to another repository",
        "--by", "olga", "--redis", stack.redis_url])
    out = capsys.readouterr().out
    assert code == 0, out
    assert f"quest {story.quest_id} of {REPO} is abandoned" in out
    assert f"{REPO} was deleted by {MAINTAINER}" in out  # what it waited for
    quest = await stack.quest(story.quest_id)
    assert (quest.state, quest.outcome) == (State.ABANDONED, Outcome.KILLED)
    killed = (await stack.runtime.worker.journal.events(story.quest_id))[-1]
    assert isinstance(killed, Killed)
    assert killed.reason == ("abandoned by olga from the command line: the team moved to "
                             "another repository")
    assert story.quest_id not in await Indexes(stack.web_client).live_quests(REPO)
    await stack.advance(91 * 24 * 60)  # the sweep lets it go; nothing is ended twice
    assert (await stack.runtime.worker.journal.events(story.quest_id))[-1] == killed
    assert await waiting(stack.web_client) == []


async def test_abandon_refuses_a_quest_that_is_not_parked_and_says_what_to_do(
        stack: Stack, capsys: pytest.CaptureFixture[str]) -> None:
    story = await at_checkpoint_a(stack)

    async def abandon(quest_id: str) -> tuple[int, str]:
        code = await asyncio.to_thread(main, ["abandon", quest_id, "--reason", "done with it",
                                              "--redis", stack.redis_url])
        return code, capsys.readouterr().err

    code, err = await abandon(story.quest_id)
    assert code == 1 and "hypothesised, not parked" in err and "/kill" in err, err
    assert (await stack.quest(story.quest_id)).state is State.HYPOTHESISED
    code, err = await abandon("q-nope")
    assert code == 1 and "there is no quest q-nope" in err, err
    await stack.fake.comment(REPO, story.pr_number(), "/kill not worth it", user=MAINTAINER)
    await stack.settle()
    assert (await stack.quest(story.quest_id)).state is State.ABANDONED
    code, err = await abandon(story.quest_id)
    assert code == 1 and "has ended already (abandoned)" in err, err
    code = await asyncio.to_thread(main, ["abandon", story.quest_id, "--reason", "  ",
                                          "--redis", stack.redis_url])
    assert code == 2 and "--reason" in capsys.readouterr().err


# Restored on an installation on all repositories, with nothing sent: questbot looks itself


CHECK_MINUTES = 10
"""``bot.repository.restorable.CHECK_S``: the worker's look for restored repositories."""


def on_all_repositories(stack: Stack) -> int:
    """The App's installation on ``octo`` covers all of its repositories; its id."""
    installation = stack.fake.world.installation_for("octo")
    installation.repository_selection = "all"
    return installation.id


def looks(stack: Stack, since: int = 0) -> list[tuple[str, int, int]]:
    """Each ``GET /repositories/{id}`` questbot made: the path, its answer, and the installation
    whose token asked."""
    found = []
    for e in stack.fake.requests[since:]:
        if e.path.startswith("/repositories/"):
            token = e.headers.get("authorization", "").removeprefix("token ")
            held = stack.fake.world.tokens.get(token) or stack.fake.world.revoked.get(token)
            found.append((e.path, e.status, held.installation_id if held else 0))
    return found


async def test_on_all_repositories_a_restored_repository_is_found_and_its_quest_goes_on(
        stack: Stack) -> None:
    """GitHub sends nothing when a repository restored on an installation on all repositories
    is within the App's reach again; questbot's next look (``GET /repositories/{id}``, once
    per waiting repository) finds it, takes the quest up as ``installation_repositories``
    ``added`` would, and the quest goes on to land."""
    installation = on_all_repositories(stack)
    sweep = stack.runtime.worker.restorable
    assert sweep is not None and sweep.check_s == CHECK_MINUTES * 60
    story = await deleted_under_a_parked_quest(stack)
    (repo_id,) = stack.fake.world.deleted
    sent = len(stack.fake.deliveries)
    stack.fake.restore_repository(REPO, user=MAINTAINER)
    await stack.settle()
    assert (await stack.quest(story.quest_id)).state is State.PARKED  # not looked yet
    since = len(stack.fake.requests)
    await stack.advance(CHECK_MINUTES)
    about = {d.delivery.event for d in stack.fake.deliveries[sent:]}  # questbot's own doing
    assert not about & {"repository", "installation", "installation_repositories"}, about
    assert looks(stack, since) == [(f"/repositories/{repo_id}", 200, installation)]
    quest = await stack.quest(story.quest_id)
    assert (quest.state, quest.park_reason) == (State.HYPOTHESISED, None)
    assert await waiting(stack.web_client) == []
    (told,) = said(stack, story.pr_number(), "took the quest up again")
    assert f"{REPO} was deleted" in told and "restored" in told
    since = len(stack.fake.requests)
    await story.approve("A", State.PLANNED)
    await story.approve("B", State.READY)
    quest = await story.approve("C", State.WATCHING)
    assert stack.fake.repo(REPO).branch_sha("main") == quest.merge_sha
    await stack.advance(CHECK_MINUTES)
    assert looks(stack, since) == []  # nothing waits: nothing is asked


async def test_on_all_repositories_a_repository_renamed_while_away_is_followed(
        stack: Stack) -> None:
    """The look asks by id: a repository back under another name (its rename's webhook never
    reached questbot) is the same repository, and questbot follows it to its new name."""
    on_all_repositories(stack)
    story = await deleted_under_a_parked_quest(stack)
    repo = stack.fake.restore_repository(REPO, user=MAINTAINER)
    number = story.pr_number()
    del stack.fake.world.repositories[REPO]  # renamed with nothing sent to the App
    repo.name = "pager"
    stack.fake.world.repositories["octo/pager"] = repo
    stack.fake.world.renamed[REPO] = repo.id
    await stack.advance(CHECK_MINUTES)
    quest = await stack.quest(story.quest_id)
    assert (quest.state, quest.repo) == (State.HYPOTHESISED, REPO)
    since = len(stack.fake.requests)
    await stack.fake.comment("octo/pager", number, "/approve A", user=MAINTAINER)
    await story.step("approved A under the new name", State.PLANNED)
    asked = stack.fake.requests[since:]
    assert any(e.path.startswith("/repos/octo/pager/") for e in asked)
    assert not any(e.path.startswith(f"/repos/{REPO}/") for e in asked)


async def test_on_all_repositories_a_new_repository_under_the_name_takes_up_nothing(
        stack: Stack) -> None:
    installation = on_all_repositories(stack)
    story = await deleted_under_a_parked_quest(stack)
    (old_id,) = stack.fake.world.deleted
    made = stack.fake.create_repository(REPO, {"README.md": "another"},
                                        installation_id=installation)
    since = len(stack.fake.requests)
    await stack.advance(CHECK_MINUTES)
    assert looks(stack, since) == [(f"/repositories/{old_id}", 404, installation)]
    assert made.id != old_id
    quest = await stack.quest(story.quest_id)
    assert (quest.state, quest.park_reason) == (State.PARKED, ParkReason.REPOSITORY_CHANGED)
    assert [q for q, _ in await waiting(stack.web_client)] == [story.quest_id]


@pytest.mark.parametrize("fault", ["5xx", "secondary", "429"])
async def test_a_look_that_fails_leaves_the_quest_waiting_until_the_next(
        stack: Stack, fault: str) -> None:
    """GitHub down, or a rate limit: the quest is neither taken up nor ended, and the next
    look asks again."""
    on_all_repositories(stack)
    story = await deleted_under_a_parked_quest(stack)
    (repo_id,) = stack.fake.world.deleted
    stack.fake.restore_repository(REPO, user=MAINTAINER)
    stack.fake.faults.aim(fault, "GET", f"/repositories/{repo_id}", times=5)
    sweep = stack.runtime.worker.restorable
    assert sweep is not None
    await stack.advance(CHECK_MINUTES)
    assert sweep.last_look.failed == 1 and sweep.last_look.back == 0
    quest = await stack.quest(story.quest_id)
    assert (quest.state, quest.park_reason) == (State.PARKED, ParkReason.REPOSITORY_CHANGED)
    assert [q for q, _ in await waiting(stack.web_client)] == [story.quest_id]
    stack.fake.faults.aimed.clear()
    await stack.advance(CHECK_MINUTES)
    assert sweep.last_look.back == 1
    assert (await stack.quest(story.quest_id)).state is State.HYPOTHESISED


async def test_a_look_that_keeps_failing_never_ends_the_quest_before_its_window(
        stack: Stack) -> None:
    on_all_repositories(stack)
    story = await deleted_under_a_parked_quest(stack)
    (repo_id,) = stack.fake.world.deleted
    stack.fake.faults.aim("5xx", "GET", f"/repositories/{repo_id}", times=1000)
    for _ in range(12):
        await stack.advance(7 * 24 * 60)  # a week
    quest = await stack.quest(story.quest_id)
    assert (quest.state, quest.park_reason) == (State.PARKED, ParkReason.REPOSITORY_CHANGED)


async def test_a_repository_in_another_installation_is_never_looked_at_through_this_one(
        stack: Stack) -> None:
    """questbot asks only through the installation the repository was deleted from. Restored
    into another installation's reach (here: moved to another account on all repositories, with
    nothing sent), it is not this installation's to see: 404, and the quest waits."""
    installation = on_all_repositories(stack)
    story = await deleted_under_a_parked_quest(stack)
    (repo_id,) = stack.fake.world.deleted
    repo = stack.fake.restore_repository(REPO, user=MAINTAINER)
    elsewhere = stack.fake.world.installation_for("elsewhere")
    elsewhere.repository_selection = "all"
    repo.installation_id = elsewhere.id
    since = len(stack.fake.requests)
    await stack.advance(CHECK_MINUTES)
    await stack.advance(CHECK_MINUTES)
    assert looks(stack, since) == [(f"/repositories/{repo_id}", 404, installation)] * 2
    assert all(held == installation for _, _, held in looks(stack))
    assert (await stack.quest(story.quest_id)).state is State.PARKED


async def test_on_all_repositories_an_added_webhook_takes_the_quest_up_before_any_look(
        stack: Stack) -> None:
    """Should GitHub send ``installation_repositories`` ``added`` for a restored repository on
    an installation on all repositories (undocumented either way), it is taken as on selected
    repositories, and the look has nothing left to ask."""
    installation = on_all_repositories(stack)
    story = await deleted_under_a_parked_quest(stack)
    stack.fake.restore_repository(REPO, user=MAINTAINER)
    await stack.fake.add_to_installation(REPO, installation, user=MAINTAINER)
    added = [d.delivery.payload for d in stack.fake.deliveries
             if d.delivery.event == "installation_repositories"][-1]
    assert added["repository_selection"] == "all"
    since = len(stack.fake.requests)
    await story.step("restored, and added on all repositories", State.HYPOTHESISED)
    assert looks(stack, since) == []
    await stack.advance(CHECK_MINUTES)
    assert looks(stack, since) == []


async def test_a_look_asks_once_per_repository_and_at_most_its_batch(stack: Stack) -> None:
    """Quests waiting on one repository cost one request a look; with more repositories
    waiting than a look asks about, each is asked in turn."""
    installation = on_all_repositories(stack)
    story = await deleted_under_a_parked_quest(stack)
    (repo_id,) = stack.fake.world.deleted
    memory = stack.runtime.worker.intake.memory
    at = stack.clock()
    # a second quest on the same repository, and one on another deleted repository
    await note_deleted(stack.web_client, memory, "q-second", repo_id, at, installation)
    await note_deleted(stack.web_client, memory, "q-other", 987_654, at, installation)
    sweep = stack.runtime.worker.restorable
    assert sweep is not None
    since = len(stack.fake.requests)
    await stack.advance(CHECK_MINUTES)
    assert sorted(looks(stack, since)) == [(f"/repositories/{repo_id}", 404, installation),
                                           ("/repositories/987654", 404, installation)]
    sweep.check_batch = 1
    since = len(stack.fake.requests)
    for _ in range(4):
        await stack.advance(CHECK_MINUTES)
    asked = [path for path, _, _ in looks(stack, since)]
    assert len(asked) == 4 and set(asked[0::2]) != set(asked[1::2])
    assert sorted(asked) == sorted([f"/repositories/{repo_id}", "/repositories/987654"] * 2)
    assert (await stack.quest(story.quest_id)).state is State.PARKED
