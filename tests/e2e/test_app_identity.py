"""An App registered under another name than questbot: it learns its slug and bot login from
``GET /app`` and knows its own work by them — its own failing check is no quest, its own
comments (which GitHub sends back to it) are no commands, and its status comment is found
again by its author when Redis lost the record."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from bot.core import State
from bot.journal.keys import quest_gh_key
from questbot_testing.sample import sample_files, sample_spec
from questbot_testing.scenario import MAINTAINER, REPO, SETTINGS, Story
from questbot_testing.stack import Stack, virtual_pacing

SLUG = "fixbot"
BOT = f"{SLUG}[bot]"


@pytest.fixture
async def stack(redis_url: str, redis_async: object) -> AsyncIterator[Stack]:
    limits, pace_time = virtual_pacing()
    s = await Stack(redis_url, scripted_specs={REPO: sample_spec()}, limits=limits,
                    pace_time=pace_time, app_slug=SLUG).start()
    try:
        yield s
        s.fake.assert_clean()
    finally:
        await s.stop()


def own_echoes(stack: Stack, event: str) -> list[dict[str, object]]:
    """What GitHub sent the App about the App's own writes."""
    return [d.delivery.payload for d in stack.fake.deliveries if d.delivery.event == event
            and d.delivery.payload["sender"]["login"] == BOT]  # type: ignore[index]


async def start(stack: Stack, settings: str = SETTINGS) -> Story:
    files: dict[str, str | bytes] = {**sample_files(), ".github/questbot.yml": settings}
    repo = stack.fake.create_repository(REPO, files)
    stack.fake.set_permission(REPO, MAINTAINER, "write")
    await stack.fake.fail_check(REPO, str(repo.branch_sha("main")), name="tests")
    await stack.settle()
    (quest,) = await stack.quests(REPO)
    return Story(stack, quest_id=quest.id)


async def test_its_own_failing_check_on_main_is_no_quest(stack: Stack) -> None:
    """A malformed settings file is reported as a failing ``questbot/settings`` check run on
    main's head; GitHub sends that run's completion back to the App, named by its slug."""
    story = await start(stack, settings="checkpoints: [not, a, mapping\n")
    (run,) = [r for r in stack.fake.repo(REPO).check_runs.values()
              if r.name == "questbot/settings"]
    assert (run.conclusion, run.app_slug) == ("failure", SLUG)
    echoed = own_echoes(stack, "check_run")
    assert any(p["check_run"]["name"] == "questbot/settings"  # type: ignore[index]
               for p in echoed)
    (quest,) = await stack.quests(REPO)  # the failing tests only
    assert quest.id == story.quest_id and quest.fingerprint == "check:tests"
    assert quest.attached == () and quest.signals == 1


async def test_its_own_comments_are_no_commands_and_its_status_comment_is_found_by_author(
        stack: Stack) -> None:
    story = await start(stack)
    await story.step("researched", State.HYPOTHESISED)
    pr = stack.fake.repo(REPO).pulls[story.pr_number()]
    assert stack.fake.repo(REPO).issues[pr.number].user == BOT
    status = [c for c in stack.fake.repo(REPO).comments.values()
              if c.issue_number == pr.number and "questbot:status" in c.body]
    assert [c.user for c in status] == [BOT]
    assert own_echoes(stack, "issue_comment")  # GitHub told the App of its own comments
    assert not any("questbot:reply" in c.body for c in stack.fake.repo(REPO).comments.values())
    assert all(not c.reactions for c in stack.fake.repo(REPO).comments.values())
    await stack.runtime.redis.delete(quest_gh_key(story.quest_id))  # a failover lost it
    await story.approve("A", State.PLANNED)
    status = [c for c in stack.fake.repo(REPO).comments.values()
              if c.issue_number == pr.number and "questbot:status" in c.body]
    assert len(status) == 1 and "checkpoint b" in status[0].body.lower()
    assert len(stack.fake.repo(REPO).pulls) == 1  # and the pull request by its author too
