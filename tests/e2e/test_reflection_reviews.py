"""Reflection waves lifted by questbot's own reflection and its ``reflection_reviewer`` (issue
14, item 6), end to end on the fake: the web process, the worker, a real Redis, the scripted
agent for the quests and the recorded model server for the writer and the reviewer.

A wave lifted with no person; a reflection the reviewer sends back, shown in the inbox, then a
second that passes; an endpoint that is down, under which the wave stays — and which, once up,
is tried again and passes; down longer than the effect runner tries, then up with nothing new
happening, the worker's look at owed runs ten minutes on lifts the wave and decides the
lessons."""

from __future__ import annotations

import asyncio
from decimal import Decimal

from pydantic import SecretStr

from bot.agent.model import ModelEndpoint, Wire
from bot.agent.model.endpoint import Prices
from bot.core import State
from bot.core.events.signals import Held, Hold, Triaged
from bot.journal.lessons import LessonStore
from bot.journal.limits import RepoLimits
from bot.journal.model_use import Kind, ModelUse, Spent
from bot.journal.reflection_attempts import ReflectionAttempts
from bot.runner.delivery import Backoff
from questbot_testing.modelserver.server import ModelServer, recorded
from questbot_testing.sample import sample_spec
from questbot_testing.scenario import MAINTAINER, READER, REPO, setup_repository
from questbot_testing.stack import Stack, free_port, virtual_pacing
from tests.e2e.conftest import shown_texts
from tests.e2e.test_github_flows import replies
from tests.e2e.test_limits import ISSUES_START, inbox, open_quests, quest_of, words

WAVE = ISSUES_START + "reflection: {after_bad_endings: 2, window_hours: 24}\n"
LIFTED = ("reflect-write", "review-reflection-pass")
LESSONS = ("lesson-abandoned", "review-consolidation-unfounded")
"""What the killed quests teach: a lesson written and not kept (``bot.lessons.runs``)."""


async def reflection_stack(redis_url: str, model_url: str, prices: Prices | None = None) -> Stack:
    """The sample's scripted agent works the quests; the model writes and reviews. An
    endpoint that is down is tried the default four more times, 10 ms apart (not 2+4+8+16 s)."""
    endpoint = ModelEndpoint(wire=Wire.OPENAI, url=f"{model_url}/v1",
                             api_key=SecretStr("sk-test-not-a-real-key"), model="gpt-4.1-mini",
                             prices=prices, retry_wait_seconds=0.01)
    limits, pace_time = virtual_pacing()
    stack = Stack(redis_url, scripted_specs={REPO: sample_spec()}, model=endpoint,
                  limits=limits, pace_time=pace_time)
    return await stack.start()


async def wave_with_one_held(stack: Stack, *reasons: str) -> str:
    """Two quests killed with ``reasons`` and a third opened before the worker looks: the
    wave is due when triage sees the third, so it is held. The held quest's id."""
    await setup_repository(stack, WAVE)
    first = await open_quests(stack, 2)
    for issue, reason in zip(first, reasons, strict=True):
        await stack.fake.comment(REPO, issue.number, f"/kill {reason}", user=MAINTAINER)
    third = await stack.fake.open_issue(REPO, "bug number 2", user=READER, labels=["questbot"])
    await stack.settle()
    return quest_of(await stack.quests(REPO), third).id


async def held_then_started(stack: Stack, quest_id: str) -> None:
    quest = await stack.quest(quest_id)
    assert quest.state is State.HYPOTHESISED and quest.held is None
    events = await stack.runtime.worker.journal.events(quest_id)
    held = [e for e in events if isinstance(e, Held)]
    assert [h.reason for h in held] == [Hold.REFLECTION]
    assert any(isinstance(e, Triaged) for e in events[events.index(held[0]):])


async def test_a_wave_is_lifted_by_the_reflection_reviewers_pass_with_no_person(
        redis_url: str, redis_async: object) -> None:
    async with ModelServer(recorded("openai", *LIFTED, *LESSONS)) as served:
        stack = await reflection_stack(redis_url, served.url,
                                       Prices(input=Decimal(10), output=Decimal(30)))
        try:
            held = await wave_with_one_held(
                stack, "the fix guessed at the cause without reading the log",
                "guessed again, the log said otherwise")
            await held_then_started(stack, held)
            await what_the_reflection_cost_is_on_record(stack)
            assert served.turns_of("reflect-write") == [1]
            assert served.turns_of("review-reflection-pass") == [1]
            # the reviewer was fed the reflection and the record, never the writer's talk
            review = next(s.request for s in served.served
                          if s.conversation == "review-reflection-pass")
            sent = str(review["messages"])
            assert "reflect: write" not in sent and "the log said otherwise" in sent
            passed = await RepoLimits(stack.runtime.redis).passed(REPO)
            assert passed is not None and passed.by == "questbot"
            assert passed.reviewer == "reflection reviewer" and "failing log" in passed.text
            body = words(inbox(stack).body or "")
            assert "A reflection is due" not in body and "Waiting to start" not in body
            shown = [text for op, text in shown_texts(stack) if op == "issues/update"]
            assert any("waits for its review by the reflection reviewer" in t for t in shown)
            box = inbox(stack)
            await stack.fake.comment(REPO, box.number, "/reflect we should read logs",
                                     user=READER)  # no write access, and no wave now
            await stack.settle()
            assert any("no reflection is due" in r for r in replies(stack, box.number))
            (fourth,) = await open_quests(stack, 1, start=3)  # the wave is over
            assert quest_of(await stack.quests(REPO), fourth).state is State.HYPOTHESISED
            served.assert_clean()
            stack.fake.assert_clean()
        finally:
            await stack.stop()


async def what_the_reflection_cost_is_on_record(stack: Stack) -> None:
    """The recorded writer used 1,500 + 160 tokens and the reviewer 1,700 + 120; at $10 and
    $30 a million that is 1.98 and 2.06 cents, rounded up per run. Counted once each in the
    repository's ledger, shown in the inbox, and on the worker's /metrics."""
    use = ModelUse(stack.runtime.redis)
    assert await use.spent(REPO) == Spent(tokens=3480, cents=5, runs=2)
    assert await use.spent(REPO, (Kind.REFLECTION_REVIEWER,)) == Spent(1820, 3, 1)
    assert "reflections so far used 3,480 tokens ($0.05)" in words(inbox(stack).body or "")
    await stack.settle()  # delivered again by nobody: still counted once
    metrics = stack.runtime.metrics.render().decode()
    for kind, tokens, cents in (("reflection_writer", 1660, 2),
                                ("reflection_reviewer", 1820, 3)):
        labels = f'{{kind="{kind}",repo="{REPO.lower()}"}}'
        assert f"questbot_repository_model_tokens_total{labels} {tokens}.0" in metrics
        assert f"questbot_repository_model_cost_cents_total{labels} {cents}.0" in metrics


async def test_a_rejected_reflection_is_shown_and_a_second_one_passes(
        redis_url: str, redis_async: object) -> None:
    names = ("reflect-vague", "review-reflection-reject", "reflect-again",
             "review-reflection-pass-again")
    async with ModelServer(recorded("openai", *names, *LESSONS)) as served:
        stack = await reflection_stack(redis_url, served.url)
        try:
            held = await wave_with_one_held(stack, "wrong idea", "wrong idea again")
            await held_then_started(stack, held)
            assert [served.turns_of(n) for n in names] == [[1], [1], [1], [1]]
            attempts = ReflectionAttempts(stack.runtime.redis)
            first = await attempts.review(REPO, 0, "1")
            second = await attempts.review(REPO, 0, "2")
            assert first is not None and first.passed is False
            assert "names no cause" in first.synopsis
            assert second is not None and second.passed is True
            written = await attempts.attempt(REPO, 0, "2")
            assert written is not None and written.session != second.session
            shown = [words(text) for op, text in shown_texts(stack) if op == "issues/update"]
            assert any("The reflection reviewer sent back the reflection by `questbot`: It "
                       "names no cause" in t for t in shown)
            assert "sent back" not in words(inbox(stack).body or "")  # passed since
            passed = await RepoLimits(stack.runtime.redis).passed(REPO)
            assert passed is not None and "must quote the failing log" in passed.text
            served.assert_clean()
        finally:
            await stack.stop()


async def test_with_the_endpoint_down_the_wave_stays_and_is_tried_again_later(
        redis_url: str, redis_async: object) -> None:
    port = free_port()
    stack = await reflection_stack(redis_url, f"http://127.0.0.1:{port}")
    try:
        held = await wave_with_one_held(
            stack, "the fix guessed at the cause without reading the log",
            "guessed again, the log said otherwise")
        quest = await stack.quest(held)
        assert quest.state is State.SENSED and quest.held is Hold.REFLECTION
        limits = RepoLimits(stack.runtime.redis)
        assert await limits.passed(REPO) is None and await limits.pending(REPO) is None
        assert await ReflectionAttempts(stack.runtime.redis).attempt(REPO, 0, "1") is None
        body = words(inbox(stack).body or "")
        assert "A reflection is due" in body
        assert f"**{quest.title}**: waits for a reflection" in body and held not in body
        async with ModelServer(recorded("openai", *LIFTED, *LESSONS), port=port) as served:
            await asyncio.sleep(2.5)  # the effect runner's backoff after the failed try
            await stack.settle()
            await held_then_started(stack, held)
            assert served.turns_of("reflect-write") == [1]
            served.assert_clean()
    finally:
        await stack.stop()


async def test_runs_the_runner_gave_up_on_are_asked_again_with_no_new_event(
        redis_url: str, redis_async: object) -> None:
    port = free_port()
    stack = await reflection_stack(redis_url, f"http://127.0.0.1:{port}")
    stack.runtime.worker.runner.backoff = Backoff(base_s=0.01, cap_s=0.01, max_tries=1)
    try:
        held = await wave_with_one_held(
            stack, "the fix guessed at the cause without reading the log",
            "guessed again, the log said otherwise")  # the runner gives up at the first try
        lessons = LessonStore(stack.runtime.redis)
        owed = await lessons.owed(REPO)
        assert owed  # the killed quests' lessons, not written
        async with ModelServer(recorded("openai", *LIFTED, *LESSONS), port=port) as served:
            await stack.settle()  # back up, and nothing new happens: nothing is asked yet
            assert served.served == []
            assert (await stack.quest(held)).held is Hold.REFLECTION
            await stack.advance(minutes=9)
            assert served.served == []  # not before ten minutes
            await stack.advance(minutes=2)  # the worker looks at what the repository owes
            await held_then_started(stack, held)
            assert served.turns_of("reflect-write") == [1]
            assert await lessons.owed(REPO) == []
            for quest_id, revision, _ending in owed:
                assert await lessons.fate(quest_id, revision, REPO) is not None
            asked = len(served.served)
            await stack.advance(minutes=11)  # owing nothing now: nothing more is asked
            assert len(served.served) == asked
            served.assert_clean()
    finally:
        await stack.stop()


async def test_a_reflection_by_someone_without_write_access_goes_to_the_reviewer(
        redis_url: str, redis_async: object) -> None:
    async with ModelServer(recorded("openai", *LIFTED, *LESSONS)) as served:
        stack = await reflection_stack(redis_url, served.url)
        try:
            await setup_repository(stack, WAVE)
            first = await open_quests(stack, 2)
            for issue, reason in zip(first, ("the fix guessed at the cause without reading "
                                             "the log", "guessed again, the log said "
                                             "otherwise"), strict=True):
                await stack.fake.comment(REPO, issue.number, f"/kill {reason}",
                                         user=MAINTAINER)
            await stack.fake.comment(REPO, first[0].number, "/reflect Research starts from "
                                     "the failing log and quotes it before any fix is planned.",
                                     user=READER)
            await stack.settle()
            said = replies(stack, first[0].number)
            assert any("goes to questbot's reflection reviewer" in r for r in said)
            assert not any("needs write access" in r for r in said)
            passed = await RepoLimits(stack.runtime.redis).passed(REPO)
            assert passed is not None and passed.by == READER
            assert passed.reviewer == "reflection reviewer"
            assert served.turns_of("review-reflection-pass") == [1]  # rex's, reviewed once
            served.assert_clean()
        finally:
            await stack.stop()
