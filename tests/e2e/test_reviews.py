"""Reviews end to end on the fake GitHub: the web process, the worker, a real Redis, the
sandbox and the model agent on the recorded model server. An advisory B decided by
questbot's automatic reviewer; a shadow-mode quest whose automatic verdicts are recorded,
never advance, and are compared with people's; a review submitted after a person decided,
refused with 409 by the web process."""

from __future__ import annotations

from collections.abc import AsyncIterator

import aiohttp
import pytest
from pydantic import SecretStr

from bot.agent import sandbox
from bot.agent.model import ModelEndpoint, Wire
from bot.core import State
from bot.core.events.decisions import CheckpointDecided
from bot.reviews.models import ReviewRole
from bot.tools.review import request
from questbot_testing.modelserver.server import ModelServer, recorded
from questbot_testing.scenario import MAINTAINER, REPO, SETTINGS, Story, setup_repository
from questbot_testing.stack import Stack, virtual_pacing

S = State
BLOCKING = "checkpoints: {A: blocking, B: blocking, C: blocking}"


def settings(checkpoints: str, extra: str = "") -> str:
    return SETTINGS.replace(BLOCKING, checkpoints) + extra


async def model_stack(redis_url: str, server: ModelServer) -> Stack:
    endpoint = ModelEndpoint(wire=Wire.OPENAI, url=f"{server.url}/v1",
                             api_key=SecretStr("sk-test-not-a-real-key"), model="gpt-4.1-mini")
    limits, pace_time = virtual_pacing()
    return await Stack(redis_url, model=endpoint, limits=limits, pace_time=pace_time).start()


@pytest.fixture
async def served(request: pytest.FixtureRequest) -> AsyncIterator[ModelServer]:
    server = await ModelServer(recorded("openai", *request.param),
                               substitutions={"PYTHON": sandbox.python()}).start()
    try:
        yield server
    finally:
        await server.close()


async def started(stack: Stack, settings_text: str) -> Story:
    main = await setup_repository(stack, settings=settings_text)
    await stack.fake.fail_check(REPO, main, name="tests")
    await stack.settle()
    (quest,) = await stack.quests(REPO)
    return Story(stack, quest_id=quest.id)


async def decisions(stack: Stack, quest_id: str) -> list[CheckpointDecided]:
    return [e for e in await stack.runtime.worker.journal.events(quest_id)
            if isinstance(e, CheckpointDecided)]


@pytest.mark.parametrize("served", [("research", "reproduce", "review-design", "patch")],
                         indirect=True)
async def test_an_advisory_b_is_decided_by_the_automatic_reviewer(
        served: ModelServer, redis_url: str, redis_async: object) -> None:
    stack = await model_stack(redis_url, served)
    try:
        story = await started(stack, settings("checkpoints: {A: blocking, B: advisory, "
                                              "C: blocking}"))
        await story.step("researched", S.HYPOTHESISED)
        quest = await story.approve("A", S.READY)  # B passed without a person
        by_review = [d for d in await decisions(stack, quest.id)
                     if d.actor == "review:design_reviewer"]
        assert len(by_review) == 1 and by_review[0].automatic
        assert by_review[0].verdict.value == "approve"
        assert served.turns_of("review-design") == [1]
        usage = [e for e in await stack.runtime.worker.journal.events(quest.id)
                 if e.type == "usage_recorded" and e.id.endswith("/review-usage")]
        assert [e.tokens for e in usage] == [1600 + 180]  # the recording's review turn
        comment = story.status_comment()
        assert "a review by the design reviewer approved checkpoint B" in comment
        # the checkpoints say who passed each: a person by login, not pinged; the reviewer
        assert f"* A, the hypothesis: passed — `@{MAINTAINER}` approved it" in comment
        assert ("* B, the reproduction and the plan: passed — a review by the design reviewer "
                "approved it") in comment
        served.assert_clean()
        stack.fake.assert_clean()
    finally:
        await stack.stop()


@pytest.mark.parametrize("served", [("research", "review-hypothesis", "reproduce",
                                     "review-design", "lesson-abandoned",
                                     "review-consolidation-unfounded")], indirect=True)
async def test_shadow_mode_records_automatic_verdicts_and_never_advances(
        served: ModelServer, redis_url: str, redis_async: object) -> None:
    stack = await model_stack(redis_url, served)
    try:
        story = await started(stack, settings("checkpoints: {A: advisory, B: advisory, "
                                              "C: blocking}", "shadow: true\n"))
        quest = await story.step("researched; the automatic check is recorded", S.HYPOTHESISED)
        assert quest.recorded_only_decisions == 1
        quest = await story.approve("A", S.PLANNED)  # a person's decision acts
        assert quest.recorded_only_decisions == 2  # the design review, recorded at B
        await stack.fake.comment(REPO, story.pr_number(), "/reject B the plan is too wide",
                                 user=MAINTAINER)
        quest = await story.step("maya rejected B", S.ABANDONED)
        comment = story.status_comment()
        assert ("a review by the design reviewer would approve checkpoint B (recorded only: "
                "a person decides)") in comment
        # the recorded-only reviews passed nothing: the person did, and rejected B
        assert f"* A, the hypothesis: passed — `@{MAINTAINER}` approved it" in comment
        assert (f"* B, the reproduction and the plan: rejected by `@{MAINTAINER}`, which "
                "ended the quest") in comment
        automatic = [d for d in await decisions(stack, quest.id) if d.automatic]
        assert [d.actor for d in automatic] == ["review:automated_check",
                                                "review:design_reviewer"]
        metrics = stack.runtime.metrics.render().decode()
        assert f'questbot_review_agreement_total{{agreed="true",repo="{REPO}"}} 1.0' in metrics
        assert f'questbot_review_agreement_total{{agreed="false",repo="{REPO}"}} 1.0' in metrics
        inbox = [i for i in stack.fake.repo(REPO).issues.values()
                 if i.title == "questbot inbox"]
        assert len(inbox) == 1
        assert "Automatic reviews agreed with people's decisions 1 of 2 times" in inbox[0].body
        served.assert_clean()
    finally:
        await stack.stop()


async def test_a_review_submitted_after_a_person_decided_is_409(stack: Stack,
                                                                redis_url: str) -> None:
    story = await started(stack, SETTINGS)
    await story.step("researched", S.HYPOTHESISED)
    await story.approve("A", S.PLANNED)
    issued = await request(redis_url, story.quest_id, ReviewRole.DESIGN, producer=None,
                           base_url=None)
    web = stack.fake.webhook_url
    assert web is not None
    url = web.removesuffix("/webhook") + f"/reviews/{issued.review_id}"
    auth = {"Authorization": f"Bearer {issued.capability}"}
    async with aiohttp.ClientSession() as http:
        async with http.post(f"{url}/start", json={"session": "questbot-agent:" +
                                                   story.quest_id}, headers=auth) as resp:
            assert resp.status == 403  # the producer's own session
        async with http.post(f"{url}/start", json={"session": "reviewer-1"},
                             headers=auth) as resp:
            assert resp.status == 200
            assert (await resp.json())["evidence"]["artifacts"]["plan"]
        await story.approve("B", S.READY)  # a person decided first
        async with http.post(f"{url}/submit", headers=auth,
                             json={"session": "reviewer-1", "verdict": "reject",
                                   "synopsis": "the plan is too wide"}) as resp:
            assert resp.status == 409
            assert "no longer open" in (await resp.json())["detail"]
        async with http.post(f"{url}/submit", json={"session": "reviewer-1"},
                             headers={"Authorization": "Bearer not-it"}) as resp:
            assert resp.status == 401
    quest = await stack.quest(story.quest_id)
    assert quest.state is S.READY
    assert not [d for d in await decisions(stack, quest.id) if d.actor.startswith("review:")]


async def test_a_reviewer_sessions_approval_passes_an_advisory_b_and_the_worker_goes_on(
        stack: Stack, redis_url: str) -> None:
    """Without a model nothing reviews automatically: the advisory B waits until a reviewer
    session approves it through the web process, and the worker takes it from there."""
    story = await started(stack, settings("checkpoints: {A: blocking, B: advisory, "
                                          "C: blocking}"))
    await story.step("researched", S.HYPOTHESISED)
    await story.approve("A", S.PLANNED)
    # what people see says who may decide this advisory B, from the repository's policy
    assert ("B, the reproduction and the plan: **open**, an automatic review or a person "
            "decides") in story.status_comment()
    run = max((r for r in stack.fake.repo(REPO).check_runs.values()
               if r.name == "questbot" and r.external_id == story.quest_id),
              key=lambda r: r.id)  # the newest: GitHub shows it
    assert run.output["title"] == "questbot: waiting for a review at checkpoint B"
    assert "questbot's automatic reviewer or a person reviews the plan" in str(
        run.output.get("text"))
    issued = await request(redis_url, story.quest_id, ReviewRole.DESIGN, producer=None,
                           base_url=None)
    web = stack.fake.webhook_url
    assert web is not None
    url = web.removesuffix("/webhook") + f"/reviews/{issued.review_id}"
    auth = {"Authorization": f"Bearer {issued.capability}"}
    async with aiohttp.ClientSession() as http:
        async with http.post(f"{url}/start", json={"session": "design-7"},
                             headers=auth) as resp:
            assert resp.status == 200
        async with http.post(f"{url}/submit", headers=auth,
                             json={"session": "design-7", "verdict": "approve",
                                   "synopsis": "the reproduction tests the claim; one file"}
                             ) as resp:
            assert resp.status == 200
            assert (await resp.json())["state"] == "patching"
    await story.step("a design reviewer approved B", S.READY)
    assert "a review by the design reviewer approved checkpoint B" in story.status_comment()
    # at C the experiment reviewer gets what the proof ran and the files the change touched
    at_c = await request(redis_url, story.quest_id, ReviewRole.EXPERIMENT, producer=None,
                         base_url=None)
    url = web.removesuffix("/webhook") + f"/reviews/{at_c.review_id}"
    async with aiohttp.ClientSession() as http, http.post(
            f"{url}/start", json={"session": "experiment-3"},
            headers={"Authorization": f"Bearer {at_c.capability}"}) as resp:
        assert resp.status == 200
        evidence = (await resp.json())["evidence"]
    assert set(evidence["artifacts"]) == {"patch", "proof"}
    assert "exit 0" in evidence["context"]["proof run"]
    assert "pager.py" in evidence["context"]["changed files"]
    assert evidence["context"]["approved plan"]
