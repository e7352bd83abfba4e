"""Landing on repositories as people configure them, end to end on the strict fake: squash-only
and rebase-only repositories, required reviews, required checks and merge queues — always at
the approved head — and the pull request itself as a place to decide: GitHub reviews count as
decisions, and closing it by hand pauses the quest."""

from __future__ import annotations

from collections.abc import Callable

from bot.core import Quest, State
from questbot_testing.fakegithub.state import Repository
from questbot_testing.sample import sample_files
from questbot_testing.scenario import MAINTAINER, READER, REPO, SETTINGS, Story
from questbot_testing.stack import Stack
from tests.e2e.test_github_flows import at_checkpoint_a

Configure = Callable[[Repository], None]


async def at_checkpoint_c(stack: Stack, configure: Configure = lambda repo: None, *,
                          settings: str = SETTINGS) -> Story:
    """A quest on a repository set up by ``configure``, proved and waiting at checkpoint C."""
    repo = stack.fake.create_repository(REPO, {**sample_files(),
                                               ".github/questbot.yml": settings})
    stack.fake.set_permission(REPO, MAINTAINER, "write")
    stack.fake.set_permission(REPO, READER, "read")
    configure(repo)
    await stack.fake.fail_check(REPO, str(repo.branch_sha("main")), name="tests")
    await stack.settle()
    (quest,) = await stack.quests(REPO)
    story = Story(stack, quest_id=quest.id)
    await story.step("researched", State.HYPOTHESISED)
    await story.approve("A", State.PLANNED)
    await story.approve("B", State.READY)
    return story


def replies(stack: Stack, number: int) -> list[str]:
    return [c.body for c in stack.fake.repo(REPO).comments.values()
            if c.issue_number == number and "questbot:" in c.body
            and "questbot:status" not in c.body]


def landed_at_the_approved_head(stack: Stack, story: Story, quest: Quest) -> None:
    pr = stack.fake.repo(REPO).pulls[story.pr_number()]
    assert quest.state is State.WATCHING and pr.merged
    assert quest.c_approval is not None and pr.head_sha == quest.c_approval.head
    assert quest.merge_sha == pr.merge_commit_sha == stack.fake.repo(REPO).branch_sha("main")


# -- the merge method ---------------------------------------------------------------------------


async def test_a_squash_only_repository_lands_one_squashed_commit(stack: Stack) -> None:
    def squash_only(repo: Repository) -> None:
        repo.allow_merge_commit = repo.allow_rebase_merge = False

    story = await at_checkpoint_c(stack, squash_only)
    quest = await story.approve("C", State.WATCHING)
    (merge,) = stack.calls("pulls/merge")  # no 405 first: the method came from repos/get
    assert merge.json["merge_method"] == "squash" and merge.json["sha"] == quest.head
    landed_at_the_approved_head(stack, story, quest)
    repo = stack.fake.repo(REPO)
    assert len(repo.git.commits[quest.merge_sha or ""].parents) == 1


async def test_a_rebase_only_repository_lands_by_rebase(stack: Stack) -> None:
    def rebase_only(repo: Repository) -> None:
        repo.allow_merge_commit = repo.allow_squash_merge = False

    story = await at_checkpoint_c(stack, rebase_only)
    quest = await story.approve("C", State.WATCHING)
    (merge,) = stack.calls("pulls/merge")
    assert merge.json["merge_method"] == "rebase" and merge.json["sha"] == quest.head
    landed_at_the_approved_head(stack, story, quest)


async def test_the_settings_may_choose_the_method(stack: Stack) -> None:
    story = await at_checkpoint_c(stack, settings=SETTINGS + "merge_method: rebase\n")
    quest = await story.approve("C", State.WATCHING)
    (merge,) = stack.calls("pulls/merge")
    assert merge.json["merge_method"] == "rebase" and merge.json["sha"] == quest.head


async def test_a_chosen_method_the_repository_forbids_is_told_not_tried(stack: Stack) -> None:
    def squash_only(repo: Repository) -> None:
        repo.allow_merge_commit = repo.allow_rebase_merge = False

    story = await at_checkpoint_c(stack, squash_only,
                                  settings=SETTINGS + "merge_method: merge\n")
    quest = await story.approve("C", State.PARKED)  # never stuck in landing: parked, told why
    assert stack.calls("pulls/merge") == []  # never a 405, never a loop
    (told,) = [r for r in replies(stack, story.pr_number()) if "merge_method" in r]
    assert "`merge_method: merge`" in told and "it allows squash merging" in told
    assert "/resume the quest" in told
    assert quest.failed_effects == 1 and "merge_method" in (quest.last_failure or "")
    # the maintainer does what it says: the setting goes (a push to main, so the approved
    # change is proved again on the new base and C asked again), then /resume, and it lands
    # with the method the repository allows
    await stack.fake.push(REPO, "main", {".github/questbot.yml": SETTINGS}, user=MAINTAINER,
                          message="merge as the repository allows")
    await stack.settle()
    await stack.fake.comment(REPO, story.pr_number(), "/resume", user=MAINTAINER)
    await story.step("maya resumed it", State.READY)
    quest = await story.approve("C", State.WATCHING)
    assert [c.json["merge_method"] for c in stack.calls("pulls/merge")] == ["squash"]
    landed_at_the_approved_head(stack, story, quest)


async def test_linear_history_lands_without_a_merge_commit(stack: Stack) -> None:
    def linear(repo: Repository) -> None:
        repo.linear_history = True

    story = await at_checkpoint_c(stack, linear)
    quest = await story.approve("C", State.WATCHING)
    assert [(c.json["merge_method"], c.status) for c in stack.calls("pulls/merge")] == [
        ("merge", 405), ("squash", 200)]
    landed_at_the_approved_head(stack, story, quest)


# -- required reviews ---------------------------------------------------------------------------


def one_review(*, auto_merge: bool) -> Configure:
    def configure(repo: Repository) -> None:
        repo.required_reviews, repo.allow_auto_merge = 1, auto_merge
    return configure


async def test_a_github_approval_at_c_is_approve_c_and_satisfies_a_required_review(
        stack: Stack) -> None:
    story = await at_checkpoint_c(stack, one_review(auto_merge=False))
    ready = await stack.quest(story.quest_id)
    await stack.fake.review(REPO, story.pr_number(), "APPROVE", user=MAINTAINER)
    quest = await story.step("maya approved the pull request on GitHub", State.WATCHING)
    (merge,) = stack.calls("pulls/merge")
    assert merge.json["sha"] == ready.head
    landed_at_the_approved_head(stack, story, quest)


async def test_a_required_review_with_auto_merge_lands_when_the_review_comes(
        stack: Stack) -> None:
    story = await at_checkpoint_c(stack, one_review(auto_merge=True))
    quest = await story.approve("C", State.LANDING)
    (enable,) = stack.calls("graphql/enablePullRequestAutoMerge")
    assert enable.json["variables"]["head"] == quest.head
    assert any("auto-merge" in r and "approving review" in r
               for r in replies(stack, story.pr_number()))
    await stack.fake.review(REPO, story.pr_number(), "APPROVE", user=MAINTAINER)
    quest = await story.step("GitHub merged it once maya approved", State.WATCHING)
    landed_at_the_approved_head(stack, story, quest)
    assert len(stack.calls("pulls/merge")) == 1  # the one GitHub refused; GitHub merged it


async def test_a_required_review_without_auto_merge_is_asked_of_a_person(stack: Stack) -> None:
    story = await at_checkpoint_c(stack, one_review(auto_merge=False))
    number = story.pr_number()
    await story.approve("C", State.LANDING)
    (asked,) = [r for r in replies(stack, number) if "approving review" in r]
    assert f"@{MAINTAINER}" in asked and "Approve" in asked
    assert stack.fake.repo(REPO).pulls[number].requested_reviewers == [MAINTAINER]
    quest = await stack.quest(story.quest_id)
    await stack.fake.review(REPO, number, "APPROVE", user=MAINTAINER, commit_id=quest.base)
    await story.step("maya approved an older commit", State.LANDING)
    assert any("your approval is of" in r for r in replies(stack, number))
    assert len(stack.calls("pulls/merge")) == 1  # it approves nothing: no merge is tried
    await stack.fake.review(REPO, number, "APPROVE", user=MAINTAINER)
    quest = await story.step("maya approved; questbot merged it", State.WATCHING)
    landed_at_the_approved_head(stack, story, quest)
    assert [c.json["sha"] for c in stack.calls("pulls/merge")] == [quest.head] * 2


# -- reviews as decisions -----------------------------------------------------------------------


async def test_an_approval_of_an_older_commit_does_not_approve_the_head(stack: Stack) -> None:
    story = await at_checkpoint_c(stack)
    quest = await stack.quest(story.quest_id)
    old = quest.base or ""
    await stack.fake.review(REPO, story.pr_number(), "APPROVE", user=MAINTAINER,
                            commit_id=old)
    await story.step("maya approved an older commit", State.READY)
    (said,) = [r for r in replies(stack, story.pr_number()) if "your approval is of" in r]
    assert old[:7] in said and (quest.head or "")[:7] in said and "/approve C" in said


async def test_a_review_decides_only_for_those_who_may(stack: Stack) -> None:
    story = await at_checkpoint_c(stack)
    await stack.fake.review(REPO, story.pr_number(), "APPROVE", user=READER)
    await story.step("rex (read access) approved", State.READY)
    assert any(f"@{READER}" in r and "write access" in r
               for r in replies(stack, story.pr_number()))


async def test_request_changes_is_revise_with_its_body(stack: Stack) -> None:
    story = await at_checkpoint_c(stack)
    before = await stack.quest(story.quest_id)
    await stack.fake.review(REPO, story.pr_number(), "REQUEST_CHANGES", user=MAINTAINER,
                            body="Please keep the old name.\nAnd add a test.")
    await stack.settle()
    quest = await stack.quest(story.quest_id)
    assert quest.decisions == before.decisions + 1
    events = await stack.runtime.worker.journal.events(story.quest_id)
    (revise,) = [e for e in events if e.type == "checkpoint_decided"
                 and getattr(e, "verdict", None) == "revise"]
    assert revise.reason == "Please keep the old name. And add a test."
    assert revise.actor == MAINTAINER


# -- required checks and the merge queue --------------------------------------------------------


async def test_a_required_check_hands_the_merge_to_auto_merge(stack: Stack) -> None:
    def required_check(repo: Repository) -> None:
        repo.required_checks, repo.allow_auto_merge = ["lint"], True

    story = await at_checkpoint_c(stack, required_check)
    quest = await story.approve("C", State.LANDING)
    await stack.fake.pass_check(REPO, quest.head or "", "lint")
    quest = await story.step("lint passed on the head; GitHub merged it", State.WATCHING)
    landed_at_the_approved_head(stack, story, quest)


async def test_a_required_check_without_auto_merge_waits_for_a_merge_by_hand(
        stack: Stack) -> None:
    def required_check(repo: Repository) -> None:
        repo.required_checks = ["lint"]

    story = await at_checkpoint_c(stack, required_check)
    quest = await story.approve("C", State.LANDING)
    number = story.pr_number()
    (told,) = [r for r in replies(stack, number) if "auto-merge is off" in r]
    assert "merge" in told and (quest.head or "")[:7] in told
    await stack.fake.pass_check(REPO, quest.head or "", "lint")
    repo = stack.fake.repo(REPO)
    await stack.fake.merge_pull(repo, repo.pulls[number], MAINTAINER, "merge", None)
    quest = await story.step("maya merged it by hand", State.WATCHING)
    landed_at_the_approved_head(stack, story, quest)


async def test_a_merge_queue_repository_lands_through_the_queue(stack: Stack) -> None:
    def queued(repo: Repository) -> None:
        repo.merge_queue = True

    story = await at_checkpoint_c(stack, queued)
    quest = await story.approve("C", State.LANDING)
    (enqueue,) = stack.calls("graphql/enqueuePullRequest")
    assert enqueue.json["variables"]["head"] == quest.head
    assert any("merge queue" in r for r in replies(stack, story.pr_number()))
    assert await stack.fake.settle_merges(REPO) == [story.pr_number()]
    quest = await story.step("the queue merged it", State.WATCHING)
    landed_at_the_approved_head(stack, story, quest)


# -- closing and reopening the pull request -----------------------------------------------------


async def test_closing_the_pull_request_pauses_and_reopening_resumes(stack: Stack) -> None:
    story = await at_checkpoint_c(stack)
    number = story.pr_number()
    await stack.fake.close_pull(REPO, number, user=MAINTAINER)
    quest = await story.step("maya closed the pull request", State.PARKED)
    assert any("paused" in r and "Reopen" in r for r in replies(stack, number))
    await stack.fake.reopen_pull(REPO, number, user=MAINTAINER)
    quest = await story.step("maya reopened it", State.READY)
    assert quest.revision == 1
    await story.approve("C", State.WATCHING)


async def test_a_quest_paused_by_a_person_stays_paused_when_its_pull_request_reopens(
        stack: Stack) -> None:
    story = await at_checkpoint_c(stack)
    number = story.pr_number()
    await stack.fake.comment(REPO, number, "/pause waiting for the release", user=MAINTAINER)
    await story.step("maya paused it", State.PARKED)
    await stack.fake.close_pull(REPO, number, user=MAINTAINER)
    await stack.fake.reopen_pull(REPO, number, user=MAINTAINER)
    await story.step("closed and reopened", State.PARKED)


async def test_a_github_approval_before_c_says_which_command_would_act(stack: Stack) -> None:
    story = await at_checkpoint_a(stack)
    await stack.fake.review(REPO, story.pr_number(), "APPROVE", user=MAINTAINER)
    await story.step("maya approved the draft at checkpoint A", State.HYPOTHESISED)
    (said,) = [r for r in replies(stack, story.pr_number()) if "GitHub approval" in r]
    assert "checkpoint C only" in said and "`/approve A`" in said
