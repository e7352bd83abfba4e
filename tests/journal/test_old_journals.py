"""Journals written by earlier releases, kept as fixtures, are read, replayed and continued by
this one (issue 26, item 3).

``tests/journal/fixtures/v<N>-*.jsonl`` are every key questbot kept in Redis during the demo's
main line, recorded by that release with ``scripts/record_journals.py``: at checkpoint A and
closed. They are never re-recorded: a release that changes what it stores records new ones
beside them. Each test loads one into a fresh Redis with today's code.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import redis.asyncio

from bot.agent.evidence_store import EvidenceStore, Piece, StageRecord, dump_stage, load_stage
from bot.core import Policy, State
from bot.journal import Journal
from bot.journal.keys import evidence_key, quest_keys
from bot.journal.records import (
    SCHEMA_VERSION,
    UPCASTERS,
    NewerRecord,
    as_release,
    load_event,
    load_policy,
    load_quest,
)
from bot.journal.recovery import read_recorded, rebuild
from questbot_testing import redis_dump

FIXTURES = Path(__file__).parent / "fixtures"
RELEASES = sorted({p.name.split("-")[0] for p in FIXTURES.glob("v*-*.jsonl")})


def rows(name: str) -> list[redis_dump.Dumped]:
    return redis_dump.read(FIXTURES / name)


def quests_in(dumped: list[redis_dump.Dumped]) -> list[str]:
    return [r["key"][3:-len("}:snap")] for r in dumped if r["key"].endswith("}:snap")]


def stored_quest(dumped: list[redis_dump.Dumped], quest_id: str) -> tuple[int, object]:
    (snap,) = [r["value"] for r in dumped if r["key"] == quest_keys(quest_id).snap]
    return int(snap["v"]), load_quest(snap["quest"])


def test_the_fixtures_are_there_and_small() -> None:
    assert "v1" in RELEASES
    for path in FIXTURES.glob("*.jsonl"):
        assert path.stat().st_size < 64_000, f"{path.name} is no longer a small fixture"


@pytest.mark.parametrize("release", RELEASES)
@pytest.mark.parametrize("moment", ["checkpoint-a", "closed"])
async def test_an_old_journal_replays_to_its_snapshot(redis_async: redis.asyncio.Redis,
                                                      release: str, moment: str) -> None:
    dumped = rows(f"{release}-{moment}.jsonl")
    await redis_dump.load(redis_async, dumped)
    journal = Journal(redis_async, shards=4)
    (quest_id,) = quests_in(dumped)
    rebuilt = await rebuild(journal, quest_id, Policy())
    assert rebuilt.matches, rebuilt.result.invalid
    assert rebuilt.recorded is not None and None not in rebuilt.recorded.uses()
    expected = State.HYPOTHESISED if moment == "checkpoint-a" else State.CLOSED
    assert rebuilt.stored is not None and rebuilt.stored.state is expected


@pytest.mark.parametrize("release", RELEASES)
async def test_an_old_journal_is_driven_on_to_its_end(redis_async: redis.asyncio.Redis,
                                                      release: str) -> None:
    """The quest at checkpoint A, as that release left it, takes the rest of its story — the
    approvals, the push, the proof, the landing, the watch — from today's code, and ends where
    that release's quest ended: closed, the same quest field for field."""
    start, end = rows(f"{release}-checkpoint-a.jsonl"), rows(f"{release}-closed.jsonl")
    await redis_dump.load(redis_async, start)
    journal = Journal(redis_async, shards=4)
    (quest_id,) = quests_in(start)
    version, _ = stored_quest(start, quest_id)
    (events,) = [r["value"] for r in end if r["key"] == quest_keys(quest_id).events]
    (policies,) = [r["value"] for r in end if r["key"] == quest_keys(quest_id).policies]
    policy = load_policy(policies[policies["@1"]])
    later = [json.dumps(fields) for _, fields in events[version:]]
    assert later, "the closed fixture holds no entries after checkpoint A"
    applied = 0
    for entry in later:
        result = await journal.apply(load_event(json.loads(entry)["e"]), policy)
        applied += not result.duplicate
    assert applied >= 5  # the person's and GitHub's events; the follow-ups come by themselves
    end_version, end_quest = stored_quest(end, quest_id)
    now_version, now_quest = await journal.snapshot(quest_id)
    assert now_quest == end_quest and now_version == end_version
    assert now_quest is not None and now_quest.state is State.CLOSED
    assert (await rebuild(journal, quest_id, Policy())).matches


@pytest.mark.parametrize("release", ["v1"])  # recorded before evidence had a version
async def test_old_evidence_is_upcast_and_shown(redis_async: redis.asyncio.Redis,
                                                release: str) -> None:
    """The fixture's evidence was written before evidence carried a version: bare stage
    records, every field. They are read through the evidence upcaster (1 → 2) into the same
    records, and the bundle people see is built from them."""
    dumped = rows(f"{release}-closed.jsonl")
    await redis_dump.load(redis_async, dumped)
    (quest_id,) = quests_in(dumped)
    raw = await redis_async.hgetall(evidence_key(quest_id))
    stages = {k.decode(): v for k, v in raw.items() if k != b"seq"}
    assert set(stages) == {"1:research", "1:reproduce", "1:patch", "1:proof"}
    upcast: list[str] = []
    real = UPCASTERS[("evidence", 1)]

    def counting(data: dict[str, object]) -> dict[str, object]:
        upcast.append(str(data["piece"]))
        return real(data)

    UPCASTERS[("evidence", 1)] = counting
    try:
        for field, value in stages.items():
            as_v1 = StageRecord.model_validate_json(value)  # how that release read it
            assert load_stage(field, value) == as_v1
            again = dump_stage(as_v1)  # rewritten today: smaller, read back the same
            assert json.loads(again)["v"] == SCHEMA_VERSION["evidence"] == 2
            assert len(again) < len(value) and load_stage(field, again) == as_v1
        _, quest = stored_quest(dumped, quest_id)
        bundle = await EvidenceStore(redis_async).lookup(quest)  # type: ignore[arg-type]
    finally:
        UPCASTERS[("evidence", 1)] = real
    pieces = [p.value for p in (Piece.RESEARCH, Piece.REPRODUCE, Piece.PATCH, Piece.PROOF)]
    assert sorted(upcast) == sorted(pieces * 2)  # the records read one by one, then the bundle
    assert bundle is not None and bundle.proof_digest and bundle.outputs
    assert "page" in bundle.hypothesis


async def test_evidence_from_a_newer_release_is_refused_not_skipped(
        redis_async: redis.asyncio.Redis) -> None:
    """A worker of the release before evidence 2 meets a record today's wrote: it refuses
    the whole lookup (the view is written later by a worker that reads it) rather than show a
    bundle that leaves the record out."""
    dumped = rows("v1-closed.jsonl")
    await redis_dump.load(redis_async, dumped)
    (quest_id,) = quests_in(dumped)
    _, quest = stored_quest(dumped, quest_id)
    store = EvidenceStore(redis_async)
    (proof,) = [r for r in await store.records(quest_id) if r.piece is Piece.PROOF]
    await store.record(quest_id, proof)  # today's worker writes it again, as version 2
    with as_release(evidence=1), pytest.raises(NewerRecord, match="newer questbot"):
        await store.lookup(quest)  # type: ignore[arg-type]
    assert (await store.lookup(quest)) is not None  # type: ignore[arg-type]


async def test_the_recorded_policies_of_an_old_journal_are_found(
        redis_async: redis.asyncio.Redis) -> None:
    dumped = rows("v1-closed.jsonl")
    await redis_dump.load(redis_async, dumped)
    (quest_id,) = quests_in(dumped)
    recorded = await read_recorded(Journal(redis_async, shards=4), quest_id)
    assert len(recorded.stored) == 1 and len(recorded.events) == stored_quest(dumped,
                                                                                quest_id)[0]
