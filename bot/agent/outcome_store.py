"""What ``start_agent`` keeps in Redis so a redelivered effect neither runs nor pushes twice.

``Outcomes``: the events each finished run reported, by effect key, returned again instead of
running the stage a second time. ``PushNotes``: the push a run is about to make, noted first,
so a run of the same effect after a crash finds the commit the earlier one made
(``bot.agent.workspace.push_change``). Both live in one hash per quest (``outcomes_key``),
dropped two weeks after its last write. ``bot.agent.runs`` says when each is used. Both are
versioned records (``bot.journal.records``): events in their envelope, one a line, and the
push note as kind ``push_note``.
"""

from __future__ import annotations

from collections.abc import Sequence

from bot.agent.workspace import NotedPush
from bot.core import Effect, Event
from bot.journal.keys import outcomes_key
from bot.journal.records import dump_event, dump_record, load_event, load_record
from bot.journal.wire import RedisClient

OUTCOMES_TTL_SECONDS = 14 * 24 * 3600
"""A redelivery comes within minutes of a crash; two weeks after a quest's last run its
remembered outcomes are dropped rather than kept for ever."""




def push_field(effect: Effect) -> str:
    """The field of ``outcomes_key`` where the run of ``effect`` notes its push."""
    return f"{effect.key}/push"


class Outcomes:
    """The events each finished agent run reported, by effect key (see the module docstring)."""

    def __init__(self, client: RedisClient) -> None:
        self.client = client

    async def remember(self, effect: Effect, events: Sequence[Event]) -> None:
        key = outcomes_key(effect.quest_id)
        pipe = self.client.pipeline(transaction=True)  # one key, one slot
        pipe.hset(key, effect.key, b"\n".join(dump_event(e) for e in events))
        pipe.hdel(key, push_field(effect))  # the outcome names the commit now
        pipe.expire(key, OUTCOMES_TTL_SECONDS)
        await pipe.execute()

    async def recall(self, effect: Effect) -> list[Event] | None:
        stored = await self.client.hget(outcomes_key(effect.quest_id), effect.key)
        if stored is None:
            return None
        data = stored if isinstance(stored, bytes) else str(stored).encode()
        return [load_event(line) for line in data.split(b"\n") if line]


class PushNotes:
    """The push the run of one ``start_agent`` effect is about to make, noted in Redis
    (``bot.agent.workspace.PushNotes``)."""

    def __init__(self, client: RedisClient, effect: Effect) -> None:
        self.client = client
        self.key = outcomes_key(effect.quest_id)
        self.field = push_field(effect)

    async def noted(self) -> NotedPush | None:
        raw = await self.client.hget(self.key, self.field)
        if raw is None:
            return None
        data = load_record("push_note", raw)
        return NotedPush(branch=data["branch"], parent=data["parent"], files=data["files"])

    async def note(self, push: NotedPush) -> None:
        pipe = self.client.pipeline(transaction=True)
        pipe.hset(self.key, self.field, dump_record(
            "push_note", {"branch": push.branch, "parent": push.parent,
                          "files": dict(push.files)}))
        pipe.expire(self.key, OUTCOMES_TTL_SECONDS)
        await pipe.execute()
