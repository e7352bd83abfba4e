"""The watch on real evidence: only a failure on the merge commit or a later commit of the
default branch counts, and only once questbot's re-run of it fails too; then the revert is a
pull request merged at the head questbot made, and the quest starts again from main's head on
a fresh branch and pull request. A stale failure, or a re-run that passes, reverts nothing.
Triage's re-run of the first failure before research is off here (`NO_RERUN`, `test_flaky`)."""

from __future__ import annotations

import pytest

from bot.core import State
from questbot_testing.fakegithub import ci
from questbot_testing.scenario import GREEN, MAINTAINER, RED, REPO, landed
from questbot_testing.stack import Stack


def reverts(stack: Stack) -> list[object]:
    return [p for p in stack.fake.repo(REPO).pulls.values() if "-revert-" in p.head_ref]


def reruns(stack: Stack) -> list[object]:
    return [c for c in stack.calls("actions/re-run-workflow-failed-jobs") if c.status == 201]


async def test_a_failure_on_a_commit_older_than_the_merge_reverts_nothing(stack: Stack) -> None:
    story, before_merge = await landed(stack)
    quest = await stack.quest(story.quest_id)
    assert quest.merge_sha != before_merge
    old = ci.actions_run(stack.fake, REPO, before_merge, RED)  # someone re-ran the old CI
    await ci.deliver(stack.fake, ci.completed(stack.fake, REPO, old))
    await stack.settle()
    quest = await stack.quest(story.quest_id)
    assert quest.state is State.WATCHING and quest.suspects == ()
    assert reruns(stack) == [] and reverts(stack) == []
    assert [c.path.rsplit("/", 1)[-1] for c in stack.calls("repos/compare-commits")] == [
        f"{quest.merge_sha}...{before_merge}"]  # asked once: the order of two commits is fixed
    await stack.advance(61)
    assert (await stack.quest(story.quest_id)).state is State.CLOSED
    again = ci.actions_run(stack.fake, REPO, before_merge, RED)  # and after the watch: nothing
    await ci.deliver(stack.fake, ci.completed(stack.fake, REPO, again))
    await stack.settle()
    assert (await stack.quest(story.quest_id)).state is State.CLOSED
    assert len(await stack.quests(REPO)) == 1


@pytest.mark.parametrize("new_suite", [False, True], ids=["same suite", "new suite"])
async def test_a_failure_after_the_merge_confirmed_by_a_rerun_is_reverted_and_started_again(
        stack: Stack, new_suite: bool) -> None:
    story, _ = await landed(stack)
    repo = stack.fake.repo(REPO)
    old_pr = repo.pulls[story.pr_number()]
    merge_sha = str(repo.branch_sha("main"))
    run = ci.actions_run(stack.fake, REPO, merge_sha, RED, new_suite_per_attempt=new_suite)
    ci.script_rerun(run, RED)
    first = ci.completed(stack.fake, REPO, run)
    await ci.deliver(stack.fake, first)
    quest = await story.step("CI failed on the merge commit; its re-run failed too",
                             State.HYPOTHESISED, 2)
    (rerun,) = reruns(stack)  # one re-run of the failed jobs for the four reports
    assert rerun.path.endswith(f"/actions/runs/{run.id}/rerun-failed-jobs")
    assert run.run_attempt == 2
    (revert,) = reverts(stack)
    assert revert.merged  # type: ignore[attr-defined]
    merges = [c for c in stack.calls("pulls/merge") if c.status == 200]
    assert merges[-1].json["sha"] == revert.head_sha  # type: ignore[attr-defined]
    assert revert.head_sha != merge_sha  # type: ignore[attr-defined]
    assert b"return total // per_page" in repo.git.read(str(repo.branch_sha("main")),
                                                         "pager.py")  # reverted on main
    # started again from main's head after the revert, on a fresh branch and pull request
    assert quest.base == revert.merge_commit_sha  # type: ignore[attr-defined]
    assert quest.branch == f"quest/{quest.id}-r2" and quest.merge_sha is None
    fresh = [p for p in repo.pulls.values() if p.head_ref == quest.branch]
    assert len(fresh) == 1 and not fresh[0].merged and fresh[0].number != old_pr.number
    assert old_pr.merged and old_pr.head_ref == f"quest/{quest.id}"
    moved = [c.body for c in repo.comments.values() if c.issue_number == old_pr.number
             and "questbot:status" in c.body]
    assert any(f"now lives on #{fresh[0].number}" in body for body in moved)
    assert len(await stack.quests(REPO)) == 1


async def test_a_rerun_that_passes_is_flaky_evidence_and_the_watch_goes_on(
        stack: Stack) -> None:
    story, _ = await landed(stack)
    merge_sha = str(stack.fake.repo(REPO).branch_sha("main"))
    run = ci.actions_run(stack.fake, REPO, merge_sha, RED)
    ci.script_rerun(run, GREEN)
    await ci.deliver(stack.fake, ci.completed(stack.fake, REPO, run))
    await stack.settle()
    quest = await stack.quest(story.quest_id)
    assert len(reruns(stack)) == 1 and run.run_attempt == 2
    assert quest.state is State.WATCHING and quest.suspects == ()
    assert quest.flaky >= 2  # both jobs passed where they had failed
    assert reverts(stack) == []
    await stack.advance(61)
    assert (await stack.quest(story.quest_id)).state is State.CLOSED
    assert reverts(stack) == []


async def test_a_rollback_after_a_pause_in_the_watch_reverts_what_landed(stack: Stack) -> None:
    """Paused during the watch, the quest still hears its base move (a person's commit on
    main) — which once ended its C approval and moved its base, so the rollback reverted
    against the new main and left the landed change in place (issue 22, item 6). What landed
    is what is reverted, and the person's commit stays."""
    story, _ = await landed(stack)
    repo = stack.fake.repo(REPO)
    number = story.pr_number()
    await stack.fake.comment(REPO, number, "/pause a release first", user=MAINTAINER)
    await story.step("maya paused the watch", State.PARKED)
    person = await stack.fake.push(REPO, "main", {"NOTES.md": "release notes\n"}, user="carol")
    await stack.settle()
    await stack.fake.comment(REPO, number, "/resume", user=MAINTAINER)
    await story.step("maya resumed it", State.WATCHING)
    run = ci.actions_run(stack.fake, REPO, person.sha, RED)
    ci.script_rerun(run, RED)
    await ci.deliver(stack.fake, ci.completed(stack.fake, REPO, run))
    await story.step("CI failed after the merge; its re-run failed too", State.HYPOTHESISED, 2)
    (revert,) = reverts(stack)
    assert revert.merged  # type: ignore[attr-defined]
    main = str(repo.branch_sha("main"))
    assert b"return total // per_page" in repo.git.read(main, "pager.py")  # the fix reverted
    assert repo.git.read(main, "NOTES.md") == b"release notes\n"  # carol's commit kept
