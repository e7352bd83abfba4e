"""The model the demo runs by default: the local model server with the sample's recorded
OpenAI conversations (research, reproduce, patch), and what each stage spent.

Shared by ``scripts/demo`` and ``tests/e2e/test_demo.py`` so the test runs what the demo runs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pydantic import SecretStr

from bot.agent import sandbox
from bot.agent.model import ModelEndpoint, Wire
from bot.core import Event
from bot.core.events.agent_work import (
    AgentHalted,
    HypothesisWritten,
    PatchPushed,
    PlanWritten,
    Reproduced,
)
from bot.core.events.bookkeeping import UsageRecorded
from questbot_testing.modelserver.server import ModelServer, recorded

STAGES = ("research", "reproduce", "patch")
LESSONS = ("lesson-landed", "review-consolidation")
"""What the landed quest teaches, written and reviewed (``bot.lessons.runs``)."""
MODEL = "gpt-4.1-mini"


async def demo_model() -> tuple[ModelServer, ModelEndpoint]:
    server = await ModelServer(recorded("openai", *STAGES, *LESSONS),
                               substitutions={"PYTHON": sandbox.python()}).start()
    endpoint = ModelEndpoint(wire=Wire.OPENAI, url=f"{server.url}/v1",
                             api_key=SecretStr("sk-demo-not-a-real-key"), model=MODEL)
    return server, endpoint


@dataclass
class Spent:
    stage: str
    tokens: int = 0
    cost_cents: int = 0


_STAGE_OF: dict[type, str] = {HypothesisWritten: "research", Reproduced: "reproduce",
                              PlanWritten: "plan", PatchPushed: "patch"}


def spent_by_stage(events: Sequence[Event]) -> list[Spent]:
    """Each agent run's usage receipt, with the stage it followed (a run reports its outcome,
    then its receipt); in journal order."""
    out: list[Spent] = []
    stage = "research"
    for event in events:
        if isinstance(event, AgentHalted):
            stage = event.stage
        elif isinstance(event, PlanWritten) and stage == "reproduce":
            pass  # the reproduce stage reports its plan too
        elif type(event) in _STAGE_OF:
            stage = _STAGE_OF[type(event)]
        elif isinstance(event, UsageRecorded):
            out.append(Spent(event.stage or stage, event.tokens, event.cost_cents))
    return out
