"""Seed 003's limits and attempts end to end on the fake (issue 14, items 3 and 6): a rejection
at B starts attempt 2 with attempt 1 still shown; the eighth live quest waits in the inbox and
starts when a slot frees; a reflection wave holds new quests until a maintainer's reflection
passes."""

from __future__ import annotations

import asyncio
import json
import re

import pytest

from bot.__main__ import main
from bot.core import Quest, State
from bot.core.events.signals import Hold
from bot.core.policy import Checkpoint
from bot.words.render import INBOX_TITLE
from questbot_testing.fakegithub.state import Issue
from questbot_testing.scenario import MAINTAINER, READER, REPO, SETTINGS, setup_repository
from questbot_testing.stack import Stack
from tests.e2e.test_github_flows import at_checkpoint_a, replies
from tests.words.surface import problems

SNAKE = re.compile(r"\b[a-z]+_[a-z_]+\b")
ISSUES_START = SETTINGS + "routes: {issue: auto_fix}\n"


def inbox(stack: Stack) -> Issue:
    (found,) = [i for i in stack.fake.repo(REPO).issues.values() if i.title == INBOX_TITLE]
    return found


def words(body: str) -> str:
    """What people read: the body without its hidden markers."""
    return re.sub(r"<!--.*?-->", "", body)


async def test_a_rejection_at_b_starts_attempt_two_and_attempt_one_stays_shown(
        stack: Stack, redis_url: str, capsys: pytest.CaptureFixture[str]) -> None:
    story = await at_checkpoint_a(stack)
    await story.approve("A", State.PLANNED)
    first = await story.stack.quest(story.quest_id)
    sealed = first.seal(Checkpoint.B)
    assert sealed is not None and first.attempt_number == 1
    await stack.fake.comment(REPO, story.pr_number(), "/revise say which checks must pass",
                             user=MAINTAINER)
    quest = await story.step("@maya sent the plan back", State.PLANNED)  # the agent planned again
    assert quest.attempt_number == 2
    (old,) = quest.attempt_log
    assert old.number == 1 and old.plan == first.plan and old.reason == \
        "say which checks must pass"
    resealed = quest.seal(Checkpoint.B)
    assert old.seals == first.seals and resealed is not None and resealed != sealed
    body = story.status_comment()
    assert "**Attempts:** attempt 2" in body and "Attempt 1 (revision 1) ended because " \
        "checkpoint B sent the plan back to be written again" in body
    assert "checkpoint B sent back by `maya`" in body
    shown = body.split("<summary>Earlier attempts</summary>")[1].split("</details>")[0]
    assert "checkpoint A approved by `maya`" in shown
    assert not SNAKE.search(re.sub(r"`[^`]*`", "", shown))  # the agent's own words are code
    # the CLI runs its own event loop: in a thread, as an operator's shell would
    assert await asyncio.to_thread(main, ["status", story.quest_id, "--redis", redis_url,
                                          "--json"]) == 0
    status = json.loads(capsys.readouterr().out)
    assert status["attempt_number"] == 2
    assert [a["number"] for a in status["attempt_log"]] == [1]
    assert status["gates"][1]["seal"]["digest"] == resealed.digest
    assert await asyncio.to_thread(main, ["status", story.quest_id, "--redis", redis_url]) == 0
    text = capsys.readouterr().out
    assert "earlier attempts:" in text and "Attempt 1 (revision 1)" in text


async def open_quests(stack: Stack, n: int, *, start: int = 0) -> list[Issue]:
    issues = []
    for i in range(start, start + n):
        issues.append(await stack.fake.open_issue(REPO, f"bug number {i}", user=READER,
                                                  labels=["questbot"]))
        await stack.settle()
    return issues


def quest_of(quests: list[Quest], issue: Issue) -> Quest:
    (found,) = [q for q in quests if q.fingerprint == f"issue:{issue.number}"]
    return found


async def test_the_eighth_live_quest_waits_in_the_inbox_and_starts_when_a_slot_frees(
        stack: Stack) -> None:
    await setup_repository(stack, ISSUES_START)
    issues = await open_quests(stack, 8)
    quests = await stack.quests(REPO)
    working = [q for q in quests if q.state is State.HYPOTHESISED]
    waiting = [q for q in quests if q.state is State.SENSED]
    assert len(working) == 7 and len(waiting) == 1
    (eighth,) = waiting
    assert eighth.held is Hold.SLOT and eighth.fingerprint == f"issue:{issues[7].number}"
    body = words(inbox(stack).body or "")
    assert "### Waiting to start" in body and "At most 7 quests are worked on at once" in body
    assert f"- #{issues[7].number} **{eighth.title}**: waits for a free slot" in body
    assert eighth.id not in body and not SNAKE.search(body)
    await stack.fake.comment(REPO, issues[0].number, "/kill not worth it", user=MAINTAINER)
    await stack.settle()
    started = await stack.quest(eighth.id)
    assert started.state is State.HYPOTHESISED and started.held is None
    assert "Waiting to start" not in (inbox(stack).body or "")
    # its entry at checkpoint A no longer says why it waited to start: it started
    assert "free slot" not in (inbox(stack).body or "")


async def test_a_reflection_wave_holds_new_quests_until_a_reflection_passes(
        stack: Stack) -> None:
    await setup_repository(stack, ISSUES_START + "reflection: {after_bad_endings: 2, "
                                                "window_hours: 24}\n")
    first = await open_quests(stack, 2)
    for issue in first:
        await stack.fake.comment(REPO, issue.number, "/kill wrong idea", user=MAINTAINER)
        await stack.settle()
    (third,) = await open_quests(stack, 1, start=2)
    held = quest_of(await stack.quests(REPO), third)
    assert held.state is State.SENSED and held.held is Hold.REFLECTION
    box = inbox(stack)
    body = words(box.body or "")
    assert "### A reflection is due" in body
    assert "At least 2 quests ended badly within 24 hours" in body
    assert "`/reflect <what went wrong and what changes>`" in body and not SNAKE.search(body)
    await stack.fake.comment(REPO, box.number, "/reflect we guessed", user=READER)
    await stack.settle()
    assert (await stack.quest(held.id)).state is State.SENSED
    await stack.fake.comment(REPO, box.number, "/reflect both fixes guessed at the cause; "
                             "research now starts from the failing log", user=MAINTAINER)
    await stack.settle()
    started = await stack.quest(held.id)
    assert started.state is State.HYPOTHESISED and started.held is None
    said = [r for r in replies(stack, box.number) if "reflection passed" in r]
    assert len(said) == 1 and "1 waiting quest starts now" in said[0]
    assert any("needs write access" in r for r in replies(stack, box.number))
    body = words(inbox(stack).body or "")
    assert "A reflection is due" not in body and "waits for a reflection" not in body
    assert problems(body) == []
    (fourth,) = await open_quests(stack, 1, start=3)  # the wave is over: new quests start
    assert quest_of(await stack.quests(REPO), fourth).state is State.HYPOTHESISED
