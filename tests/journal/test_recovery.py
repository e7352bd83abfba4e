"""For random journals, written through the journal: the snapshot equals ``fold(journal)``,
and the outbox holds exactly the effects the fold asks for."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
import redis.asyncio
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.core import InvalidTransition, Policy, fold
from bot.journal import Journal, rebuild
from questbot_testing.journals import JournalBuilder

pytestmark = pytest.mark.cluster_too

ACTIONS: list[tuple[str, dict[str, Any]]] = [
    ("hypothesis_written", {"summary": "h"}),
    ("checkpoint_decided", {"checkpoint": "A", "verdict": "approve", "actor": "m"}),
    ("checkpoint_decided", {"checkpoint": "B", "verdict": "approve", "actor": "m"}),
    ("checkpoint_decided", {"checkpoint": "C", "verdict": "approve", "actor": "m"}),
    ("checkpoint_decided", {"checkpoint": "A", "verdict": "revise", "actor": "m"}),
    ("reproduced", {"check": "t"}),
    ("plan_written", {"summary": "p"}),
    ("patch_pushed", {"head": "h1", "pusher": "questbot[bot]"}),
    ("proof_failed", {"head": "h1", "reason": "red"}),
    ("prove", {}),
    ("claimed", {"actor": "m"}),
    ("released", {"actor": "m"}),
    ("paused", {"actor": "m"}),
    ("resumed", {"actor": "m"}),
    ("base_moved", {"base": "b2"}),
    ("landed", {"merge_sha": "m1"}),
    ("watch_clean", {}),
    ("regression_detected", {}),
    ("rollback_confirmed", {"revert_sha": "r1"}),
    ("usage_recorded", {"tokens": 5}),
    ("spend_requested", {"amount_cents": 3, "purpose": "x"}),
    ("signal_attached", {"fingerprint": "fp-1"}),
    ("killed", {"actor": "m"}),
]
_ids = itertools.count()


def build(route: str, picks: list[int]) -> JournalBuilder:
    b = JournalBuilder(f"q-{next(_ids)}").sense(route=route)
    for pick in picks:
        name, fields = ACTIONS[pick]
        try:
            if name == "prove":
                b.prove()
            else:
                b.add(name, **fields)
        except (InvalidTransition, AssertionError, ValueError):
            continue  # the core refused it: a live journal never holds it
    return b


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(route=st.sampled_from(["auto_fix", "research_only", "human", "ignore"]),
       picks=st.lists(st.integers(0, len(ACTIONS) - 1), max_size=40),
       batch=st.booleans())
async def test_snapshot_is_the_fold_of_the_journal(redis_async: redis.asyncio.Redis,
                                                   route: str, picks: list[int],
                                                   batch: bool) -> None:
    policy = Policy()
    b = build(route, picks)
    journal = Journal(redis_async, shards=4)
    if batch:
        await journal.apply_many(b.events, policy)
    else:
        for event in b.events:
            await journal.apply(event, policy)
    rebuilt = await rebuild(journal, b.quest_id, policy)
    assert rebuilt.matches
    assert rebuilt.result.quest == b.quest
    assert [key for _, key in await journal.outbox(b.quest_id)] == [
        e.key for e in fold(b.events, policy).effects]
