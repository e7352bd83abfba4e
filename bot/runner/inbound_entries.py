"""The inbound stream's entries as workers read them: what a stored delivery holds, its body
LZ4-compressed (``bot.runner.inbound`` says why), and reading an entry back."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import lz4.block


@dataclass(frozen=True, slots=True)
class InboundDelivery:
    """One stored delivery, as a worker reads it."""

    entry_id: str
    delivery_id: str
    event: str
    body: bytes
    received_at: datetime
    unreadable: str | None = None
    """Why the stored entry cannot be read back (``body`` then holds what was stored): a
    corrupt compressed body, or an entry with no body. The worker moves it to the dead
    letters at once rather than failing the whole read."""



compress: Callable[[bytes], bytes] = lz4.block.compress  # the block keeps its size up front
decompress: Callable[[bytes], bytes] = lz4.block.decompress


def text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def read_entry(entry: tuple[Any, Any]) -> InboundDelivery | None:
    entry_id, fields = entry
    if not fields:  # deleted after it was read (a claim of an entry someone acknowledged)
        return None
    unreadable = None
    if b"lz4" in fields:
        try:
            body = decompress(fields[b"lz4"])
        except (lz4.block.LZ4BlockError, ValueError, MemoryError) as exc:
            body = bytes(fields[b"lz4"])
            unreadable = f"the stored body is not an LZ4 block: {exc}"
    elif b"b" in fields:
        body = bytes(fields[b"b"])
    else:
        body, unreadable = b"", "the entry holds no body (neither lz4 nor b)"
    return InboundDelivery(
        entry_id=text(entry_id),
        delivery_id=text(fields.get(b"d", b"?")),
        event=text(fields.get(b"e", b"?")),
        body=body,
        received_at=datetime.fromtimestamp(int(fields.get(b"t", 0)) / 1000, UTC),
        unreadable=unreadable,
    )
