"""The status comment's story read from a real journal in Redis: the timeline in words, the
path replayed, what failed with its links — and an unreadable journal gives no story instead
of stopping the comment."""

from __future__ import annotations

from bot.core.lifecycle import path
from bot.journal.keys import quest_keys
from bot.views.quest_story import Story, read_story
from questbot_testing.journals import JournalBuilder
from tests.github.conftest import REPO, World

JOB = "https://github.com/octo/demo/actions/runs/5/job/7"
LOG = "https://ci.example.com/octo/demo/jobs/7"


async def test_the_story_is_the_journal_in_words(world: World) -> None:
    b = JournalBuilder("q-s", repo=REPO)
    b.add("signal_sensed", repo=REPO, fingerprint="check:tests", kind="check_failure",
          title="check tests failed", source=JOB, base=world.main_sha, details_url=LOG)
    b.add("triaged", route="auto_fix")
    b.add("hypothesis_written", summary="off by one")
    b.decide("A", "revise", actor="alice", reason="look again")
    b.add("hypothesis_written", summary="off by one, really")
    await world.record(b)
    assert b.quest is not None
    story = await read_story(world.ctx.journal, b.quest, b.policy, timeline=3)
    assert story.path == path(b.events, b.policy) and story.path[-1] is b.quest.state
    assert [e.words for e in story.timeline][-2:] == [
        "asked for a revision at checkpoint A", "the agent wrote a hypothesis"]
    assert story.timeline[-2].actor == "alice" and len(story.timeline) == 3
    assert story.failed is not None
    assert (story.failed.source, story.failed.details_url) == (JOB, LOG)


async def test_an_unreadable_journal_tells_no_story(world: World) -> None:
    b = JournalBuilder("q-x", repo=REPO).sense(base=world.main_sha)
    await world.record(b)
    assert b.quest is not None
    await world.redis.xadd(quest_keys("q-x").events, {"v": "99", "e": "not a record"})
    assert await read_story(world.ctx.journal, b.quest, b.policy) == Story()
