"""A rolling upgrade: a worker of an older release (today's code run as that release,
``records.as_release``: the release before evidence 2, and the release before the lagging
snapshot, quest record 2) and today's worker share one Redis and one GitHub while a quest goes
from a failing check to closed; each takes whatever comes to it. Nothing is lost: no effect
failed or dropped, no delivery sent to the dead letters, and what the old worker could not
read it left, loudly, for the new one (issue 26, items 3 and 5; ``docs/operations.md``,
*Upgrades*)."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator

import pytest

from bot.core import State
from bot.journal.keys import evidence_key, inbound_stream, quest_keys
from bot.journal.records import SCHEMA_VERSION, UPCASTERS, as_release
from bot.worker.assembly import Runtime, start_runtime
from questbot_testing.sample import sample_spec
from questbot_testing.scenario import MAINTAINER, REPO, Story, setup_repository
from questbot_testing.stack import Stack, unpaced

pytestmark = pytest.mark.slow  # each takes quests through two releases' workers (~15 s)

RELEASES = {"before evidence 2": {"evidence": 1, "quest": 1},
            "before the lagging snapshot": {"quest": 1}}


@pytest.fixture(params=list(RELEASES))
def release(request: pytest.FixtureRequest) -> dict[str, int]:
    return RELEASES[request.param]


@pytest.fixture
async def old(stack: Stack, release: dict[str, int]) -> AsyncIterator[Runtime]:
    """A worker of an older release on the stack's Redis and GitHub."""
    with as_release(**release):  # and every task it starts
        runtime = await start_runtime(
            redis_url=stack.redis_url, github_api_url=stack.fake.url,
            app_id=stack.fake.world.app_id, private_key=stack.fake.keys.private_pem,
            durable=False, scripted_specs={REPO: sample_spec()}, poll_seconds=0.05,
            limits=unpaced(), shared_pacing=False)
    runtime.worker.intake.ctx.clock = stack.clock
    try:
        yield runtime
    finally:
        await runtime.close()


async def old_settles(old: Runtime, release: dict[str, int]) -> None:
    with as_release(**release):
        await old.worker.settle()


async def new_settles(stack: Stack, quest_id: str, state: State) -> None:
    """The new worker settles until the quest is in ``state``: what the old worker left, it
    claims once the old one stopped keeping it (``Leases.claim_idle_s``, 12 s)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 40
    await stack.settle()
    while (await stack.quest(quest_id)).state is not state:
        assert loop.time() < deadline, f"the quest never reached {state.value}"
        await asyncio.sleep(0.5)
        await stack.settle()


async def test_old_and_new_workers_on_one_redis_lose_nothing(
        stack: Stack, old: Runtime, release: dict[str, int],
        caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO)
    story = Story(stack)
    main = await setup_repository(stack)
    await stack.fake.fail_check(REPO, main, name="tests")
    await old_settles(old, release)  # the old worker senses and researches: quest record 1
    (quest,) = await stack.quests(REPO)
    story.quest_id = quest.id
    assert quest.state is State.HYPOTHESISED
    snap = quest_keys(quest.id).snap
    assert json.loads(await stack.web_client.hget(snap, "quest"))["v"] == 1

    await stack.fake.comment(REPO, story.pr_number(), "/approve A", user=MAINTAINER)
    await new_settles(stack, quest.id, State.PLANNED)  # the new worker carries it on
    assert json.loads(await stack.web_client.hget(snap, "quest"))["v"] == 2
    await stack.fake.comment(REPO, story.pr_number(), "/approve B", user=MAINTAINER)
    before = await stack.quest(quest.id)
    await old_settles(old, release)  # the old worker cannot read quest record 2: it leaves it
    assert (await stack.quest(quest.id)).decisions == before.decisions
    await new_settles(stack, quest.id, State.READY)  # the new one takes what it left
    left = [r for r in caplog.records if "left for a newer questbot" in r.getMessage()]
    assert left and all("quest record is version 2" in r.getMessage()
                        or "evidence record is version 2" in r.getMessage() for r in left)
    assert {r.name for r in left} >= {"bot.worker.process"}  # the command, left
    assert not [r for r in caplog.records  # left, not retried as if GitHub had failed
                if "retrying" in r.getMessage() and "newer" in r.getMessage()]

    stop = asyncio.Event()
    stop.set()
    with as_release(**release):  # the old worker stops: what it left goes to the new one
        await old.worker.runner.run(stop)
    await story.approve("C", State.WATCHING)
    await stack.advance(61)
    await story.step("watched", State.CLOSED)

    client = stack.web_client
    k = quest_keys(quest.id)
    assert await client.xlen(k.failures) == 0  # no effect failed for good
    assert await client.xlen(k.outbox) == 0  # and none is left undelivered
    assert await old.worker.inbound.dead_letters() == 0
    assert (await stack.quest(quest.id)).failed_effects == 0
    stored = {f.decode(): json.loads(v) for f, v in
              (await client.hgetall(evidence_key(quest.id))).items() if f != b"seq"}
    version = {f: record.get("v", 1) if "kind" in record else 1
               for f, record in stored.items()}
    assert version["1:research"] == release.get("evidence", 2)  # the old worker's
    assert version["1:reproduce"] == 2  # the new worker's
    comment = story.status_comment()
    assert "partial last page is dropped" in comment  # research, by the old worker
    assert "round the page count up" in comment.lower()  # the plan, by the new one


async def test_a_command_on_a_quest_a_newer_release_wrote_waits_for_it(
        stack: Stack, monkeypatch: pytest.MonkeyPatch,
        caplog: pytest.LogCaptureFixture) -> None:
    """Today's worker meets a quest snapshot of a newer release (one version past today's):
    the person's /approve is left pending — no try counted, so it can never reach the dead
    letters for it — and the quest is not touched; a worker that reads that version handles
    it."""
    story = Story(stack)
    main = await setup_repository(stack)
    await stack.fake.fail_check(REPO, main, name="tests")
    await stack.settle()
    (quest,) = await stack.quests(REPO)
    story.quest_id = quest.id
    client = stack.web_client
    snap = quest_keys(quest.id).snap
    record = json.loads(await client.hget(snap, "quest"))
    newer = SCHEMA_VERSION["quest"] + 1
    await client.hset(snap, "quest", json.dumps({**record, "v": newer}))  # a newer release's
    worker = stack.runtime.worker
    worker.journal.forget()
    worker.claim_idle_ms = 200
    await stack.fake.comment(REPO, story.pr_number(), "/approve A", user=MAINTAINER)
    await stack.settle()
    assert any("is left for a newer questbot" in r.getMessage() for r in caplog.records)
    stream = inbound_stream(0, 1)  # one Redis: the single inbound stream
    assert await client.hlen(f"{stream}:tries") == 0  # no try counted
    assert await worker.inbound.dead_letters() == 0
    assert json.loads(await client.hget(snap, "quest"))["v"] == newer  # untouched
    assert (await client.xpending(stream, "workers"))["pending"] == 1  # kept for a newer one

    monkeypatch.setitem(SCHEMA_VERSION, "quest", newer)  # now a worker that reads it
    monkeypatch.setitem(UPCASTERS, ("quest", newer - 1), lambda data: data)
    await asyncio.sleep(0.3)  # the delivery is idle past claim_idle_ms: taken again
    await stack.settle()
    assert (await stack.quest(quest.id)).state is State.PLANNED
    assert (await client.xpending(stream, "workers"))["pending"] == 0
