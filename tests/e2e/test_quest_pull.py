"""The quest's pull request from research on, on GitHub as strict as GitHub: opened as a draft
on a branch whose first commit is questbot's own (GitHub refuses a pull request with no
commits), linked from the issue it came from, marked ready for review through GraphQL at
checkpoint C, and landed — GitHub does not merge a draft."""

from __future__ import annotations

from typing import Any

import pytest

from bot.core import State
from questbot_testing.fakegithub.graphql import Refused
from questbot_testing.fakegithub.graphql_resolvers import Roots
from questbot_testing.scenario import MAINTAINER, READER, REPO, Story, setup_repository
from questbot_testing.stack import Stack
from tests.e2e.test_github_flows import at_checkpoint_a


async def test_the_pr_opens_at_research_on_an_empty_first_commit_saying_what_it_is_for(
        stack: Stack) -> None:
    story = await at_checkpoint_a(stack)
    repo = stack.fake.repo(REPO)
    pr = repo.pulls[story.pr_number()]
    assert pr.draft and pr.head_ref == f"quest/{story.quest_id}"
    first = repo.git.commits[pr.head_sha]
    main = repo.git.commits[repo.refs["refs/heads/main"]]
    assert first.parents == (main.sha,) and first.tree == main.tree  # changes no file
    assert first.message.startswith("questbot: start work on the failing `tests` check\n\n")
    assert story.quest_id not in first.message  # what it is for, not questbot's bookkeeping
    (create,) = stack.calls("pulls/create")
    assert create.status == 201 and create.json["draft"] is True  # the first try, not a retry
    (run,) = [r for r in repo.check_runs.values() if r.name == "questbot"]
    assert run.head_sha == pr.head_sha
    assert stack.calls("graphql/markPullRequestReadyForReview") == []  # not reviewable yet


async def test_at_checkpoint_c_the_draft_is_marked_ready_once_and_lands(stack: Stack) -> None:
    story = await at_checkpoint_a(stack)
    pr = stack.fake.repo(REPO).pulls[story.pr_number()]
    await story.approve("A", State.PLANNED)
    assert pr.draft  # a plan is not a change to review
    runs = [r for r in stack.fake.repo(REPO).check_runs.values() if r.name == "questbot"]
    assert (runs[-1].head_sha, runs[-1].conclusion) == (pr.head_sha, "action_required")
    assert stack.fake.repo(REPO).git.commits[pr.head_sha].message.startswith("Reproduce")
    await story.approve("B", State.READY)
    assert not pr.draft
    (marked,) = stack.calls("graphql/markPullRequestReadyForReview")
    assert marked.status == 200 and marked.json["input"]["pullRequestId"].startswith("PR_")
    # the fake's pull_request ready_for_review is tested in
    # tests/questbot_testing/fakegithub/test_graphql.py; app.yml does not subscribe to
    # pull_request, so here it is not sent
    quest = await story.approve("C", State.WATCHING)
    assert pr.merged and stack.calls("pulls/merge")[-1].json["sha"] == quest.head
    assert len(stack.calls("graphql/markPullRequestReadyForReview")) == 1


async def test_a_quest_from_an_issue_links_its_pull_request_from_the_issue(
        stack: Stack) -> None:
    await setup_repository(stack)
    issue = await stack.fake.open_issue(REPO, "the last page is missing", user=READER,
                                        labels=["questbot"])
    await stack.settle()
    await stack.fake.comment(REPO, issue.number, "/quest fix", user=MAINTAINER)
    await stack.settle()
    (quest,) = await stack.quests(REPO)
    story = Story(stack, quest_id=quest.id)
    number = story.pr_number()
    repo = stack.fake.repo(REPO)
    on_issue = [c.body for c in repo.comments.values() if c.issue_number == issue.number
                and c.user == "questbot[bot]" and "questbot:status" in c.body]
    assert on_issue == [f"<!-- questbot:status quest={quest.id} -->\nquestbot's status for "
                        f"this quest now lives on #{number}.\n"]
    assert f"#{issue.number}" in (repo.issues[number].body or "")
    assert "hypothesised" in story.status_comment()


async def test_where_the_plan_has_no_drafts_the_pr_is_an_ordinary_one(stack: Stack) -> None:
    await setup_repository(stack)
    stack.fake.repo(REPO).drafts_supported = False
    story = Story(stack)
    main = str(stack.fake.repo(REPO).branch_sha("main"))
    await stack.fake.fail_check(REPO, main, name="tests")
    await stack.settle()
    (quest,) = await stack.quests(REPO)
    story.quest_id = quest.id
    await story.step("researched", State.HYPOTHESISED)
    assert not stack.fake.repo(REPO).pulls[story.pr_number()].draft
    assert [c.status for c in stack.calls("pulls/create")] == [422, 201]


@pytest.mark.parametrize("github", ["ignores", "refuses"])
async def test_a_pull_request_a_person_marked_ready_is_left_so(
        stack: Stack, github: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """questbot marks its draft ready at C without reading it first (its node id is recorded
    at opening). A maintainer who marked it ready already loses nothing — whether GitHub
    answers that mutation on a ready pull request as a no-op (the fake) or refuses it (as one
    report says it may: then questbot reads the pull request, sees it ready, and goes on)."""
    if github == "refuses":
        resolve = Roots.markPullRequestReadyForReview

        async def strict(self: Roots, input: dict[str, Any]) -> Any:
            _repo, pr = self._pull(input["pullRequestId"])
            if not pr.draft:
                raise Refused("UNPROCESSABLE", "Pull request is not in draft state")
            return await resolve(self, input)

        monkeypatch.setattr(Roots, "markPullRequestReadyForReview", strict)
    story = await at_checkpoint_a(stack)
    repo = stack.fake.repo(REPO)
    pr = repo.pulls[story.pr_number()]
    await story.approve("A", State.PLANNED)
    await stack.fake.set_draft(repo, pr, False, user=MAINTAINER)
    await story.approve("B", State.READY)
    assert not pr.draft
    # asked once, in the view's one request: refused, questbot read the pull request instead
    assert [c.status for c in stack.calls("graphql/markPullRequestReadyForReview")] == (
        [200] if github == "ignores" else [422])
    reads = len(stack.calls("pulls/get"))
    quest = await story.approve("C", State.WATCHING)
    assert pr.merged and stack.calls("pulls/merge")[-1].json["sha"] == quest.head
    assert len(stack.calls("pulls/get")) == reads + 1  # the merge's own read, nothing more
