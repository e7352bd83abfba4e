"""``stop_agent`` cancels a model conversation that is waiting on its endpoint."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from aiohttp import web

from bot.agent.command import Stopped
from bot.agent.model import ModelEndpoint, ModelRuns
from bot.agent.model.conversation import ModelAgent
from bot.agent.task import AgentTask, QuestBrief, Stage
from bot.core import Quest


def task() -> AgentTask:
    quest = Quest.model_validate({"id": "q-9", "repo": "o/r", "state": "researching",
                                  "fingerprint": "f", "kind": "check_failure"})
    return AgentTask(stage=Stage.RESEARCH, quest=QuestBrief.of(quest))


async def test_a_stopped_conversation_raises_stopped(checkout: Path) -> None:
    arrived = asyncio.Event()

    async def never(_request: web.Request) -> web.Response:
        arrived.set()
        await asyncio.sleep(3600)
        raise AssertionError("unreachable")

    app = web.Application()
    app.router.add_post("/v1/chat/completions", never)
    runner = web.AppRunner(app, shutdown_timeout=0.5)  # the handler never ends by itself
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    runs = ModelRuns()
    agent = ModelAgent(ModelEndpoint(url=f"http://127.0.0.1:{port}/v1", model="gpt-4.1-mini"),
                       quest_id="q-9", runs=runs)
    try:
        running = asyncio.create_task(agent.run(task(), checkout))
        await asyncio.wait_for(arrived.wait(), 60)
        assert runs.stop("q-9") == 1
        with pytest.raises(Stopped):
            await asyncio.wait_for(running, 30)
        assert runs.stop("q-9") == 0  # nothing left running
    finally:
        await runner.cleanup()
