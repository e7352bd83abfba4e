"""The journal records the policy each event was decided under, and every replay path folds
with it: a repository whose settings changed after its quests moved still replays them to the
same decisions. Also the journal's side of two seed readings: triage and the start of research
are two entries of one atomic apply, and a finished quest journals an undeliverable effect
without changing."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
import redis
import redis.asyncio

from bot.__main__ import main
from bot.core import Policy, State
from bot.journal import Journal, quest_keys, rebuild, replay_from_redis
from bot.journal.records import load_policy
from questbot_testing.journals import JournalBuilder, main_line
from tests.core.quests import builder_in

GENEROUS = Policy(max_attempts=3)
STRICT = Policy(max_attempts=1)


def patched_twice(quest_id: str = "q-1") -> JournalBuilder:
    """Two failed proofs and a third patch, allowed while the repository allowed 3 attempts."""
    b = JournalBuilder(quest_id, policy=GENEROUS).sense()
    b.add("hypothesis_written", summary="h")
    b.decide("A")
    b.add("reproduced", check="t")
    b.add("plan_written", summary="p")
    b.decide("B")
    for n in (1, 2):
        b.add("patch_pushed", head=f"h{n}", pusher="questbot[bot]")
        b.add("proof_failed", head=f"h{n}", reason="red")
    b.add("patch_pushed", head="h3", pusher="questbot[bot]")
    return b


async def test_rebuild_after_the_settings_changed_reproduces_the_quest(journal: Journal) -> None:
    b = patched_twice()
    await journal.apply_many(b.events, GENEROUS)
    rebuilt = await rebuild(journal, "q-1", STRICT)  # the repository now allows one attempt
    assert rebuilt.result.invalid is None
    assert rebuilt.matches and rebuilt.result.quest == b.quest
    assert [e.key for e in rebuilt.result.effects] == [e.key for e in b.effects]


async def test_replay_from_redis_folds_with_the_recorded_policies(journal: Journal,
                                                                  redis_url: str) -> None:
    b = patched_twice()
    await journal.apply_many(b.events, GENEROUS)
    replayed = await replay_from_redis(redis_url, "q-1", STRICT)
    assert replayed.invalid is None and replayed.quest == b.quest


def test_the_replay_command_folds_a_stored_quest_with_its_recorded_policies(
        redis_sync: redis.Redis, redis_url: str, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    b = patched_twice()

    async def store() -> None:
        client = redis.asyncio.Redis.from_url(redis_url)
        try:
            await Journal(client).apply_many(b.events, GENEROUS)
        finally:
            await client.aclose()

    asyncio.run(store())
    strict = tmp_path / "strict.json"
    strict.write_text(STRICT.model_dump_json())
    assert main(["replay", "--redis", redis_url, "q-1", "--policy", str(strict)]) == 0
    text = capsys.readouterr().out
    assert "proving at revision 1" in text and "invalid transition: none" in text
    assert "as recorded with each event" in text
    assert main(["replay", "--redis", redis_url, "q-1", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["state"] == "proving" and out["invalid"] is None


async def test_the_policy_is_stored_once_and_the_entries_keep_their_bytes(
        journal: Journal, redis_async: redis.asyncio.Redis) -> None:
    from bot.journal.records import policy_digest
    from bot.journal.recovery import read_recorded

    b = patched_twice()
    await journal.apply_many(b.events, GENEROUS)
    digest = policy_digest(GENEROUS)
    assert len(digest) == 12 and digest == policy_digest(Policy(max_attempts=3))
    recorded = await read_recorded(journal, "q-1")
    assert recorded.digests == [digest] * len(b.events)
    assert recorded.policies == [GENEROUS] * len(b.events)
    stored = await redis_async.hgetall(quest_keys("q-1").policies)
    assert set(stored) == {b"@1", digest.encode()} and stored[b"@1"] == digest.encode()
    assert load_policy(stored[digest.encode()]) == GENEROUS
    for _entry_id, fields in await redis_async.xrange(quest_keys("q-1").events):
        assert sorted(fields) == [b"e", b"id", b"v"]  # no bytes added to any entry
    assert await redis_async.hget(quest_keys("q-1").snap, "p") == digest.encode()


async def test_a_policy_that_changed_mid_quest_is_recorded_from_where_it_took_over(
        journal: Journal) -> None:
    from bot.journal.recovery import read_recorded

    b = patched_twice()
    later = Policy(max_attempts=3, mute_hours=48)
    await journal.apply_many(b.events[:-3], GENEROUS)
    journal.forget()  # another worker process, whose cache knows nothing of the first
    await journal.apply_many(b.events[-3:], later)
    await journal.apply_many([b.event("usage_recorded", tokens=1)], GENEROUS)  # and back
    bodies, changes = await journal.policies("q-1")
    assert len(bodies) == 2 and GENEROUS in bodies.values() and later in bodies.values()
    assert len(changes) == 3
    recorded = await read_recorded(journal, "q-1")
    n = len(b.events)
    assert recorded.policies == [GENEROUS] * (n - 3) + [later] * 3 + [GENEROUS]
    rebuilt = await rebuild(journal, "q-1", STRICT)
    assert rebuilt.matches


async def test_entries_written_before_policies_were_recorded_replay_with_the_given_one(
        journal: Journal, redis_async: redis.asyncio.Redis) -> None:
    from bot.journal.records import as_release
    from bot.journal.recovery import read_recorded

    b = patched_twice()
    with as_release(quest=1):  # an older release: a whole snapshot every apply
        await journal.apply_many(b.events[:-3], GENEROUS)
    k = quest_keys("q-1")
    await redis_async.delete(k.policies)  # what an older release left: no policy records
    await redis_async.hdel(k.snap, "p")
    journal.forget()
    await journal.apply_many(b.events[-3:], GENEROUS)  # then this release took over
    recorded = await read_recorded(journal, "q-1")
    n = len(b.events)
    assert recorded.digests[:n - 3] == [None] * (n - 3)
    assert recorded.policies[n - 3:] == [GENEROUS] * 3
    assert (await rebuild(journal, "q-1", GENEROUS)).matches
    assert not (await rebuild(journal, "q-1", STRICT)).matches


async def test_an_entry_whose_policy_is_missing_is_reported(
        journal: Journal, redis_async: redis.asyncio.Redis) -> None:
    from bot.journal import CorruptJournal
    from bot.journal.records import policy_digest

    b = patched_twice()
    await journal.apply_many(b.events, GENEROUS)
    await redis_async.hdel(quest_keys("q-1").policies, policy_digest(GENEROUS))
    with pytest.raises(CorruptJournal, match="policy"):
        await rebuild(journal, "q-1", STRICT)


# triage and the start of research: two entries, one atomic apply


async def test_triage_and_the_start_of_research_are_journaled_together(journal: Journal) -> None:
    b = JournalBuilder("q-1").sense()
    await journal.apply(b.events[0], GENEROUS)
    applied = await journal.apply(b.events[1], GENEROUS)
    assert applied.version == 2 and applied.quest == b.quest
    assert (await journal.snapshot("q-1"))[0] == 3  # research_started holds version 3
    assert applied.quest.state is State.RESEARCHING
    assert [e.type.value for e in applied.effects] == ["start_agent"]
    stored = await journal.events("q-1")
    assert [e.type for e in stored] == ["signal_sensed", "triaged", "research_started"]
    assert stored == b.events
    again = await journal.apply(b.events[2], GENEROUS)  # the builder's copy of the follow-up
    assert again.duplicate and again.version == 3
    assert (await journal.apply(b.events[1], GENEROUS)).duplicate
    assert len(await journal.events("q-1")) == 3


# a finished quest journals an undeliverable effect and stays as it was


@pytest.mark.parametrize("state", [State.CLOSED, State.ABANDONED])
async def test_an_effect_failed_on_a_finished_quest_is_journaled_and_changes_nothing(
        journal: Journal, redis_async: redis.asyncio.Redis, state: State) -> None:
    b = builder_in(state) if state is State.ABANDONED else main_line("q-1")
    await journal.apply_many(b.events, GENEROUS)
    version, before = await journal.snapshot("q-1")
    outbox = await journal.outbox("q-1")
    failed = b.event("effect_failed", effect_key="q-1:1:run_probes:x:0",
                     effect_type="run_probes", error="502 bad gateway", tries=8)
    result = await journal.apply(failed, GENEROUS)
    assert result.absorbed and result.quest == before and result.effects == ()
    assert (await journal.events("q-1"))[-1] == failed  # journaled, for the timeline
    assert await journal.snapshot("q-1") == (version + 1, before)
    assert await journal.outbox("q-1") == outbox
