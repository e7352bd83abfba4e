"""``python -m bot status --repo OWNER/NAME``: a repository's live quests from Redis, each read
under the policy its own journal recorded — what the inbox points an operator to when its list
is longer than it shows."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
import redis
import redis.asyncio

from bot.__main__ import main
from bot.core import CheckpointMode, Policy
from bot.core.policy import Checkpoint
from bot.journal import Journal
from questbot_testing.journals import JournalBuilder

ADVISORY_B = Policy(checkpoints={c: CheckpointMode(blocking=c is not Checkpoint.B)
                                 for c in Checkpoint})


def at_b(quest_id: str, repo: str = "octo/demo") -> JournalBuilder:
    b = JournalBuilder(quest_id, repo=repo, policy=ADVISORY_B).sense()
    b.add("hypothesis_written", summary="off by one")
    b.decide("A", actor="alice")
    b.add("reproduced", check="test_last_page")
    b.add("plan_written", summary="round up")
    return b


def store(url: str, *journals: tuple[JournalBuilder, Policy]) -> None:
    async def go() -> None:
        client = redis.asyncio.Redis.from_url(url)
        try:
            for b, policy in journals:
                await Journal(client).apply_many(b.events, policy)
        finally:
            await client.aclose()

    asyncio.run(go())


def test_a_repositorys_live_quests_each_under_its_recorded_policy(
        redis_sync: redis.Redis, redis_url: str, capsys: pytest.CaptureFixture[str]) -> None:
    killed = JournalBuilder("q-gone").sense(fingerprint="fp-2")
    killed.add("killed", actor="alice", reason="not worth it")
    store(redis_url, (at_b("q-b"), ADVISORY_B), (at_b("q-a"), Policy()),
          (killed, Policy()), (at_b("q-other", repo="octo/else"), Policy()))
    assert main(["status", "--repo", "octo/demo", "--redis", redis_url, "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert listed["repo"] == "octo/demo"
    assert [q["quest_id"] for q in listed["quests"]] == ["q-a", "q-b"]  # live, by id
    said = {q["quest_id"]: q["next_action"]["says"] for q in listed["quests"]}
    assert said["q-a"].startswith("a person decides checkpoint B")
    assert said["q-b"].startswith("a reviewer decides (advisory")  # its own recorded policy
    assert main(["status", "--repo", "octo/demo", "--redis", redis_url]) == 0
    text = capsys.readouterr().out
    assert text.startswith("octo/demo: 2 live quests\n")
    assert "  q-a  planned, revision 1, attempt 1 — next: a reviewer: a person decides" in text


def test_a_repository_without_quests_and_a_bad_combination(
        redis_sync: redis.Redis, redis_url: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["status", "--repo", "octo/empty", "--redis", redis_url]) == 0
    assert capsys.readouterr().out == "octo/empty: no live quest\n"
    assert main(["status", "q-1", "--repo", "octo/demo", "--redis", redis_url]) == 2
    assert "name no quest or journal with it" in capsys.readouterr().err


def test_a_quest_parked_by_its_repository_says_why_on_the_command_line(
        redis_sync: redis.Redis, redis_url: str, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    """A repository deleted under a quest takes its pull request and inbox with it: the
    command line is where the note is read, for one quest and for the repository's list."""
    note = "octo/demo was deleted by maya, and its pull requests with it."
    b = at_b("q-gone")
    b.add("paused", repository=note)
    journal = tmp_path / "q-gone.jsonl"
    journal.write_text("".join(e.model_dump_json() + "\n" for e in b.inputs))
    assert main(["status", "--journal", str(journal)]) == 0
    assert f"\nwhy it is parked: {note}\n" in capsys.readouterr().out
    store(redis_url, (b, Policy()))
    assert main(["status", "--repo", "octo/demo", "--redis", redis_url]) == 0
    assert f"\n      why it is parked: {note}" in capsys.readouterr().out
    assert main(["status", "--repo", "octo/demo", "--redis", redis_url, "--json"]) == 0
    (listed,) = json.loads(capsys.readouterr().out)["quests"]
    assert listed["park_note"] == note
