"""Each way an agent stage can end, end to end: the model agent on the recorded model server,
the web process, the worker, Redis and the fake GitHub — and what a maintainer then sees (issue
12's matrix of stage outcomes; the flaky path is ``test_flaky.py``, the budget's own file).

Each case starts from the same failing check on the sample and differs only in what the model
answers (``questbot_testing/modelserver/recorded/openai``). The assertions are on GitHub's side: the
quest's state and why, the ``questbot`` check run's conclusion, the reason reaching the pull
request's status comment, and the inbox listing what waits for a person."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass

import pytest
from pydantic import SecretStr

from bot.agent import sandbox
from bot.agent.model import ModelEndpoint, Wire
from bot.core import State
from bot.core.quest import ParkReason
from questbot_testing.modelserver.server import ModelServer, recorded
from questbot_testing.scenario import MAINTAINER, REPO, SETTINGS, Story, setup_repository
from questbot_testing.stack import Stack, virtual_pacing


@dataclass(frozen=True)
class Case:
    conversations: tuple[str, ...]
    approvals: tuple[str, ...]
    state: State
    park_reason: ParkReason | None
    conclusion: str
    says: str
    """A phrase of the reason that must reach the status comment."""
    turns: tuple[str, tuple[int, ...]]
    """One conversation and the turns the model server answered in it."""
    settings: str = ""


CASES = {
    "supported": Case(("research",), (), State.HYPOTHESISED, None, "action_required",
                      "partial last page is dropped", ("research", (1, 2, 3, 4))),
    "rejected evidence, then repaired": Case(
        ("research-repaired",), (), State.HYPOTHESISED, None, "action_required",
        "partial last page is dropped", ("research-repaired", (1, 2, 3))),
    "attempts run out": Case(
        ("research-exhausted",), (), State.PARKED, ParkReason.AGENT_FAILED, "failure",
        "does not contain the quoted text", ("research-exhausted", (1, 2)),
        settings="agent:\n  max_attempts: 2\n"),
    "needs a person": Case(
        ("research-needs-human",), (), State.PARKED, ParkReason.NEEDS_HUMAN, "action_required",
        "vendored payment library", ("research-needs-human", (1,))),
    "refused": Case(
        ("research", "reproduce", "patch-refused"), ("A", "B"), State.PARKED,
        ParkReason.AGENT_REFUSED, "neutral", "behaviour change I will not make",
        ("patch-refused", (1, 2, 3))),
}


@pytest.fixture
async def served(request: pytest.FixtureRequest) -> AsyncIterator[ModelServer]:
    case: Case = CASES[request.param]
    server = await ModelServer(recorded("openai", *case.conversations),
                               substitutions={"PYTHON": sandbox.python()}).start()
    try:
        yield server
    finally:
        await server.close()


@pytest.mark.parametrize("served", list(CASES), indirect=True)
async def test_each_stage_outcome_reaches_github(served: ModelServer, redis_url: str,
                                                 redis_async: object,
                                                 request: pytest.FixtureRequest) -> None:
    case = CASES[request.node.callspec.params["served"]]
    endpoint = ModelEndpoint(wire=Wire.OPENAI, url=f"{served.url}/v1",
                             api_key=SecretStr("sk-test-not-a-real-key"), model="gpt-4.1-mini")
    limits, pace_time = virtual_pacing()
    stack = await Stack(redis_url, model=endpoint, limits=limits, pace_time=pace_time).start()
    try:
        main = await setup_repository(stack, settings=SETTINGS + case.settings)
        await stack.fake.fail_check(REPO, main, name="tests")
        await stack.settle()
        (quest,) = await stack.quests(REPO)
        story = Story(stack, quest_id=quest.id)
        for checkpoint in case.approvals:
            await stack.fake.comment(REPO, story.pr_number(), f"/approve {checkpoint}",
                                     user=MAINTAINER)
            await stack.settle()
        quest = await stack.quest(quest.id)
        assert (quest.state, quest.park_reason) == (case.state, case.park_reason)
        if case.state is State.PARKED:
            assert quest.resume_state is not None  # /resume runs the stage again

        runs = [r for r in stack.fake.repo(REPO).check_runs.values()
                if r.name == "questbot" and r.external_id == quest.id]
        assert runs[-1].status == "completed" and runs[-1].conclusion == case.conclusion
        assert all(r.status == "completed" for r in runs)  # nothing left in progress

        assert case.says in story.status_comment().replace("\\", "")
        inbox = [i for i in stack.fake.repo(REPO).issues.values()
                 if i.title == "questbot inbox"]
        entry = f"#{story.pr_number()} **"  # named by its pull request and what failed
        assert len(inbox) == 1 and entry in inbox[0].body  # it waits for a person

        name, turns = case.turns
        assert tuple(served.turns_of(name)) == turns
        served.assert_clean()
        stack.fake.assert_clean()
    finally:
        await stack.stop()
