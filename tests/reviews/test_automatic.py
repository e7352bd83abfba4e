"""questbot's automatic reviewer on the recorded model server (both protocols), the real
journal and a real Redis: the verdict it reaches, checked against the pinned evidence, is the
automatic decision the core accepts — or no decision when its citations do not hold."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
import redis.asyncio
from pydantic import SecretStr

from bot.agent.model import ModelEndpoint, Wire
from bot.core import Effect, EffectType, Policy, State
from bot.core.events.decisions import CheckpointDecided, Verdict
from bot.journal import Journal
from bot.reviews.agreement import Agreement
from bot.reviews.automatic import AutomaticReviewer
from bot.reviews.capabilities import Capabilities
from bot.reviews.service import Reviews
from bot.worker.reviewing import model_run
from questbot_testing.modelserver.server import ModelServer, recorded
from tests.core.quests import builder_in
from tests.reviews.stored import ADVISORY, QUEST, SHADOW, stored

S = State
MODELS = {"openai": "gpt-4.1-mini", "anthropic": "claude-sonnet-4-5"}


@pytest.fixture(params=["openai", "anthropic"])
def protocol(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
async def served(protocol: str) -> AsyncIterator[ModelServer]:
    names = ("review-design-repaired", "review-experiment-unfounded")
    async with ModelServer(recorded(protocol, *names)) as server:
        yield server


def reviewer(served: ModelServer, protocol: str, client: redis.asyncio.Redis,
             journal: Journal) -> AutomaticReviewer:
    url = f"{served.url}/v1" if protocol == "openai" else served.url
    endpoint = ModelEndpoint(wire=Wire(protocol), url=url,
                             api_key=SecretStr("sk-test-not-a-real-key"), model=MODELS[protocol])
    return AutomaticReviewer(Reviews(journal, Capabilities(client)), model_run(endpoint),
                             Agreement(client))


def asked(state: State, policy: Policy) -> Effect:
    """The ``request_checkpoint`` the journal put in the outbox on the way to ``state``."""
    effects = builder_in(state, policy).effects
    return [e for e in effects if e.type is EffectType.REQUEST_CHECKPOINT][-1]


async def decisions(journal: Journal) -> list[CheckpointDecided]:
    return [e for e in await journal.events(QUEST) if isinstance(e, CheckpointDecided)]


async def test_an_advisory_b_is_decided_by_the_design_review(
        served: ModelServer, protocol: str, redis_async: redis.asyncio.Redis) -> None:
    journal = Journal(redis_async)
    await stored(journal, S.PLANNED, ADVISORY)
    auto = reviewer(served, protocol, redis_async, journal)
    effect = asked(S.PLANNED, ADVISORY)
    verdict = await auto.on_request(effect)
    # the first answer cited a file it was never shown; told so, it asked for a revision
    assert verdict is not None and verdict.founded and verdict.verdict is Verdict.REVISE
    assert served.turns_of("review-design-repaired") == [1, 2]
    _v, quest = await journal.snapshot(QUEST)
    assert quest is not None and quest.state is S.REPRODUCING  # revise at B: plan again
    decided = (await decisions(journal))[-1]
    assert (decided.actor, decided.automatic) == ("review:design_reviewer", True)
    assert "criterion" in decided.reason
    assert await auto.on_request(effect) is None  # once per effect
    served.assert_clean()


async def test_shadow_mode_records_the_review_and_never_advances(
        served: ModelServer, protocol: str, redis_async: redis.asyncio.Redis) -> None:
    journal = Journal(redis_async)
    await stored(journal, S.PLANNED, SHADOW)
    auto = reviewer(served, protocol, redis_async, journal)
    verdict = await auto.on_request(asked(S.PLANNED, SHADOW))
    assert verdict is not None and verdict.verdict is Verdict.REVISE
    _v, quest = await journal.snapshot(QUEST)
    assert quest is not None and quest.state is S.PLANNED
    assert quest.recorded_only_decisions == 1
    assert (await decisions(journal))[-1].actor == "review:design_reviewer"
    # a person's decision is compared with it
    b = builder_in(S.PLANNED, SHADOW)
    person = b.event("checkpoint_decided", checkpoint="B", verdict="revise", actor="maya",
                     reason="say which checks must pass")
    applied = await journal.apply(person, SHADOW)
    await auto.agreement.on_applied(person, applied.quest)
    assert await auto.agreement.counts("octo/demo") == (1, 1)
    await auto.agreement.on_applied(person, applied.quest)  # compared once
    assert await auto.agreement.counts("octo/demo") == (1, 1)


async def test_a_verdict_whose_citations_do_not_hold_decides_nothing(
        served: ModelServer, protocol: str, redis_async: redis.asyncio.Redis) -> None:
    journal = Journal(redis_async)
    await stored(journal, S.READY, ADVISORY)
    auto = reviewer(served, protocol, redis_async, journal)
    verdict = await auto.on_request(asked(S.READY, ADVISORY))
    assert verdict is not None and not verdict.founded
    assert any("tests/test_pager.py" in p for p in verdict.problems)
    _v, quest = await journal.snapshot(QUEST)
    assert quest is not None and quest.state is S.READY  # waits for a person
    assert not [d for d in await decisions(journal) if (d.actor or "").startswith("review:")]
    assert await auto.agreement.counts("octo/demo") == (0, 0)


async def test_a_blocking_checkpoint_outside_shadow_mode_is_not_reviewed(
        served: ModelServer, protocol: str, redis_async: redis.asyncio.Redis) -> None:
    journal = Journal(redis_async)
    await stored(journal, S.PLANNED, Policy())
    auto = reviewer(served, protocol, redis_async, journal)
    assert await auto.on_request(asked(S.PLANNED, Policy())) is None
    assert served.served == []
