"""An effect runner SIGKILLed at random points mid-delivery, again and again: every effect is
still delivered exactly once, counted by key at a recording adapter."""

from __future__ import annotations

import asyncio
import random
import subprocess
import sys
from pathlib import Path

import pytest
import redis.asyncio

from bot.core import EffectType
from bot.journal import Journal, rebuild
from bot.runner import delivered
from questbot_testing.journals import JournalBuilder
from tests.journal.conftest import POLICY
from tests.journal.proc_runner import CLAIM_IDLE_S, SHARDS, runner

ROOT = Path(__file__).resolve().parents[2]
QUESTS, SPENDS, KILLS = 30, 4, 10


def _s(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


async def _settled(client: redis.asyncio.Redis) -> bool:
    """Every outbox empty and every doorbell acknowledged."""
    pipe = client.pipeline(transaction=False)
    for n in range(QUESTS):
        pipe.xlen(f"q:{{q-{n}}}:outbox")
    for s in range(SHARDS):
        pipe.xpending(f"outbox:{{shard-{s}}}", "runners")
    replies = await pipe.execute()
    return not any(replies[:QUESTS]) and not any(r["pending"] for r in replies[QUESTS:])


@pytest.mark.slow
async def test_runner_killed_mid_delivery(redis_async: redis.asyncio.Redis,
                                          redis_url: str) -> None:
    rng = random.Random(7)
    journal = Journal(redis_async, shards=SHARDS)
    builders = [JournalBuilder(f"q-{n}").sense() for n in range(QUESTS)]
    for b in builders:
        for s in range(SPENDS):
            b.add("spend_requested", amount_cents=s, purpose="tokens")
    await journal.apply_many([e for b in builders for e in b.events], POLICY)
    kills = 0
    for n in range(KILLS):
        # new work keeps arriving while runners crash
        await journal.apply_many([b.add("spend_requested", amount_cents=n, purpose="more")
                                  for b in builders], POLICY)
        proc = subprocess.Popen([sys.executable, "-m", "tests.journal.proc_runner", redis_url,
                                 f"crash-{n}"], cwd=ROOT, stdout=subprocess.PIPE, text=True)
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "ready"
        await asyncio.sleep(rng.uniform(0.02, 0.3))
        proc.kill()
        proc.wait()
        kills += 1
    effects = {e.key for b in builders for e in b.effects}
    spends = {b.quest_id: sum(e.type is EffectType.REQUEST_SPEND for e in b.effects)
              for b in builders}
    # a last runner, alive until every outbox is empty (it reclaims the dead ones' doorbells)
    last = runner(redis_async, "survivor")
    await last.setup()
    for _ in range(400):
        await last.run_once(block_ms=20)
        if await _settled(redis_async):
            break
        await asyncio.sleep(CLAIM_IDLE_S / 10)
    writes = {_s(k) for k in await redis_async.hkeys("rec:writes")}
    assert writes == effects, "an effect was lost"
    calls = {_s(k): int(v) for k, v in (await redis_async.hgetall("rec:calls")).items()}
    repeats = sum(calls.values()) - len(calls)
    assert repeats <= kills * 16, "an effect was redelivered without a crash to explain it"
    for n in range(QUESTS):
        qid = f"q-{n}"
        assert set((await delivered(redis_async, qid)).values()) == {"ok"}
        receipts = [e.id for e in await journal.events(qid) if e.id.startswith("receipt:")]
        assert len(receipts) == len(set(receipts)) == spends[qid]
        assert (await rebuild(journal, qid, POLICY)).matches
