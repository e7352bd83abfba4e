"""A sign within seconds, whatever the model does: within five seconds of a failing check's
webhook, GitHub shows questbot's check run at work and the quest's draft pull request — with a
model server that never answers, the worker running its loops as in production
(``Worker.run``), GitHub's pacing figures on a clock that skips the waits."""

from __future__ import annotations

import asyncio
import contextlib
import time

from pydantic import SecretStr

from bot.agent import sandbox
from bot.agent.model import ModelEndpoint, Wire
from questbot_testing.modelserver.behaviours import Hang
from questbot_testing.modelserver.demo import MODEL
from questbot_testing.modelserver.server import ModelServer, recorded
from questbot_testing.scenario import NO_RERUN, REPO, setup_repository
from questbot_testing.stack import Stack, virtual_pacing

SIGN_SECONDS = 5.0


async def test_a_model_that_never_answers_leaves_the_first_sign_as_it_is(
        redis_url: str, redis_async: object) -> None:
    server = await ModelServer(recorded("openai", "research"), behaviours=[Hang(answered=0)],
                               substitutions={"PYTHON": sandbox.python()}).start()
    endpoint = ModelEndpoint(wire=Wire.OPENAI, url=f"{server.url}/v1",
                             api_key=SecretStr("sk-test-not-a-real-key"), model=MODEL,
                             request_timeout_seconds=120, retries=0)
    limits, pace_time = virtual_pacing()
    stack = await Stack(redis_url, model=endpoint, limits=limits, pace_time=pace_time).start()
    stop = asyncio.Event()
    worker = asyncio.create_task(stack.runtime.worker.run(stop))
    try:
        main = await setup_repository(stack, NO_RERUN)
        repo = stack.fake.repo(REPO)
        sent = time.monotonic()
        await stack.fake.fail_check(REPO, main, name="tests")
        runs, pulls = [], []
        while time.monotonic() - sent < SIGN_SECONDS and not (runs and pulls):
            await asyncio.sleep(0.1)
            pulls = [p for p in repo.pulls.values() if p.head_ref.startswith("quest/")]
            runs = [r for r in repo.check_runs.values() if r.name == "questbot"
                    and pulls and r.head_sha == pulls[0].head_sha]
        seen = time.monotonic() - sent
        assert pulls and runs, f"after {seen:.1f}s GitHub shows no draft pull request and " \
            f"check run of questbot's: {[e.operation_id for e in stack.fake.requests]}"
        (pull,) = pulls
        assert pull.draft and runs[-1].status == "in_progress"
        title = repo.issues[pull.number].title
        assert title.startswith("Check tests failed on ") and "questbot:" not in title
        first = repo.git.commits[pull.head_sha]  # the empty commit the pull request needs
        assert first.message.startswith("questbot: start work on the failing `tests` check\n")
        # …and the model has not answered: the sign did not wait for it
        deadline = time.monotonic() + 10
        while server.requests == 0 and time.monotonic() < deadline:
            await asyncio.sleep(0.1)
        assert server.requests >= 1 and not server.served  # asked, never answered
        assert {status for _fact, status in server.played} == {0}
        stack.fake.assert_clean()
    finally:
        stop.set()
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.wait_for(worker, timeout=30)
        await stack.stop()
        await server.close()
