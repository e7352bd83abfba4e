"""``python -m bot review request QUEST_ID --role ROLE`` against a real Redis: the capability
printed once opens the review; a role asked for the wrong gate is refused with exit 2."""

from __future__ import annotations

import asyncio

import pytest
import redis.asyncio

from bot.__main__ import main
from bot.core import State
from bot.journal import Journal
from bot.reviews.capabilities import Capabilities
from tests.reviews.stored import QUEST, stored


async def test_the_printed_capability_opens_the_review(
        redis_url: str, redis_async: redis.asyncio.Redis,
        capsys: pytest.CaptureFixture[str]) -> None:
    await stored(Journal(redis_async), State.PLANNED)
    code = await asyncio.to_thread(main, ["review", "request", QUEST, "--role",
                                          "design_reviewer", "--redis", redis_url,
                                          "--url", "https://questbot.example"])
    out = capsys.readouterr().out
    assert code == 0
    lines = dict(line.split(" ", 1) for line in out.splitlines()[:2])
    record = await Capabilities(redis_async).verify(lines["review"], lines["capability"])
    assert record.role.value == "design_reviewer" and record.checkpoint.value == "B"
    assert f"POST https://questbot.example/reviews/{lines['review']}/start" in out
    assert "Be adversarial" in out


async def test_a_role_for_another_gate_is_refused(redis_url: str,
                                                  redis_async: redis.asyncio.Redis,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    await stored(Journal(redis_async), State.PLANNED)
    code = await asyncio.to_thread(main, ["review", "request", QUEST, "--role",
                                          "experiment_reviewer", "--redis", redis_url])
    assert code == 2
    assert "checkpoint C" in capsys.readouterr().err
