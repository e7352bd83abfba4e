"""One red CI run is one quest: a matrix of failing jobs, their check suite and the workflow
run — in any order, and handled by two workers at once — make one quest and one pull request,
with the other reports attached; a green re-run of a job is recorded as evidence. Triage's own
re-run of the failure before research is off here (`NO_RERUN`); `test_flaky` tests it."""

from __future__ import annotations

import asyncio
import itertools
import json
from collections.abc import AsyncIterator

import pytest

from bot.core import Quest, State
from bot.worker.assembly import Runtime, start_runtime
from questbot_testing.fakegithub import Delivery, ci
from questbot_testing.scenario import NO_RERUN, REPO, setup_repository
from questbot_testing.stack import Stack, unpaced

JOBS = {"tests (3.11)": "failure", "tests (3.12)": "failure", "lint": "success"}
FINGERPRINTS = {"check:tests (3.11)", "check:tests (3.12)", "suite:github-actions",
                "workflow:CI"}


def quest_pulls(stack: Stack) -> list[str]:
    return [pr.head_ref for pr in stack.fake.repo(REPO).pulls.values()
            if pr.head_ref.startswith("quest/")]


def fingerprints(quest: Quest) -> set[str]:
    return {quest.fingerprint, *quest.attached}


async def red_run(stack: Stack) -> tuple[ci.ActionsRun, list[Delivery]]:
    main = await setup_repository(stack, NO_RERUN)
    run = ci.actions_run(stack.fake, REPO, main, JOBS)
    return run, ci.completed(stack.fake, REPO, run)


ORDERS = {
    "jobs, suite, workflow run": lambda d: d,
    "workflow run first": lambda d: [d[-1], *d[:-1]],
    "suite first": lambda d: [d[-2], *d[:-2], d[-1]],
    "reversed": lambda d: list(reversed(d)),
    "a failing job last": lambda d: [d[2], d[3], d[4], d[1], d[0]],
}


@pytest.mark.parametrize("order", list(ORDERS))
async def test_a_matrix_failure_makes_one_quest_and_one_pr_in_any_order(
        stack: Stack, order: str) -> None:
    run, deliveries = await red_run(stack)
    assert [d.event for d in deliveries] == ["check_run"] * 3 + ["check_suite", "workflow_run"]
    await ci.deliver(stack.fake, ORDERS[order](deliveries))
    await stack.settle()
    (quest,) = await stack.quests(REPO)
    assert quest.state is State.HYPOTHESISED and quest.base == run.head_sha
    assert fingerprints(quest) == FINGERPRINTS  # the green lint job is no failure
    assert quest.signals == 4  # one sensed, three attached
    assert quest_pulls(stack) == [f"quest/{quest.id}"]
    types = [e.type for e in await stack.runtime.worker.journal.events(quest.id)]
    assert types[0] == "signal_sensed" and types.count("signal_attached") == 3


async def test_workflow_job_deliveries_are_the_same_failure_told_again(stack: Stack) -> None:
    main = await setup_repository(stack, NO_RERUN)
    run = ci.actions_run(stack.fake, REPO, main, JOBS)
    deliveries = ci.completed(stack.fake, REPO, run, workflow_job=True)
    assert sum(d.event == "workflow_job" for d in deliveries) == 3
    await ci.deliver(stack.fake, [d for d in deliveries if d.event == "workflow_job"])
    await stack.settle()
    assert await stack.quests(REPO) == []  # questbot reads the check runs, not the jobs
    await ci.deliver(stack.fake, [d for d in deliveries if d.event != "workflow_job"])
    await stack.settle()
    (quest,) = await stack.quests(REPO)
    assert quest_pulls(stack) == [f"quest/{quest.id}"]


@pytest.fixture
async def second(stack: Stack) -> AsyncIterator[Runtime]:
    """Another worker process on the same Redis and GitHub: its own journal cache, clients
    and intake."""
    runtime = await start_runtime(
        redis_url=stack.redis_url, github_api_url=stack.fake.url,
        app_id=stack.fake.world.app_id, private_key=stack.fake.keys.private_pem,
        durable=False, poll_seconds=0.05, limits=unpaced())
    runtime.worker.intake.ctx.clock = stack.clock
    try:
        yield runtime
    finally:
        await runtime.close()


async def test_two_workers_handling_the_reports_at_once_make_one_quest(
        stack: Stack, second: Runtime) -> None:
    _run, deliveries = await red_run(stack)
    intakes = itertools.cycle([stack.runtime.worker.intake, second.worker.intake])
    for round_ in range(2):  # the second round: the same deliveries, handled again at once
        outcomes = await asyncio.gather(*(
            intake.handle(d.event, json.loads(d.body), d.id)
            for intake, d in zip(intakes, deliveries, strict=False)))
        applied = [a for o in outcomes for a in o.applied]
        if round_:
            assert applied and all(a.duplicate for a in applied)
        assert not [r for o in outcomes for r in o.refused]
    await stack.settle()
    (quest,) = await stack.quests(REPO)
    assert fingerprints(quest) == FINGERPRINTS and quest.signals == 4
    assert quest.state is State.HYPOTHESISED
    assert quest_pulls(stack) == [f"quest/{quest.id}"]
    types = [e.type for e in await stack.runtime.worker.journal.events(quest.id)]
    assert types.count("signal_sensed") == 1 and types.count("signal_attached") == 3


async def test_a_green_rerun_of_a_job_on_the_same_commit_is_recorded_as_flaky(
        stack: Stack) -> None:
    run, deliveries = await red_run(stack)
    await ci.deliver(stack.fake, deliveries)
    await stack.settle()
    (quest,) = await stack.quests(REPO)
    repo = stack.fake.repo(REPO)
    (job,) = ci.rerun_jobs(stack.fake, repo, run, ["tests (3.11)"])
    ci.finish(stack.fake, REPO, run, {"tests (3.11)": "success"})
    again = ci.completed(stack.fake, REPO, run)
    await ci.deliver(stack.fake, again)
    await ci.deliver(stack.fake, again[:1])  # GitHub may deliver one twice
    await stack.settle()
    quest = await stack.quest(quest.id)
    assert (quest.passes, quest.flaky) == (1, 1)  # the job passed where it had failed
    assert quest.state is State.HYPOTHESISED  # evidence for people; the quest goes on
    events = await stack.runtime.worker.journal.events(quest.id)
    passed = [e for e in events if e.type == "signal_attached" and e.passed]  # type: ignore[union-attr]
    assert [(e.fingerprint, e.run) for e in passed] == [  # type: ignore[union-attr]
        ("check:tests (3.11)", f"check_run:{job.id}")]
    # the attempt's suite and workflow run still failed (tests (3.12)); nothing new was made
    assert len(await stack.quests(REPO)) == 1 and len(quest_pulls(stack)) == 1
