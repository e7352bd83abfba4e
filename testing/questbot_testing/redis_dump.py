"""Every key of a Redis as readable JSON, and back: how the old-journal fixtures are kept.

Why not ``DUMP``/``RESTORE``: their bytes are Redis's own serialisation, tied to its version,
and nobody can read what a fixture holds. This form is one line a key — its name, its type and
its contents as text (hashes as objects, streams as ``[id, {field: value}]`` with their ids,
sets and sorted sets sorted) — so a reviewer can see the records a release wrote, and a later
Redis loads them the same. A value that is not UTF-8 is kept as ``{"b64": …}``.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import redis.asyncio

Dumped = dict[str, Any]


def _text(value: bytes | str) -> Any:
    if isinstance(value, str):
        return value
    try:
        return value.decode()
    except UnicodeDecodeError:
        return {"b64": base64.b64encode(value).decode()}


def _raw(value: Any) -> bytes:
    if isinstance(value, dict):
        return base64.b64decode(value["b64"])
    return str(value).encode()


async def dump_key(client: redis.asyncio.Redis, key: str) -> Dumped | None:
    """One key as ``{"key", "type", "value"}`` (``None`` if it went meanwhile)."""
    kind = (await client.type(key)).decode()
    value: Any
    if kind == "string":
        raw = await client.get(key)
        if raw is None:
            return None
        value = _text(raw)
    elif kind == "hash":
        value = {_text(k): _text(v) for k, v in sorted((await client.hgetall(key)).items())}
    elif kind == "stream":
        value = [[_text(entry), {_text(k): _text(v) for k, v in fields.items()}]
                 for entry, fields in await client.xrange(key, "-", "+")]
    elif kind == "set":
        value = sorted(_text(m) for m in await client.smembers(key))
    elif kind == "zset":
        value = [[_text(m), s] for m, s in await client.zrange(key, 0, -1, withscores=True)]
    elif kind == "list":
        value = [_text(m) for m in await client.lrange(key, 0, -1)]
    else:
        return None
    return {"key": key, "type": kind, "value": value}


async def dump(client: redis.asyncio.Redis, *, skip: Iterable[str] = ()) -> list[Dumped]:
    """Every key, in name order, but those whose name holds one of ``skip``."""
    unwanted = tuple(skip)
    names = sorted({k.decode() async for k in client.scan_iter(count=1000)})
    out = []
    for name in names:
        if any(part in name for part in unwanted):
            continue
        row = await dump_key(client, name)
        if row is not None:
            out.append(row)
    return out


async def load(client: redis.asyncio.Redis, rows: Iterable[Dumped]) -> None:
    """Write ``rows`` (from ``dump``) into ``client``, each key replaced, with no TTL."""
    for row in rows:
        key, kind, value = row["key"], row["type"], row["value"]
        await client.delete(key)
        if kind == "string":
            await client.set(key, _raw(value))
        elif kind == "hash":
            await client.hset(key, mapping={k: _raw(v) for k, v in value.items()})
        elif kind == "stream":
            for entry, fields in value:
                await client.xadd(key, {k: _raw(v) for k, v in fields.items()}, id=entry)
        elif kind == "set":
            await client.sadd(key, *[_raw(m) for m in value])
        elif kind == "zset":
            await client.zadd(key, {_raw(m): s for m, s in value})
        elif kind == "list":
            await client.rpush(key, *[_raw(m) for m in value])


def write(path: Path, rows: Iterable[Dumped]) -> None:
    """One key a line, so a diff of two fixtures reads key by key."""
    path.write_text("".join(json.dumps(row, sort_keys=True) + "\n" for row in rows))


def read(path: Path) -> list[Dumped]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
