"""``/help`` on GitHub: one reply with the commands that work here and now, for that quest and
that person; anyone may ask; and nothing about the quest on a pull request of another
repository, even one whose branch carries the quest's name."""

from __future__ import annotations

import re

from bot.core import State
from questbot_testing.scenario import MAINTAINER, READER, REPO, sample_files
from questbot_testing.stack import Stack
from tests.e2e.test_github_flows import at_checkpoint_a, replies
from tests.e2e.test_refusals import SNAKE, bot_writes, said

OTHER = "octo/elsewhere"


async def test_help_answers_each_person_once_with_what_they_may_do_now(stack: Stack) -> None:
    story = await at_checkpoint_a(stack)
    number = story.pr_number()
    await stack.fake.comment(REPO, number, "/help", user=MAINTAINER)
    reader = await stack.fake.comment(REPO, number, "Where is this going?\n/help", user=READER)
    await stack.settle()
    await stack.fake.redeliver(stack.fake.deliveries[-1].delivery)  # GitHub's redelivery
    await stack.settle()
    texts = [said(r) for r in replies(stack, number)]
    assert len(texts) == 2  # once each, the redelivery absorbed
    (maintainer,) = [t for t in texts if t.startswith(f"@{MAINTAINER} ")]
    (read_only,) = [t for t in texts if t.startswith(f"@{READER} ")]
    for usage in ("`/approve A`", "`/claim`", "`/status`"):
        assert usage in maintainer
    assert re.search(r"`/revise [a-z ,]+`: the agent researches again", maintainer)
    assert "`/approve A`" not in read_only and "`/status`" in read_only
    assert "write access" in read_only
    for text in texts:
        assert not SNAKE.search(text.replace("questbot.yml", "")), text
    assert stack.fake.repo(REPO).comments[reader.id].reactions == [("questbot[bot]", "eyes")]
    assert (await stack.quest(story.quest_id)).state is State.HYPOTHESISED  # reading only


async def test_help_on_a_pull_request_of_another_repository_says_nothing_of_the_quest(
        stack: Stack) -> None:
    story = await at_checkpoint_a(stack)
    other = stack.fake.create_repository(OTHER, sample_files())
    stack.fake.set_permission(OTHER, MAINTAINER, "write")
    branch = f"quest/{story.quest_id}"  # named like the quest, in another repository
    await stack.fake.push(OTHER, branch, {"NOTES.md": "elsewhere\n"}, user=MAINTAINER)
    pr = await stack.fake.open_pull_request(OTHER, branch, user=MAINTAINER)
    await stack.settle()
    since = len(stack.fake.requests)
    await stack.fake.comment(OTHER, pr.number, "/help", user=MAINTAINER)
    await stack.settle()
    assert bot_writes(stack, since) == []  # no reaction, no reply: Prow's /help there
    assert not any("questbot:reply" in c.body for c in other.comments.values())
    await stack.fake.comment(OTHER, pr.number, "/status", user=MAINTAINER)  # it was heard
    await stack.settle()
    (answer,) = [c.body for c in other.comments.values() if "questbot:reply" in c.body]
    assert "no quest on this thread" in answer and story.quest_id not in answer
