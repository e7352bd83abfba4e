"""The inbox issue on the fake, end to end: pinned, every entry linked, its boxes act like
Renovate's dependency dashboard (tick to start a quest routed to a person, or to retry a parked
one) for people who may act, once per edit however often GitHub delivers it, and it comes back
when a person closes it."""

from __future__ import annotations

import re

from bot.core import State
from bot.words.inbox_marks import boxes, entry_marker
from bot.words.render import INBOX_TITLE
from questbot_testing.fakegithub.issue_edits import close_issue, edit_issue, tick
from questbot_testing.fakegithub.state import Issue
from questbot_testing.scenario import MAINTAINER, READER, REPO, setup_repository
from questbot_testing.stack import Stack
from tests.e2e.test_github_flows import at_checkpoint_a, replies

SNAKE = re.compile(r"\b[a-z]+_[a-z_]+\b")


def inbox(stack: Stack) -> Issue:
    (found,) = [i for i in stack.fake.repo(REPO).issues.values() if i.title == INBOX_TITLE]
    return found


async def routed_to_a_person(stack: Stack) -> tuple[str, int]:
    await setup_repository(stack)
    issue = await stack.fake.open_issue(REPO, "the last page is missing", user=READER,
                                        labels=["questbot"])
    await stack.settle()
    (quest,) = await stack.quests(REPO)
    assert quest.state is State.TRIAGED and quest.awaiting_person
    return quest.id, issue.number


async def test_the_inbox_is_pinned_and_links_each_entry_with_a_box(stack: Stack) -> None:
    quest_id, number = await routed_to_a_person(stack)
    box = inbox(stack)
    assert box.pinned_at
    (line,) = [x for x in (box.body or "").splitlines() if entry_marker(quest_id) in x]
    assert line.startswith(f"- [ ] {entry_marker(quest_id)} #{number} ")
    assert "; tick the box to start the fix, as `/quest fix` would." in line
    assert boxes(box.body or "") == {quest_id: False}
    assert "  - why: routed to a person" in (box.body or "")  # while it waits so


async def test_a_maintainer_ticks_a_routed_quest_and_it_starts_once(stack: Stack) -> None:
    quest_id, _number = await routed_to_a_person(stack)
    number = inbox(stack).number
    sent = await tick(stack.fake, REPO, number, entry_marker(quest_id), user=MAINTAINER)
    await stack.settle()
    quest = await stack.quest(quest_id)
    assert quest.state is State.HYPOTHESISED  # started as /quest fix, researched
    version, _ = await stack.runtime.worker.journal.snapshot(quest_id)
    assert "[x]" not in (inbox(stack).body or "")  # written again: no box stays ticked
    assert "routed to a person" not in (inbox(stack).body or "")  # started: said no more
    await stack.fake.redeliver(sent.delivery)  # GitHub delivers the same edit again
    await stack.settle()
    assert (await stack.runtime.worker.journal.snapshot(quest_id))[0] == version
    assert replies(stack, number) == []
    assert len(stack.calls("issues/create")) == 1  # one inbox throughout


async def test_a_tick_by_someone_without_write_access_is_refused_once(stack: Stack) -> None:
    quest_id, _number = await routed_to_a_person(stack)
    number = inbox(stack).number
    sent = await tick(stack.fake, REPO, number, entry_marker(quest_id), user=READER)
    await stack.settle()
    await stack.fake.redeliver(sent.delivery)
    await stack.settle()
    quest = await stack.quest(quest_id)
    assert quest.state is State.TRIAGED and quest.awaiting_person  # nothing started
    (reply,) = replies(stack, number)
    assert f"@{READER} `/quest fix` was not applied: it needs write access" in reply
    assert f"quest `{quest_id}`" in reply
    assert not SNAKE.search(re.sub(r"<!--.*?-->", "", reply))
    assert boxes(inbox(stack).body or "") == {quest_id: False}


async def test_a_tick_on_a_quest_that_moved_on_is_refused_in_its_words(stack: Stack) -> None:
    """The box was rendered while the quest waited; it has started since (here: a box a
    maintainer typed for a quest at checkpoint A). The core refuses, the person is told why."""
    story = await at_checkpoint_a(stack)
    box = inbox(stack)
    await edit_issue(stack.fake, REPO, box.number, f"{box.body}\n- [ ] "
                     f"{entry_marker(story.quest_id)} start it", user=MAINTAINER)
    await stack.settle()
    await tick(stack.fake, REPO, box.number, entry_marker(story.quest_id), user=MAINTAINER)
    await stack.settle()
    assert (await stack.quest(story.quest_id)).state is State.HYPOTHESISED
    (reply,) = replies(stack, box.number)
    assert f"@{MAINTAINER} `/quest fix` was not applied: the quest is already under way" in reply
    assert "checkpoint A is open" in reply and "`/approve A`" in reply
    assert entry_marker(story.quest_id) not in (inbox(stack).body or "")  # no box at A


async def test_a_tick_retries_a_parked_quest(stack: Stack) -> None:
    story = await at_checkpoint_a(stack)
    await stack.fake.comment(REPO, story.pr_number(), "/pause after the release",
                             user=MAINTAINER)
    await story.step("paused", State.PARKED)
    box = inbox(stack)
    (line,) = [x for x in (box.body or "").splitlines() if entry_marker(story.quest_id) in x]
    assert f"#{story.pr_number()}" in line
    assert "; tick the box to retry it, as `/resume` would." in line
    await tick(stack.fake, REPO, box.number, entry_marker(story.quest_id), user=MAINTAINER)
    await story.step("ticked in the inbox", State.HYPOTHESISED)
    assert "[x]" not in (inbox(stack).body or "")


async def test_an_inbox_a_person_closed_is_opened_again(stack: Stack) -> None:
    quest_id, _number = await routed_to_a_person(stack)
    number = inbox(stack).number
    await close_issue(stack.fake, REPO, number, user=MAINTAINER)
    await stack.settle()
    assert inbox(stack).state == "open" and quest_id in (inbox(stack).body or "")
    assert len(stack.calls("issues/create")) == 1
