"""The repository's limit indexes, written after each apply from the transition (issue 14,
item 6): a bad ending is counted once however often its event is delivered, and a held quest
is listed while it is held, in the order it was first held."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from bot.journal import Journal
from bot.journal.limits import ReflectionRecord, RepoLimits
from questbot_testing.journals import JournalBuilder
from tests.journal.conftest import POLICY


async def test_a_bad_ending_counts_once_and_held_quests_are_listed(journal: Journal) -> None:
    limits = RepoLimits(journal.client)
    moments = iter(datetime(2026, 1, 1, tzinfo=UTC) + timedelta(minutes=m) for m in range(99))
    journal.clock = lambda: next(moments)
    killed = JournalBuilder("q-killed").sense()
    killed.add("killed", actor="maya", reason="wrong idea")
    for event in [*killed.inputs, killed.inputs[-1]]:  # the kill delivered twice
        await journal.apply(event, POLICY)
    assert len(await limits.bad_endings("octo/demo")) == 1
    waiting = []
    for name in ("q-held-1", "q-held-2"):
        b = JournalBuilder(name)
        b.add("signal_sensed", repo="octo/demo", fingerprint=name, kind="check_failure")
        b.add("held", reason="slot")
        for event in b.inputs:
            await journal.apply(event, POLICY)
        waiting.append(b)
    assert [q for q, _ms in await limits.held("octo/demo")] == ["q-held-1", "q-held-2"]
    start = waiting[0].add("triaged", route="auto_fix")
    await journal.apply(start, POLICY)
    assert [q for q, _ms in await limits.held("octo/demo")] == ["q-held-2"]
    assert len(await limits.bad_endings("octo/demo")) == 1  # starting is no ending


async def test_a_reflection_passes_and_a_pending_one_is_done_with(journal: Journal) -> None:
    limits = RepoLimits(journal.client)
    at = datetime(2026, 1, 1, tzinfo=UTC)
    await limits.propose("octo/demo", ReflectionRecord(text="we guessed", by="bot", at=at))
    assert (await limits.pending("octo/demo")) is not None
    record = ReflectionRecord(text="we guessed; now we read logs", by="maya", at=at,
                              reviewer="maya")
    await limits.pass_reflection("octo/demo", record)
    assert await limits.passed("octo/demo") == record
    assert await limits.pending("octo/demo") is None
