"""The status comment and the ``questbot`` check run as a maintainer reads them, read back from
the fake GitHub: what failed (linked), what questbot thinks and how sure, what changed, what
the proof ran and printed, what to do next and with what, the cost, the timeline in people's
words, this quest's path — within GitHub's limits, with no host path and no identifier of
questbot's own."""

from __future__ import annotations

import re

from bot.core import State
from bot.words.github_limits import BODY_LIMIT, OUTPUT_LIMIT
from bot.words.markdown import plain
from questbot_testing.sample import sample_spec
from questbot_testing.scenario import MAINTAINER, REPO, Story, setup_repository
from questbot_testing.stack import Stack
from tests.e2e.conftest import shown_texts
from tests.words.surface import problems


def questbot_run(stack: Stack, story: Story) -> dict[str, str]:
    """The output of the quest's newest ``questbot`` check run, as the fake holds it."""
    runs = [r for r in stack.fake.repo(REPO).check_runs.values()
            if r.name == "questbot" and r.external_id == story.quest_id]
    assert runs, "no questbot check run"
    return {k: str(v or "") for k, v in runs[-1].output.items()}


def top(status: str) -> str:
    """What is read without opening anything."""
    return status.split("<details>")[0]


async def test_a_maintainer_reads_the_quest_at_each_checkpoint(stack: Stack) -> None:
    story = Story(stack)
    main = await setup_repository(stack)
    failing = await stack.fake.fail_check(REPO, main, name="tests")
    await stack.settle()
    (quest,) = await stack.quests(REPO)
    story.quest_id = quest.id
    await story.step("researched", State.HYPOTHESISED)

    status = story.status_comment()
    first = top(status)
    # what failed, linked to GitHub's page of the run and to where its CI keeps the log
    assert f"[the failed check](https://github.com/{REPO}/runs/{failing.id})" in first
    assert f"[its log]({failing.details_url})" in first
    # what questbot thinks, and how sure: the agent's three claims, 90%, 95% and 80%
    hypothesis = sample_spec().hypothesis
    assert f"  > {plain(hypothesis)[:60]}" in first and "the agent is 88% sure" in first
    assert "the code supports 3" in first
    # what to do, and with what
    assert "`/approve A`" in first and "**Approve** · **Revise** · **Reject**" in first
    assert "**Cost so far:** 1,200 tokens" in first
    run = questbot_run(stack, story)
    assert run["title"] == "questbot: waiting for a person at checkpoint A"
    assert "#### Claims" in run["text"]

    await story.approve("A", State.PLANNED)
    ready = await story.approve("B", State.READY)
    status = story.status_comment()
    pr = stack.fake.repo(REPO).pulls[story.pr_number()]
    first = top(status)
    assert ("1 file (+1 line, -1 line): `pager.py` — "
            f"[the diff](https://github.com/{REPO}/pull/{pr.number}/files)") in first
    assert f"on the fix as it is now, `{ready.head and ready.head[:12]}`" in first
    assert "the reproduction fails on the base and passes on the head" in first
    assert "**Cost so far:** 3,600 tokens" in first  # three stages, 1,200 tokens each
    # what the proof printed, collapsed; never a bare digest, never the worker's paths
    printed = status.split("<summary>What the proof printed</summary>")[1]
    assert "python3 -m unittest discover -q at the head: passed (exit 0)" in printed
    assert "Ran " in printed and "OK" in printed
    assert "test_questbot_reproduction at the base: FAILED" in printed
    # the timeline says who did what
    timeline = status.split("<summary>Timeline</summary>")[1].split("<summary>What the")[0]
    assert f"`@{MAINTAINER}` approved checkpoint A" in timeline
    assert f"`@{MAINTAINER}` approved checkpoint B" in timeline
    assert "the proof passed on" in timeline
    # the whole of it: the earlier events folded under their count, the failure among them
    assert re.search(r"<summary>\d+ earlier events?</summary>", timeline)
    assert "questbot saw " in timeline and "started research" in timeline
    # the diagram is this quest's path: the states it went through, and no other
    diagram = status.split("```mermaid\n")[1].split("```")[0]
    assert "proving --> ready" in diagram and "class ready current" in diagram
    for elsewhere in ("landing", "watching", "parked", "handedOff", "rolledBack"):
        assert elsewhere not in diagram
    run = questbot_run(stack, story)
    assert "#### What the proof printed" in run["text"]

    written = shown_texts(stack)
    assert len(written) >= 6  # creates and edits of both, from sensed to ready
    for operation, text in written:
        assert problems(text) == [], operation
        limit = BODY_LIMIT if operation.startswith("issues/") else OUTPUT_LIMIT
        assert len(text) <= limit
    assert stack.fake.violations == []
