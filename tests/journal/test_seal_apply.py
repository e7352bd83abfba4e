"""The seal a gate's submission makes is written by the journal's one atomic apply: the same
``EVALSHA APPLY`` that appends the submission to the journal replaces the snapshot holding the
seal (Redis's own ``MONITOR`` shows every write, and from where), and the stored quest reads
back with it — and with the attempts on record."""

from __future__ import annotations

import threading
from typing import Any

import redis
import redis.asyncio

from bot.core.policy import Checkpoint
from bot.journal import Journal
from bot.journal.keys import quest_keys
from questbot_testing.journals import JournalBuilder
from tests.journal.conftest import POLICY

STOP = "seal-test-stop"


def watch(url: str, seen: list[dict[str, Any]], ready: threading.Event) -> None:
    client = redis.Redis.from_url(url)
    with client.monitor() as m:
        ready.set()
        for command in m.listen():
            if STOP in command["command"]:
                return
            seen.append(command)


async def test_the_seal_is_written_in_the_same_apply(journal: Journal, redis_url: str,
                                                     redis_async: redis.asyncio.Redis) -> None:
    b = JournalBuilder("q-sealed").sense()
    b.add("hypothesis_written", summary="off-by-one")
    b.decide("A")
    b.add("reproduced", check="test_pager")
    for event in b.inputs:
        await journal.apply(event, POLICY)
    plan = b.add("plan_written", summary="fix the bound")
    keys = quest_keys("q-sealed")
    seen: list[dict[str, Any]] = []
    ready = threading.Event()
    thread = threading.Thread(target=watch, args=(redis_url, seen, ready))
    thread.start()
    ready.wait(5)
    await journal.apply(plan, POLICY)
    await redis_async.echo(STOP)
    thread.join(5)
    snap, events = keys.snap, keys.events
    writes = [c for c in seen if c["command"].split(" ")[0].upper() in {"HSET", "XADD"}
              and (snap in c["command"] or events in c["command"])]
    assert {c["command"].split(" ")[0].upper() for c in writes} == {"HSET", "XADD"}
    assert all(c["client_type"] == "lua" for c in writes), writes  # inside the script only
    scripts = [c for c in seen if c["command"].split(" ")[0].upper() in {"EVALSHA", "EVAL"}
               and snap in c["command"]]
    assert len(scripts) == 1  # one script for the whole step (the doorbell's is the shard's)
    version = await redis_async.hget(snap, "v")
    # the stored snapshot may lag (``bot.journal.snapshots``): a reader folds the entries after
    # it, the sealing one among them, written by the same script
    journal.forget()
    read_version, quest = await journal.snapshot("q-sealed")
    assert quest is not None and read_version == int(version)
    seal = quest.seal(Checkpoint.B)
    assert seal is not None and seal == b.quest.seal(Checkpoint.B)  # type: ignore[union-attr]
    assert seal.submission == plan.id
    assert int(version) == await redis_async.xlen(events)  # the submission is the last entry


async def test_attempts_on_record_survive_the_store(journal: Journal) -> None:
    b = JournalBuilder("q-attempts").sense()
    b.add("hypothesis_written", summary="off-by-one")
    b.decide("A")
    b.add("reproduced", check="test_pager")
    b.add("plan_written", summary="fix the bound")
    b.decide("B", "revise", actor="carol", reason="which checks must pass?")
    for event in b.inputs:
        await journal.apply(event, POLICY)
    _v, stored = await journal.snapshot("q-attempts")
    assert stored == b.quest
    assert stored is not None and stored.attempt_number == 2
    assert stored.attempt_log[0].reviews[-1].reason == "which checks must pass?"
