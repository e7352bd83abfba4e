"""Lessons end to end on the fake GitHub: the web process, the worker, a real Redis, the
sandbox and the model agent on the recorded model server. A quest that lands and is watched
clean yields a lesson the consolidation reviewer keeps; the next quest's research prompt
holds it, fenced as data; the inbox shows it; an operator lists and drops it from the command
line, and the inbox no longer shows it. A maintainer drops one from the inbox by ticking its
box; an outsider's tick is answered once and drops nothing."""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import AsyncIterator

import pytest
from pydantic import SecretStr

from bot.agent import sandbox
from bot.agent.model import ModelEndpoint, Wire
from bot.core import State
from bot.core.lessons import mark
from bot.journal.lessons import Fate, LessonStore
from bot.tools.lessons import lessons_text, run
from bot.words.inbox_marks import lesson_boxes, lesson_marker
from questbot_testing.fakegithub.issue_edits import tick
from questbot_testing.fakegithub.state import Issue
from questbot_testing.modelserver.make_recorded import LESSON
from questbot_testing.modelserver.server import ModelServer, recorded
from questbot_testing.scenario import MAINTAINER, READER, REPO, Story, main_line
from questbot_testing.stack import Stack, virtual_pacing
from tests.e2e.test_github_flows import replies


@pytest.fixture
async def served() -> AsyncIterator[ModelServer]:
    server = await ModelServer(recorded("openai", "research", "reproduce", "patch",
                                        "lesson-landed", "review-consolidation"),
                               substitutions={"PYTHON": sandbox.python()}).start()
    try:
        yield server
    finally:
        await server.close()


@pytest.fixture
async def stack(served: ModelServer, redis_url: str,
                redis_async: object) -> AsyncIterator[Stack]:
    endpoint = ModelEndpoint(wire=Wire.OPENAI, url=f"{served.url}/v1",
                             api_key=SecretStr("sk-test-not-a-real-key"), model="gpt-4.1-mini")
    limits, pace_time = virtual_pacing()
    started = await Stack(redis_url, model=endpoint, limits=limits,
                          pace_time=pace_time).start()
    try:
        yield started
    finally:
        await started.stop()


def inbox(stack: Stack) -> str:
    return str(inbox_issue(stack).body)


def inbox_issue(stack: Stack) -> Issue:
    (issue,) = [i for i in stack.fake.repo(REPO).issues.values()
                if i.title == "questbot inbox"]
    return issue


def first_message(request: dict[str, object]) -> str:
    messages = request["messages"]
    assert isinstance(messages, list)
    return str(next(m["content"] for m in messages if m["role"] == "user"))


async def test_a_landed_quest_teaches_the_next_one(stack: Stack, served: ModelServer,
                                                   redis_url: str,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    story = Story(stack)
    landed = await main_line(story)
    store = LessonStore(stack.runtime.redis)
    (lesson,) = await store.lessons(REPO)
    assert (lesson.text, lesson.quest_id) == (LESSON, landed.id)
    assert served.turns_of("lesson-landed") == [1]
    assert served.turns_of("review-consolidation") == [1]
    shown = inbox(stack)  # people see it, linked to the pull request it came from
    assert "What closed quests taught" in shown and "proved by a reproduction test" in shown
    (line,) = [x for x in shown.splitlines() if lesson_marker(mark(landed.id, 1)) in x]
    assert f" (quest `{landed.id}` in #{story.pr_number()}, landed" in line

    repo = stack.fake.repo(REPO)
    pager = (repo.git.read(str(repo.branch_sha("main")), "pager.py") or b"").decode()
    head = await stack.fake.push(REPO, "main", {"pager.py": pager.replace(
        "return -(-total // per_page)", "return total // per_page")}, user="carol",
        message="a later change brings the bug back")
    await stack.fake.fail_check(REPO, head.sha, name="lint")
    await stack.settle()
    (nxt,) = [q for q in await stack.quests(REPO) if q.id != landed.id]
    assert nxt.state is State.HYPOTHESISED
    researched = [first_message(s.request) for s in served.served
                  if s.conversation == "research" and s.turn == 1]
    assert len(researched) == 2
    assert LESSON not in researched[0]  # the first quest had nothing to learn from
    fenced = '<untrusted-data source="lessons">\n- ' + LESSON + f" (quest {landed.id}"
    assert fenced in researched[1]
    served.assert_clean()

    print(lessons_text(REPO, await store.lessons(REPO)))
    assert LESSON in capsys.readouterr().out
    drop = argparse.Namespace(redis=redis_url, repo=REPO, drop=landed.id, json=False)
    assert await asyncio.to_thread(run, drop) == 0  # the command line, as an operator runs it
    assert await store.lessons(REPO) == []
    await stack.settle()
    assert "What closed quests taught" not in inbox(stack)
    assert await asyncio.to_thread(run, drop) == 1  # nothing left of that quest


async def bring_the_bug_back(stack: Stack) -> None:
    repo = stack.fake.repo(REPO)
    pager = (repo.git.read(str(repo.branch_sha("main")), "pager.py") or b"").decode()
    head = await stack.fake.push(REPO, "main", {"pager.py": pager.replace(
        "return -(-total // per_page)", "return total // per_page")}, user="carol",
        message="a later change brings the bug back")
    await stack.fake.fail_check(REPO, head.sha, name="lint")
    await stack.settle()


async def test_a_lesson_ticked_in_the_inbox_is_dropped_by_a_maintainer_only(
        stack: Stack, served: ModelServer) -> None:
    landed = await main_line(Story(stack))
    store = LessonStore(stack.runtime.redis)
    ending = mark(landed.id, landed.revision)
    number = inbox_issue(stack).number
    assert lesson_boxes(inbox(stack)) == {ending: False}

    outsider = await tick(stack.fake, REPO, number, lesson_marker(ending), user=READER)
    await stack.settle()
    await stack.fake.redeliver(outsider.delivery)  # GitHub delivers the same edit again
    await stack.settle()
    (reply,) = replies(stack, number)  # one answer, and the lesson stays
    assert f"@{READER} your tick on the lesson from quest `{landed.id}`" in reply
    assert "needs write access" in reply and "ask a maintainer to tick it" in reply
    assert [lesson.quest_id for lesson in await store.lessons(REPO)] == [landed.id]
    assert lesson_boxes(inbox(stack)) == {ending: False}  # written again, the box cleared

    sent = await tick(stack.fake, REPO, number, lesson_marker(ending), user=MAINTAINER)
    await stack.settle()
    assert await store.lessons(REPO) == []
    assert await store.fate(landed.id, landed.revision, REPO) is Fate.DROPPED
    shown = inbox(stack)
    assert "What closed quests taught" not in shown and LESSON not in shown
    await stack.fake.redeliver(sent.delivery)
    await stack.settle()
    assert len(replies(stack, number)) == 1  # the maintainer's tick needed no answer

    await bring_the_bug_back(stack)  # the next quest's agent is not told the dropped lesson
    researched = [first_message(s.request) for s in served.served
                  if s.conversation == "research" and s.turn == 1]
    assert len(researched) == 2 and LESSON not in researched[1]
    assert await store.lessons(REPO) == []  # and the dropped ending is not kept again
    assert served.turns_of("lesson-landed") == [1]
