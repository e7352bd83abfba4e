"""Compacted records exported to files beyond a second age, read back on demand.

Why. A compacted quest still keeps its ~3 KB record in Redis's memory; a quest nobody has
touched for months need not. With ``QUESTBOT_EXPORT_DIR`` set, a compacted quest is, after
``QUESTBOT_EXPORT_AFTER_DAYS`` more, written to a file of its own in that directory and its
record in Redis replaced by where the file is and its SHA-256 (snapshot hash fields ``z`` = ``""``
and ``a`` = ``<path>\\n<digest>``, ~500 bytes with the version). Every read that takes the
compacted record (``compaction.read_compacted``) reads the file instead, and checks its digest;
a write brings the quest's keys back from it as from a record in Redis (``compaction.thaw``).
The file stays where it is (a later export of the same quest writes it again).

Crash-safe: the file is written to a temporary name, flushed to disk, renamed, and the
directory flushed, before one script swaps the record for the file's name — only if the
record is still the one written. A crash before the swap leaves a file nobody names (written
again next time); after, the file is on disk. Redis names the file by its absolute path: every
process that reads the quest (the worker, ``python -m bot replay`` and ``status``) must see
the directory at that path (a shared volume).
"""

from __future__ import annotations

import asyncio
import hashlib
import os
from datetime import datetime
from pathlib import Path

from bot.journal.compaction import as_bytes, run_script
from bot.journal.keys import compaction_export_key, quest_keys
from bot.journal.wire import RedisClient, text

EXPORT = """
-- KEYS: snap; ARGV: the record written to the file, where it is and its digest
if redis.call('HGET', KEYS[1], 'z') ~= ARGV[1] then return 'changed' end
redis.call('HSET', KEYS[1], 'z', '', 'a', ARGV[2])
return 'ok'
"""


def file_of(directory: Path, quest_id: str) -> Path:
    """The file a quest's record goes to: named by a digest of its id, so any id is a name."""
    return directory / f"{hashlib.sha256(quest_id.encode()).hexdigest()[:32]}.qz"


def _write(path: Path, blob: bytes) -> None:
    tmp = path.with_suffix(".tmp")
    with open(tmp, "wb") as out:
        out.write(blob)
        out.flush()
        os.fsync(out.fileno())
    os.replace(tmp, path)
    fd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


async def export(client: RedisClient, quest_id: str, directory: Path) -> bool:
    """Write the quest's compacted record to its file and keep only where it is in Redis;
    ``False`` when it holds no record in Redis (not compacted, brought back, or exported)."""
    blob = await client.hget(quest_keys(quest_id).snap, "z")
    if not blob:
        return False
    record = as_bytes(blob)
    path = file_of(directory.resolve(), quest_id)
    await asyncio.to_thread(_write, path, record)
    where = f"{path}\n{hashlib.sha256(record).hexdigest()}"
    return await run_script(client, EXPORT, [quest_keys(quest_id).snap], [record, where]) == "ok"


async def note_compacted(client: RedisClient, quest_id: str, now: datetime) -> None:
    """Put a quest just compacted on the export list."""
    await client.zadd(compaction_export_key(), {quest_id: int(now.timestamp() * 1000)})


async def due_exports(client: RedisClient, now: datetime, after_s: float, *,
                      limit: int = 100) -> list[str]:
    until = int(now.timestamp() * 1000 - after_s * 1000)
    members = await client.zrangebyscore(compaction_export_key(), "-inf", until, start=0,
                                         num=limit)
    return [text(m) for m in members]


async def exported(client: RedisClient, quest_id: str) -> None:
    """Take a quest off the export list (exported, or not compacted any more)."""
    await client.zrem(compaction_export_key(), quest_id)
