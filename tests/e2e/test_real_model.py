"""A real model server's behaviour on the whole stack (issue 25): the web process, the worker,
Redis, the fake GitHub, and the recorded model server playing llama.cpp's server.

Before: questbot sent ``tool_choice: "required"``, llama.cpp answered HTTP 500, questbot took
it for "unavailable", tried 24 requests, marked the effect failed for good — and the quest
stayed ``researching`` for ever: check run in progress, "The agent is gathering evidence", the
model's error under "Could not be done on GitHub", no park, no inbox entry.

Now: questbot adapts to what the server refuses and the quest goes on to checkpoint A; and a
server that refuses whatever questbot sends parks the quest saying so — with the server's own
words and the next step on the check run, the status comment and the inbox — never called a
GitHub failure, never stuck."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import AsyncIterator, Sequence

import pytest
from pydantic import SecretStr

from bot.agent import sandbox
from bot.agent.model import ModelEndpoint, Wire
from bot.core import State
from bot.core.quest import ParkReason
from questbot_testing.modelserver import behaviours as b
from questbot_testing.modelserver.server import ModelServer, recorded
from questbot_testing.scenario import REPO, SETTINGS, Story, setup_repository
from questbot_testing.stack import Stack, virtual_pacing


async def stack_with(redis_url: str, server: ModelServer, *, probe: bool = False) -> Stack:
    endpoint = ModelEndpoint(wire=Wire.OPENAI, url=f"{server.url}/v1",
                             api_key=SecretStr("sk-test-not-a-real-key"),
                             model="qwen2.5-coder-0.5b", retry_wait_seconds=0.01)
    limits, pace_time = virtual_pacing()
    return await Stack(redis_url, model=endpoint, limits=limits, pace_time=pace_time,
                       probe_model=probe).start()


@pytest.fixture
async def llamacpp(request: pytest.FixtureRequest) -> AsyncIterator[ModelServer]:
    behaviours: Sequence[b.Behaviour] = request.param
    server = await ModelServer(recorded("openai", "research", "probe-tools", "probe-limit"),
                               behaviours=behaviours,
                               substitutions={"PYTHON": sandbox.python()}).start()
    try:
        yield server
    finally:
        await server.close()


async def fail_and_settle(stack: Stack) -> tuple[Story, object]:
    main = await setup_repository(stack, settings=SETTINGS)
    await stack.fake.fail_check(REPO, main, name="tests")
    await stack.settle()
    (quest,) = await stack.quests(REPO)
    return Story(stack, quest_id=quest.id), quest


def questbot_runs(stack: Stack, quest_id: str) -> list[object]:
    return [r for r in stack.fake.repo(REPO).check_runs.values()
            if r.name == "questbot" and r.external_id == quest_id]


@pytest.mark.parametrize("llamacpp", [b.llamacpp_chatml_function_calling()], indirect=True)
async def test_llamacpp_refusing_required_no_longer_leaves_the_quest_stuck(
        llamacpp: ModelServer, redis_url: str, redis_async: object) -> None:
    stack = await stack_with(redis_url, llamacpp)
    try:
        story, quest = await fail_and_settle(stack)
        quest = await stack.quest(story.quest_id)
        assert quest.state is State.HYPOTHESISED and quest.failed_effects == 0
        assert llamacpp.requests == 6  # two refusals met once each, then the four turns
        runs = questbot_runs(stack, quest.id)
        assert all(r.status == "completed" for r in runs)
        assert runs[-1].conclusion == "action_required"  # checkpoint A waits for a person
        assert "partial last page is dropped" in story.status_comment().replace("\\", "")
        llamacpp.assert_clean()
    finally:
        await stack.stop()


@pytest.mark.parametrize("llamacpp", [[b.Refuses("llamacpp-required-500", times=99)]],
                         indirect=True)
async def test_a_server_refusing_everything_parks_the_quest_in_peoples_words(
        llamacpp: ModelServer, redis_url: str, redis_async: object) -> None:
    stack = await stack_with(redis_url, llamacpp)
    try:
        story, quest = await fail_and_settle(stack)
        quest = await stack.quest(story.quest_id)
        assert (quest.state, quest.park_reason) == (State.PARKED, ParkReason.MODEL_FAILED)
        assert quest.resume_state is State.RESEARCHING and quest.failed_effects == 0
        assert llamacpp.requests <= 4  # not 24

        runs = questbot_runs(stack, quest.id)
        assert runs and all(r.status == "completed" for r in runs)  # nothing left in progress
        newest = runs[-1]
        assert newest.conclusion == "action_required"
        assert newest.output["title"] == "questbot: the model endpoint failed"
        comment = story.status_comment()
        for said in (newest.output["summary"], comment):
            assert "answered HTTP 500 with no message" in said
            assert "/resume" in said and "model endpoint" in said
        assert "gathering evidence" not in comment
        assert "on GitHub" not in comment.split("Timeline")[0]  # never a GitHub failure
        inbox = [i for i in stack.fake.repo(REPO).issues.values()
                 if i.title == "questbot inbox"]
        assert inbox and quest.id in inbox[0].body
        assert "the model endpoint failed" in inbox[0].body
    finally:
        await stack.stop()


@pytest.mark.parametrize("llamacpp", [b.llamacpp_chatml_function_calling()], indirect=True)
async def test_the_worker_asks_the_endpoint_at_start_and_sends_what_it_takes(
        llamacpp: ModelServer, redis_url: str, redis_async: object,
        no_secrets_in_logs: list[str]) -> None:
    stack = await stack_with(redis_url, llamacpp, probe=True)
    try:
        probed = list(llamacpp.played)
        assert probed == [("llamacpp-required-500", 500), ("llamacpp-null-content-500", 500)]
        said = "\n".join(no_secrets_in_logs)
        assert 'sends tool_choice "auto"' in said and 'sends content ""' in said
        assert "puts the output limit in max_tokens" in said
        metrics = stack.runtime.metrics.render().decode()
        assert 'questbot_model_endpoint{setting="tool_choice",value="auto"} 1.0' in metrics
        assert 'questbot_model_endpoint{setting="content",value="empty"} 1.0' in metrics
        assert 'questbot_model_endpoint{setting="output_limit",value="max_tokens"} 1.0' in \
            metrics

        story, _quest = await fail_and_settle(stack)
        assert (await stack.quest(story.quest_id)).state is State.HYPOTHESISED
        assert llamacpp.played == probed  # research met no refusal: it was told at start
        assert llamacpp.turns_of("research") == [1, 2, 3, 4]
        llamacpp.assert_clean()
    finally:
        await stack.stop()


@pytest.mark.parametrize("llamacpp", [[b.AnswersInProse()]], indirect=True)
async def test_a_model_answering_in_prose_is_read_in_its_transcript_and_on_github(
        llamacpp: ModelServer, redis_url: str, redis_async: object) -> None:
    """Issue 25: the model wrote prose where a tool call was due, the stage failed with
    "Exceeded maximum output retries", and its words appeared nowhere. Now the stage's
    conversation is kept with the quest: ``python -m bot transcript`` prints it, and the
    status comment folds what the model said last."""
    stack = await stack_with(redis_url, llamacpp)
    try:
        story, quest = await fail_and_settle(stack)
        quest = await stack.quest(story.quest_id)
        assert (quest.state, quest.park_reason) == (State.PARKED, ParkReason.AGENT_FAILED)
        prose = b.fact("llamacpp-prose")["content"]

        done = subprocess.run(  # the command an operator runs, as a process of its own
            [sys.executable, "-m", "bot", "transcript", quest.id, "--stage", "research",
             "--redis", redis_url], capture_output=True, text=True, timeout=120, check=False)
        assert done.returncode == 0, done.stderr
        out = done.stdout
        assert out.startswith(f"quest {quest.id}: research at revision 1 — the stage failed: "
                              "the model did not give a usable answer")
        assert "questbot asked:\n    " in out and "stage: research;" in out
        said = "\n".join(f"    {line}" for line in prose.splitlines())
        assert out.count(f"the model said:\n{said}") == llamacpp.requests  # every answer
        assert "questbot sent the answer back:" in out  # the retries asking for a call
        assert "sk-test-not-a-real-key" not in out

        comment = story.status_comment()
        fold = comment.split("<details><summary>What the model said last (research)"
                             "</summary>")[1].split("</details>")[0]
        assert "To understand why `page_count(10, 3)` returns 3" in fold
        assert "```text\n" in fold and "fit into a given number of pages" in fold
        assert f"`questbot transcript {quest.id} --stage research`" in fold
    finally:
        await stack.stop()
