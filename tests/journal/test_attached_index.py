"""A quest is found by every fingerprint it holds: the reports of one failure attached to it
(a matrix job, its suite, its workflow run) index it as its first signal does, so a later
failure of any of them finds it — and a rebuild from the quest writes them again."""

from __future__ import annotations

import pytest
import redis.asyncio

from bot.journal import Indexes, Journal
from bot.journal.indexes import IndexWrites
from questbot_testing.journals import JournalBuilder
from tests.journal.conftest import POLICY

pytestmark = pytest.mark.cluster_too


async def test_attached_fingerprints_find_the_quest(journal: Journal,
                                                    redis_async: redis.asyncio.Redis) -> None:
    idx = Indexes(redis_async)
    b = JournalBuilder("q-m").sense(fingerprint="check:a")
    for fingerprint in ("suite:ci", "workflow:CI", "suite:ci"):
        b.add("signal_attached", fingerprint=fingerprint, source="x")
    await journal.apply_many(b.events, POLICY)
    for fingerprint in ("check:a", "suite:ci", "workflow:CI"):
        assert await idx.quests_with_fingerprint("octo/demo", fingerprint) == {"q-m"}
    assert await idx.quests_with_fingerprint("octo/demo", "check:b") == set()


def test_only_new_attached_fingerprints_are_written_and_a_rebuild_writes_all() -> None:
    b = JournalBuilder("q-m").sense(fingerprint="check:a")
    b.add("signal_attached", fingerprint="suite:ci", source="x")
    before = b.quest
    b.add("signal_attached", fingerprint="workflow:CI", source="y")
    writes = IndexWrites()
    writes.transition(before, b.quest, (), b.start)
    assert list(writes.commands()) == [("SADD", "repo:{octo/demo}:fp:workflow:CI", "q-m")]
    writes = IndexWrites()
    writes.transition(None, b.quest, (), b.start, full=True)
    added = {c[1] for c in writes.commands() if c[0] == "SADD"}
    assert {"repo:{octo/demo}:fp:check:a", "repo:{octo/demo}:fp:suite:ci",
            "repo:{octo/demo}:fp:workflow:CI"} <= added
