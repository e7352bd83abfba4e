"""The redelivery reconciler on the fake GitHub: deliveries the web process never got (the fake
drops them, or the receiver is down) are found in GitHub's delivery log, asked for again, stored
and handled; the rest — stored ones, events questbot does not store — are left alone; each pass
is bounded and a GUID that never arrives is given up, not asked for forever."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator

import pytest
import redis.asyncio

from bot.runner.inbound import seen_key
from bot.settings.process import load_config
from bot.worker.assembly import redeliverer, redelivery_policy
from bot.worker.redelivery import ASKED_KEY, MARK_KEY, Redeliverer, RedeliveryPolicy
from questbot_testing.stack import Stack, free_port, unpaced

REPO = "octo-org/redeliver"


class Clock:
    def __init__(self) -> None:
        self.now = time.time()

    def __call__(self) -> float:
        return self.now


@pytest.fixture
async def stack(redis_url: str, redis_async: redis.asyncio.Redis) -> AsyncIterator[Stack]:
    s = await Stack(redis_url, limits=unpaced()).start()
    s.fake.create_repository(REPO, {"README.md": "hi\n"})
    try:
        yield s
        s.fake.assert_clean()
    finally:
        await s.stop()


def reconciler(stack: Stack, clock: Clock, **policy: float) -> Redeliverer:
    r = redeliverer(stack.runtime.session, stack.runtime.redis, app_id=stack.fake.world.app_id,
                    private_key=stack.fake.keys.private_pem, base_url=stack.fake.url,
                    limits=unpaced(), metrics=stack.runtime.metrics,
                    policy=RedeliveryPolicy(**{"interval_s": 60.0, "pause_s": 0.0, **policy}),
                    owner="test")
    r.wall = clock
    return r


def counted(stack: Stack, result: str, event: str | None = None) -> float:
    total = 0.0
    for metric in stack.runtime.metrics.redeliveries.collect():
        for sample in metric.samples:
            if (sample.name.endswith("_total") and sample.labels["result"] == result
                    and (event is None or sample.labels["event"] == event)):
                total += sample.value
    return total


def pending(stack: Stack) -> float:
    value = stack.runtime.metrics.registry.get_sample_value("questbot_webhook_redelivery_pending")
    assert value is not None
    return value


async def fail_check(stack: Stack, name: str = "tests") -> None:
    repo = stack.fake.repo(REPO)
    await stack.fake.complete_check_run(REPO, repo.branch_sha("main") or "", name, "failure")


async def stored(client: redis.asyncio.Redis, guid: str) -> bool:
    return bool(await client.exists(seen_key(guid)))


async def test_dropped_deliveries_are_asked_for_stored_and_handled(
    stack: Stack, redis_async: redis.asyncio.Redis
) -> None:
    fake, clock = stack.fake, Clock()
    await fake.open_issue(REPO, "arrives")
    fake.hooks.drop(2)
    await fail_check(stack)
    await fake.open_issue(REPO, "lost too")
    delivered, lost_check, lost_issue = fake.hooks.guids()
    assert fake.hooks.guids(ok=False) == [lost_check, lost_issue]
    assert await stored(redis_async, delivered)
    assert not await stored(redis_async, lost_check)

    r = reconciler(stack, clock)
    report = await r.once()
    assert report.asked == [lost_check, lost_issue]  # oldest first: in the order they happened
    assert counted(stack, "requested", "check_run") == 1
    assert pending(stack) == 2
    await fake.hooks.settle()
    assert await stored(redis_async, lost_check) and await stored(redis_async, lost_issue)
    await stack.runtime.worker.inbound_once()
    assert len(await stack.quests(REPO)) == 1  # the failing check became its quest

    clock.now += 61
    assert (await r.once()).ran is False  # this interval's turn is still held
    await redis_async.delete("redelivery:{redelivery}:turn")
    report = await r.once()
    assert sorted(report.recovered) == sorted([lost_check, lost_issue])
    assert report.asked == []
    assert counted(stack, "recovered") == 2
    assert pending(stack) == 0
    assert await redis_async.hlen(ASKED_KEY) == 0
    assert "questbot_webhook_redeliveries_total" in stack.runtime.metrics.render().decode()


async def test_stored_and_unstored_kinds_are_left_alone(
    stack: Stack, redis_async: redis.asyncio.Redis
) -> None:
    """A delivery GitHub counts as failed but questbot stored (answered late) is not asked
    for; nor is an event questbot does not store; an OK questbot has no record of is."""
    fake = stack.fake
    await fake.open_issue(REPO, "stored")
    (late,) = fake.hooks.entries
    late.status, late.status_code = "timed out", 504  # GitHub gave up; questbot had it
    fake.hooks.drop(1)
    await fake.deliver(fake.repo(REPO), "ping", "payload.json", sender="octocat")
    await fake.open_issue(REPO, "forgotten")
    forgotten = fake.hooks.entries[-1].guid
    await redis_async.delete(seen_key(forgotten))  # Redis lost it after the 202
    report = await reconciler(stack, Clock()).once(force=True)
    assert report.asked == [forgotten]
    assert report.read == 3


async def test_a_pass_is_bounded_and_the_rest_waits_for_the_next(
    stack: Stack, redis_async: redis.asyncio.Redis
) -> None:
    fake, clock = stack.fake, Clock()
    fake.hooks.drop(5)
    for n in range(5):
        await fake.open_issue(REPO, f"lost {n}")
    lost = fake.hooks.guids()
    r = reconciler(stack, clock, max_per_pass=2)
    first = await r.once(force=True)
    assert (first.asked, first.left) == (lost[:2], 3)
    clock.now += 61
    second = await r.once(force=True)
    assert second.asked == lost[2:4]
    clock.now += 61
    third = await r.once(force=True)
    assert third.asked == lost[4:]
    await fake.hooks.settle()
    assert all([await stored(redis_async, g) for g in lost])


async def test_a_delivery_that_never_arrives_is_given_up(
    stack: Stack, redis_async: redis.asyncio.Redis
) -> None:
    fake, clock = stack.fake, Clock()
    fake.webhook_url = f"http://127.0.0.1:{free_port()}/webhook"  # the web process is down
    await fake.open_issue(REPO, "never")
    (guid,) = fake.hooks.guids()
    r = reconciler(stack, clock, max_tries=2)
    asks = []
    for _ in range(5):
        report = await r.once(force=True)
        await fake.hooks.settle()
        asks.append((len(report.asked), len(report.given_up)))
        clock.now += 61
    assert asks == [(1, 0), (1, 0), (0, 1), (0, 0), (0, 0)]
    assert counted(stack, "given_up") == 1
    attempts = [e for e in fake.hooks.entries if e.guid == guid]
    assert [e.redelivery for e in attempts] == [False, True, True]
    assert not await stored(redis_async, guid)


async def test_only_the_window_is_read(stack: Stack) -> None:
    fake, clock = stack.fake, Clock()
    fake.hooks.drop(1)
    await fake.open_issue(REPO, "long ago")
    clock.now += 3 * 3600
    report = await reconciler(stack, clock, window_h=2).once(force=True)
    assert (report.read, report.asked) == (0, [])


async def test_github_trouble_ends_the_pass_without_moving_its_mark(
    stack: Stack, redis_async: redis.asyncio.Redis
) -> None:
    r = reconciler(stack, Clock())
    r.hooks.gh.base_url = f"http://127.0.0.1:{free_port()}"
    report = await r.once(force=True)
    assert report.error is not None and "delivery log" in report.error
    assert await redis_async.get(MARK_KEY) is None


def test_the_settings_turn_it_off_and_set_its_pace(monkeypatch: pytest.MonkeyPatch) -> None:
    from questbot_testing.fakegithub import shared_key_pair

    env = {"GITHUB_APP_ID": "1", "GITHUB_WEBHOOK_SECRET": "redelivery-test-secret",
           "GITHUB_PRIVATE_KEY": shared_key_pair().private_pem}
    assert redelivery_policy(load_config(env | {"QUESTBOT_REDELIVERY": "false"})) is None
    policy = redelivery_policy(load_config(env | {"QUESTBOT_REDELIVERY_INTERVAL": "30",
                                                  "QUESTBOT_REDELIVERY_HOURS": "6",
                                                  "QUESTBOT_REDELIVERY_MAX": "7"}))
    assert policy is not None
    assert (policy.interval_s, policy.window_h, policy.max_per_pass) == (30, 6, 7)


async def test_the_loop_runs_a_pass_each_interval_until_stopped(stack: Stack) -> None:
    import asyncio

    fake = stack.fake
    fake.hooks.drop(1)
    await fake.open_issue(REPO, "lost")
    r = reconciler(stack, Clock(), interval_s=0.2)
    r.wall = time.time
    stop = asyncio.Event()
    loop = asyncio.create_task(r.run(stop))
    for _ in range(100):
        await asyncio.sleep(0.05)
        if counted(stack, "requested"):
            break
    stop.set()
    await asyncio.wait_for(loop, 5)
    assert counted(stack, "requested") == 1
