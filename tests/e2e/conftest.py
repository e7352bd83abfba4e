"""The end-to-end stack as a fixture: fake GitHub, real Redis, web process and worker."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from bot.agent.demo_spec import sample_spec
from tests.e2e.scenario import REPO
from tests.e2e.stack import Stack, unpaced


@pytest.fixture
async def stack(redis_url: str, redis_async: object) -> AsyncIterator[Stack]:
    """A fresh stack on a flushed Redis; every request the bot made must have been valid."""
    s = await Stack(redis_url, scripted_specs={REPO: sample_spec()}, limits=unpaced()).start()
    try:
        yield s
        s.fake.assert_clean()
    finally:
        await s.stop()
