"""The policy each journal entry was decided under: how the apply names it, what a writer
remembers of the quests that store it, and reading the records back.

A quest's ``policies`` hash holds each policy it was stepped under once, by digest
(``records.policy_digest``), and ``@<version>`` → digest where a policy took over from the one
before; the snapshot's ``p`` names the last entry's, which is what ``scripts.APPLY`` compares
with (``docs/storage.md``, *Policy records*). ``recovery.read_recorded`` maps every entry to
its policy.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

from bot.core import Policy
from bot.journal.errors import CorruptJournal
from bot.journal.keys import quest_keys
from bot.journal.records import RecordError, dump_policy, load_policy, policy_digest
from bot.journal.wire import RedisClient

_KNOWN_OBJECTS = 64


class PolicyMemo:
    """What one writer knows, so that an apply usually sends a 12-byte digest and no body: the
    digests of the last policy objects it was handed (a policy source hands out the same object
    for a repository until its settings are read again), and the digest each quest was last
    seen to store. Forgetting costs one body sent again, which the script ignores."""

    def __init__(self, quests: int) -> None:
        self.quests = quests
        self._digests: OrderedDict[int, tuple[Policy, str]] = OrderedDict()
        self._stored: OrderedDict[str, str] = OrderedDict()

    def digest(self, policy: Policy) -> str:
        hit = self._digests.get(id(policy))
        if hit is not None and hit[0] is policy:
            return hit[1]
        digest = policy_digest(policy)
        self._digests[id(policy)] = (policy, digest)  # held, so its id is not reused
        while len(self._digests) > _KNOWN_OBJECTS:
            self._digests.popitem(last=False)
        return digest

    def body(self, quest_id: str, digest: str, policy: Policy) -> bytes:
        """The policy's record for the apply script, or ``b""`` when the quest has it."""
        return b"" if self._stored.get(quest_id) == digest else dump_policy(policy)

    def stored(self, quest_id: str, digest: str) -> None:
        if self._stored.get(quest_id) == digest:
            return
        self._stored[quest_id] = digest
        self._stored.move_to_end(quest_id)
        while len(self._stored) > self.quests:
            self._stored.popitem(last=False)

    def held(self) -> int:
        """How many quests' stored digests are held."""
        return len(self._stored)

    def forget(self, quest_id: str | None = None) -> None:
        if quest_id is None:
            self._stored.clear()
        else:
            self._stored.pop(quest_id, None)


async def read_policies(client: RedisClient,
                        quest_id: str) -> tuple[dict[str, Policy], dict[int, str]]:
    """The quest's policies by digest, and where each took over: journal version → digest."""
    return parse_policies(await client.hgetall(quest_keys(quest_id).policies), quest_id)


def parse_policies(stored: Mapping[Any, Any],
                   quest_id: str) -> tuple[dict[str, Policy], dict[int, str]]:
    """``read_policies`` of the hash's fields as read (or as a compacted record holds them)."""
    bodies: dict[str, Policy] = {}
    changes: dict[int, str] = {}
    for raw, value in stored.items():
        name = raw.decode() if isinstance(raw, bytes) else str(raw)
        try:
            if name.startswith("@"):
                changes[int(name[1:])] = value.decode() if isinstance(value, bytes) else value
            else:
                bodies[name] = load_policy(value)
        except (RecordError, ValueError) as exc:
            raise CorruptJournal(f"policy record {name} of quest {quest_id} cannot be read: "
                                 f"{exc}") from exc
    return bodies, changes
