"""The bug set against the recorded model (issue 25, item 9): every bug's failing check, run for
real, reaches one whole stack at once, a scripted maintainer approves what questbot puts
forward, and each quest must end where a maintainer expects — the four plain bugs fixed and
proven, the flaky test ended by triage's re-run with no agent run, the test that contradicts
the documented rule and the security fix parked with a reason a person reads.

With a real endpoint the same run is ``scripts/bench_agent.py --url …``: how a maintainer
picks a model. Here it is a regression test of questbot: the recorded model is careful, so
anything else is questbot's doing.
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator

import pytest

from bot.agent.model import ModelEndpoint
from questbot_testing.bugs import BUGS, BY_NAME, Ending
from questbot_testing.bugs.bench import BugRun, recorded_model, run_bugs, totals
from questbot_testing.modelserver.make_bugs import conversations
from questbot_testing.modelserver.server import RECORDED, ModelServer
from questbot_testing.stack import Stack, virtual_pacing

AGENT_STAGES = {"research", "reproduce", "patch"}


@pytest.fixture
async def recorded() -> AsyncIterator[tuple[ModelServer, ModelEndpoint]]:
    """The model server with the careful model's conversations for every bug, and the
    endpoint that reaches it."""
    server, endpoint = await recorded_model()
    try:
        yield server, endpoint
    finally:
        await server.close()


@pytest.fixture
def model(recorded: tuple[ModelServer, ModelEndpoint]) -> ModelServer:
    return recorded[0]


@pytest.fixture
async def stack(redis_async_url: str, redis_async: object,
                recorded: tuple[ModelServer, ModelEndpoint]) -> AsyncIterator[Stack]:
    """The whole stack with the model agent at the recorded server; every request questbot made
    must have been valid and within GitHub's limits."""
    limits, pace_time = virtual_pacing()
    s = await Stack(redis_async_url, model=recorded[1], limits=limits,
                    pace_time=pace_time).start()
    try:
        yield s
        s.fake.assert_clean()
    finally:
        await s.stop()


def served_tokens(server: ModelServer, bug: str) -> int:
    """The tokens the model server's answers for ``bug`` reported, turn by turn."""
    total = 0
    for served in server.served:
        if not served.conversation.startswith(f"bug-{bug}-"):
            continue
        recording = json.loads((RECORDED / "openai" / f"{served.conversation}.json").read_text())
        total += recording["turns"][served.turn - 1]["response"]["usage"]["total_tokens"]
    return total


def explain(runs: list[BugRun]) -> str:
    return "\n".join(f"{r.bug}: {r.ending} (expected {r.expected}) — {r.why}" for r in runs)


async def test_every_bug_ends_where_a_maintainer_expects(stack: Stack, model: ModelServer) -> None:
    started = time.perf_counter()
    runs = await run_bugs(stack, BUGS)
    print(json.dumps(totals(runs, time.perf_counter() - started)))
    model.assert_clean()
    assert [r.bug for r in runs] == [b.name for b in BUGS]
    assert all(r.as_expected for r in runs), explain(runs)
    by = {r.bug: r for r in runs}

    for run in runs:
        bug = BY_NAME[run.bug]
        # every token the model reported is on the quest's receipts, and nothing else is
        assert run.tokens == served_tokens(model, bug.name), run.bug
        if bug.ending is Ending.FIXED:
            assert run.state == "closed" and run.pull is not None and run.merged, run.why
            assert set(run.stages) == {*AGENT_STAGES, "lesson"}, run.stages
            assert set(run.timing) == {*AGENT_STAGES, "proof", "landing"}, run.timing
            assert run.cost_usd > 0
            assert "at the head approved at C" in run.why and "CI green on main" in run.why

    flaky = by["flaky-order"]
    assert flaky.tokens == 0 and flaky.pull is None and flaky.stages == flaky.timing == {}
    assert "no agent was run" in flaky.why
    assert len([c for c in stack.calls("actions/re-run-workflow-failed-jobs")
                if "/repos/octo/flaky-order/" in c.path]) == 1

    conflict = by["spec-conflict"]
    assert set(conflict.stages) == set(conflict.timing) == {"research"}
    assert "for the ledger's owners to decide" in conflict.why

    security = by["path-traversal"]
    assert "high-impact change" in security.why and "a person must decide" in security.why
    assert security.merged is None
    assert not stack.fake.repo("octo/path-traversal").pulls[security.pull or 0].merged

    # every recorded conversation of the set was used: none is dead weight
    recorded = {name for bug in BUGS for name in conversations(bug)}
    assert {s.conversation for s in model.served} == recorded


async def test_a_high_risk_plan_parks_before_the_model_writes_a_patch(
        stack: Stack, model: ModelServer) -> None:
    (run,) = await run_bugs(stack, [BY_NAME["path-traversal"]])
    assert run.ending == Ending.PARKED.value and "high-impact change" in run.why
    assert "patch" not in run.stages, f"{run.stages['patch']} tokens spent on a patch"
    assert model.turns_of("bug-path-traversal-patch") == []


async def test_a_flaky_ending_is_not_called_killed_or_rejected(stack: Stack) -> None:
    (run,) = await run_bugs(stack, [BY_NAME["flaky-order"]])
    assert run.ending == Ending.FLAKY.value
    assert "Killed or rejected" not in run.why, run.why
