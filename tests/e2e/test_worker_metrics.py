"""The worker's /metrics: quests by state, effect delivery latency, GitHub's rate limit."""

from __future__ import annotations

from aiohttp.test_utils import TestClient, TestServer

from bot.worker.http import make_worker_app
from questbot_testing.stack import Stack
from tests.e2e.test_github_flows import at_checkpoint_a


async def test_worker_metrics_show_quests_effects_and_rate_limit(stack: Stack) -> None:
    await at_checkpoint_a(stack)
    runtime = stack.runtime
    app = make_worker_app(runtime.metrics, runtime.worker.journal, runtime.clients.limits)
    async with TestClient(TestServer(app)) as client:
        text = await (await client.get("/metrics")).text()
        health = await client.get("/healthz")
    assert health.status == 200
    assert 'questbot_quests{state="hypothesised"} 1.0' in text
    assert 'questbot_effect_delivery_seconds_count{effect="start_agent"}' in text
    assert "questbot_github_rate_limit_remaining{installation=" in text
