"""A demo quest closed, compacted by the worker's sweep, read by ``python -m bot replay`` and
``status`` as before, and reopened from its compacted record by a regression."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from bot.core import State
from bot.journal.compaction import read_compacted
from bot.journal.keys import quest_keys
from bot.worker.compaction_sweep import CompactionSweep
from questbot_testing.scenario import REPO, Story, main_line, regression
from questbot_testing.stack import Stack

ROOT = Path(__file__).resolve().parents[2]


def _s(key: bytes | str) -> str:
    return key.decode() if isinstance(key, bytes) else key


def cli(*args: str, url: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "bot", *args], cwd=ROOT, text=True,
                          capture_output=True, timeout=120,
                          env={**os.environ, "REDIS_URL": url}, check=False)


@pytest.mark.cluster_too
async def test_a_closed_quest_compacted_replays_and_reopens(stack: Stack,
                                                           redis_async_url: str) -> None:
    story = Story(stack)
    quest = await main_line(story)
    assert quest.state is State.CLOSED
    qid = story.quest_id
    before = [cli("replay", "--redis", redis_async_url, qid, "--json", url=redis_async_url),
              cli("status", qid, "--json", url=redis_async_url)]
    assert all(p.returncode == 0 for p in before), [p.stderr for p in before]

    client = stack.runtime.worker.journal.client
    sweep = CompactionSweep(client, 3600, clock=lambda: stack.clock() + timedelta(days=2))
    assert await sweep.sweep_once() == 1
    assert await read_compacted(client, qid) is not None
    # one key is left of the quest — its lesson runs' trail and its pull request's thread's
    # went with the rest — and the quest's own slot holds nothing else
    left = {_s(k) async for k in client.scan_iter(match=f"*{qid}*")}
    assert left == {quest_keys(qid).snap}
    pr = story.pr_number()
    assert not [k async for k in client.scan_iter(match=f"q:{{{REPO}#{pr}}}:*")]

    after = [cli("replay", "--redis", redis_async_url, qid, "--json", url=redis_async_url),
             cli("status", qid, "--json", url=redis_async_url)]
    assert all(p.returncode == 0 for p in after), [p.stderr for p in after]
    for old, new in zip(before, after, strict=True):
        assert json.loads(new.stdout) == json.loads(old.stdout)

    quest = await regression(story)  # the regression reopens it from the record
    assert quest.revision == 2
    assert await read_compacted(client, qid) is None



async def test_a_closed_quest_exported_to_a_file_replays_and_reopens(
        stack: Stack, redis_async_url: str, tmp_path: Path) -> None:
    """Beyond the second age the record leaves Redis for a file (``QUESTBOT_EXPORT_DIR``):
    ``replay`` and ``status`` read it from there with the same answers, Redis keeps only where
    the file is, and a regression brings the quest back from the file and reopens it."""
    story = Story(stack)
    quest = await main_line(story)
    assert quest.state is State.CLOSED
    qid = story.quest_id
    before = [cli("replay", "--redis", redis_async_url, qid, "--json", url=redis_async_url),
              cli("status", qid, "--json", url=redis_async_url)]
    assert all(p.returncode == 0 for p in before), [p.stderr for p in before]

    client = stack.runtime.worker.journal.client
    later = timedelta(days=2)
    sweep = CompactionSweep(client, 3600, clock=lambda: stack.clock() + later,
                            export_dir=tmp_path, export_after_s=600)
    assert await sweep.sweep_once() == 1
    later = timedelta(days=2, minutes=11)
    await sweep.sweep_once()
    assert [p.suffix for p in tmp_path.iterdir()] == [".qz"]
    snap = quest_keys(qid).snap
    assert await client.hget(snap, "z") == b""
    assert await client.memory_usage(snap) < 600
    assert {_s(k) async for k in client.scan_iter(match=f"*{qid}*")} == {snap}

    after = [cli("replay", "--redis", redis_async_url, qid, "--json", url=redis_async_url),
             cli("status", qid, "--json", url=redis_async_url)]
    assert all(p.returncode == 0 for p in after), [p.stderr for p in after]
    for old, new in zip(before, after, strict=True):
        assert json.loads(new.stdout) == json.loads(old.stdout)

    quest = await regression(story)  # the regression brings it back from the file
    assert quest.revision == 2
    assert await read_compacted(client, qid) is None


async def _naming(client: object, quest_id: str) -> set[tuple[str, str]]:
    """Every place in Redis that names the quest: ``(key, "key")`` for a key with its id in its
    name, ``(key, <field or "member">)`` for a hash field, set or sorted-set member, string or
    list whose value holds it."""
    found: set[tuple[str, str]] = set()
    c: Any = client
    async for raw in c.scan_iter(count=1000):
        key = _s(raw)
        if quest_id in key:
            found.add((key, "key"))
            continue
        kind = _s(await c.type(key))
        if kind == "hash":
            found |= {(key, _s(f)) for f, v in (await c.hgetall(key)).items()
                      if quest_id in _s(f) or quest_id in _s(v)}
        elif kind == "set":
            found |= {(key, "member") for m in await c.smembers(key) if quest_id in _s(m)}
        elif kind == "zset":
            found |= {(key, "member") for m in await c.zrange(key, 0, -1) if quest_id in _s(m)}
        elif kind == "string" and quest_id in _s(await c.get(key)):
            found.add((key, "value"))
        elif kind == "list" and any(quest_id in _s(v) for v in await c.lrange(key, 0, -1)):
            found.add((key, "item"))
        elif kind == "stream" and any(quest_id in _s(v) for _, fields in
                                      await c.xrange(key) for v in fields.values()):
            found.add((key, "entry"))
    return found


async def test_an_exported_quest_leaves_only_what_is_documented(
        stack: Stack, redis_async_url: str, tmp_path: Path) -> None:
    """After an ended quest is compacted and exported, Redis names it in these places only
    (``docs/storage.md``, "What an ended quest keeps in Redis"): its snapshot hash (where its
    file is), a member of its repository's quests and of its fingerprint's quests (a
    regression reopens it by the fingerprint), its pull request's ``pr:<n>`` field (a comment
    there finds it) and the failure's key, which expires after 30 days. No due list, export
    list, view owed, timer, live set, lease, trail or GitHub record of the quest is left."""
    story = Story(stack)
    quest = await main_line(story)
    assert quest.state is State.CLOSED
    qid = story.quest_id
    client = stack.runtime.worker.journal.client
    later = timedelta(days=2)
    sweep = CompactionSweep(client, 3600, clock=lambda: stack.clock() + later,
                            export_dir=tmp_path, export_after_s=600)
    assert await sweep.sweep_once() == 1
    later = timedelta(days=2, minutes=11)
    await sweep.sweep_once()
    assert [p.suffix for p in tmp_path.iterdir()] == [".qz"]

    places = await _naming(client, qid)
    failures = {key for key, _ in places if ":failure:" in key}
    fingerprints = {key for key, _ in places if ":fp:" in key}
    assert len(failures) == len(fingerprints) == 1, places
    assert places == {
        (quest_keys(qid).snap, "key"),
        (f"repo:{{{REPO}}}:quests", "member"),
        (fingerprints.pop(), "member"),
        (f"repo:{{{REPO}}}:gh", f"pr:{story.pr_number()}"),
        (failures.pop(), "value"),
    }
    failure = next(key for key, _ in places if ":failure:" in key)
    assert 0 < await client.ttl(failure) <= 30 * 86_400
    assert await client.memory_usage(quest_keys(qid).snap) < 600
