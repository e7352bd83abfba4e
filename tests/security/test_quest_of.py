"""The one place's own guards (``bot/quests/quest_of.py``): a lost record of the quest's pull
request is recovered only from the quest's own record, never from a branch's name alone; and
the policy book, the last guard, steps a quest only under its own repository's policy."""

from __future__ import annotations

import pytest

from bot.core import State
from bot.core.events import Paused
from bot.intake.intake import Outcome
from bot.journal.keys import repo_gh_key
from bot.quests.policybook import ForeignQuest
from questbot_testing.scenario import MAINTAINER, REPO
from questbot_testing.stack import Stack
from tests.e2e.test_landing import at_checkpoint_c
from tests.security.test_cross_repository import PLAYGROUND, forks_pull, playground


async def test_a_lost_record_of_the_quests_pull_request_is_recovered_only_from_its_own(
        stack: Stack) -> None:
    story = await at_checkpoint_c(stack)
    number = story.pr_number()
    theirs = await forks_pull(stack, story)
    client = stack.runtime.worker.journal.client
    await client.hdel(repo_gh_key(REPO), f"pr:{number}")  # a failover lost it
    await stack.fake.close_pull(REPO, theirs, user=MAINTAINER)  # the fork's: still nothing
    await story.step("maya closed the fork's pull request", State.READY)
    assert await client.hget(repo_gh_key(REPO), f"pr:{number}") is None
    await stack.fake.close_pull(REPO, number, user=MAINTAINER)  # the quest's own
    await story.step("maya closed the quest's pull request", State.PARKED)
    assert await client.hget(repo_gh_key(REPO), f"pr:{number}") == story.quest_id.encode()


async def test_the_policy_book_steps_a_quest_only_under_its_own_repository(
        stack: Stack) -> None:
    story = await at_checkpoint_c(stack)
    playground(stack)
    book = stack.runtime.worker.intake.book
    book._repo_of.clear()  # a fresh worker: nothing cached
    event = Paused(id="forged", quest_id=story.quest_id, at=stack.clock(), actor="mallory",
                   reason="mine")
    with pytest.raises(ForeignQuest, match=f"an event of {PLAYGROUND} for quest"):
        await book.prepare(story.quest_id, PLAYGROUND)
    with pytest.raises(ForeignQuest):  # intake's apply, whatever reached it
        await stack.runtime.worker.intake._apply(event, PLAYGROUND, Outcome())
    assert (await stack.quest(story.quest_id)).state is State.READY
    await book.prepare(story.quest_id, REPO.upper())  # GitHub's names ignore case


def test_no_route_but_the_one_place_finds_a_quest_by_a_branch_or_a_pull_request() -> None:
    """``quest_of_branch`` turns a name anyone may choose into a quest id, and
    ``quest_of_pull`` reads questbot's record of a pull request: only ``bot/quests/quest_of.py``
    may use either to find a quest. The signals test a branch's shape with the first (is it a
    quest's branch at all?) and name no quest."""
    import re

    from questbot_testing import PROJECT

    allowed = {"bot/quests/quest_of.py": {"quest_of_branch", "quest_of_pull"},
               "bot/quests/branches.py": {"quest_of_branch"},  # where it is defined
               "bot/pulls/signals.py": {"quest_of_branch"},
               "bot/repository/signals.py": {"quest_of_branch"},  # a deleted branch's shape
               "bot/journal/memory.py": {"quest_of_pull"}}
    found = {}
    for path in sorted((PROJECT / "bot").rglob("*.py")):
        name = str(path.relative_to(PROJECT))
        used = set(re.findall(r"\b(quest_of_branch|quest_of_pull)\(", path.read_text()))
        if used - allowed.get(name, set()):
            found[name] = sorted(used - allowed.get(name, set()))
    assert found == {}
