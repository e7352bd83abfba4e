"""The journal: applying events to quests stored in Redis, once each, atomically.

Theory of operation. A quest is stored as a snapshot (its version — the journal's length — and
the quest JSON) beside the journal stream it was folded from. ``apply`` reads the snapshot,
runs ``core.step`` in this process, and sends one Lua script (``scripts.APPLY``) that, only if
the snapshot still has the version it read and the event id is not yet in the journal,
appends the journal entries (the event, then any follow-up of questbot's own it set off),
sets the snapshot's version (and, every ``snapshots.SNAPSHOT_EVERY`` entries or when the quest
ends, its quest: the snapshot lags, and readers fold the entries after it — ``snapshots``)
and appends the transitions' effects to the quest's outbox.
Otherwise nothing is written: a lost race is retried on the fresh snapshot
(optimistic concurrency), a known event id is reported as a duplicate. An event the core
refuses raises ``InvalidTransition`` and writes nothing.

After the atomic step, outside it: the indexes are brought up to date and, if the apply
added effects, the shard's doorbell is rung so an effect runner picks the quest up, and the
quest's GitHub view is noted as owed (``bot.journal.views``) until a projector writes it. All are
idempotent and are redone when a duplicate arrives, so a caller that retries until it gets an
answer (the inbound consumer, the timer poller, the effect runner) heals a crash between the
two steps; the runners' sweep (``bot.runner.doorbells``) heals the rest.

``apply_many`` pipelines the applies of different quests into one round trip each for read,
write and follow-up (``wire.Batch``; the follow-up merges the round's index writes per key);
events of one quest are applied in order, one per round. Snapshots are cached in-process by
version: the version check makes a stale cache entry cost one retry. Records are written by
``records`` (orjson, the same bytes as pydantic). Reading a quest back — its snapshot, journal,
policies and outbox — is ``bot.journal.reads``, whose methods ``Journal`` inherits.

Compacted quests. A quest over for a while is folded into one compressed record
(``bot.journal.compaction``); the script answers ``compacted`` for it, as a snapshot read
without its quest says, and the journal brings its keys back (``thaw``) and applies again.

Policies. The script also records the policy the events were decided under, in the quest's
``policies`` hash (same slot), wherever it differs from the last entry's — so the entries keep
their bytes; ``bot.journal.policies`` says how, and replays (``recovery``) fold each event with
its own.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import redis.asyncio

from bot.core import TERMINAL, Effect, Event, InvalidTransition, Policy, Quest, step, steps
from bot.errors import InternalError
from bot.journal.answers import Applied, JournalEntry
from bot.journal.compaction import thaw
from bot.journal.durability import Durability
from bot.journal.errors import ConcurrencyError
from bot.journal.indexes import IndexWrites
from bot.journal.keys import (
    DEFAULT_SHARDS,
    doorbell_key,
    quest_keys,
    shard_of,
)
from bot.journal.policies import PolicyMemo
from bot.journal.reads import JournalReads
from bot.journal.records import dump_effect, dump_event, dump_quest, versions
from bot.journal.scripts import ScriptSet
from bot.journal.snapshots import Stored, catch_up, due, parse
from bot.journal.views import views_key
from bot.journal.wire import Batch, Head, RedisClient, stream_rows, text

__all__ = ["Applied", "Clock", "Journal", "JournalEntry", "PolicySource", "stream_rows", "utcnow"]

PolicySource = Policy | Callable[[str], Policy]
"""A policy for every quest, or a function from quest id to the quest's policy."""
Clock = Callable[[], datetime]


def utcnow() -> datetime:
    return datetime.now(UTC)


@dataclass(slots=True)
class _Item:
    index: int
    event: Event
    qid: str
    """The event's quest, read once: an attribute of a pydantic model is a slow look-up."""
    before: Quest | None = None
    version: int = 0
    transition_quest: Quest | None = None
    effects: tuple[Effect, ...] = ()
    absorbed: bool = False
    conflicts: int = 0
    loaded: bool = False
    """The snapshot was read from Redis this round (not taken from the cache)."""
    event_json: bytes | None = None
    policy: Policy | None = None
    digest: str = ""
    at: int | None = None
    """The version the quest's stored snapshot record is at (``bot.journal.snapshots``)."""
    sent: bool = False
    """This write sends the snapshot."""
    follow_ups: tuple[Event, ...] = ()
    """What the event set off (``Transition.follow_ups``, applied with ``core.steps``),
    journaled after it in the same write."""
    head: Head | None = None
    """The apply script's call for this quest, packed once (``Journal._head``)."""


IDLE_S = 120.0
"""How long a journal holds a quest it has not written (``Journal._remember``)."""


class Journal(JournalReads):
    """Quests in Redis: ``apply`` events, read snapshots and journals, ring doorbells."""

    def __init__(self, client: RedisClient, *, shards: int = DEFAULT_SHARDS,
                 durable: bool = False, durability_timeout_ms: int = 1000,
                 clock: Clock = utcnow, cache_size: int = 10_000,
                 max_conflicts: int = 200, idle_s: float = IDLE_S,
                 timer: Callable[[], float] = time.monotonic) -> None:
        self.client = client
        self.shards = shards
        self.durable = durable
        self.durability = Durability(timeout_ms=durability_timeout_ms,
                                     cluster=isinstance(client, redis.asyncio.RedisCluster))
        self.clock = clock
        self.scripts = ScriptSet()
        self.cache_size = cache_size
        self.max_conflicts = max_conflicts
        self.idle_s = idle_s
        self.timer = timer
        self._cache: OrderedDict[str, tuple[int, Quest, int | None, float, Head]] = \
            OrderedDict()
        """quest id → (version, quest at it, the version of the stored snapshot, when this
        journal last wrote the quest, the apply script's call for it packed)"""
        self._policies = PolicyMemo(cache_size)

    # -- writing ---------------------------------------------------------------------------

    async def apply(self, event: Event, policy: PolicySource, *,
                    durable: bool | None = None) -> Applied:
        """Apply one event. Raises ``InvalidTransition`` (nothing written) if the core refuses
        it; returns ``duplicate=True`` if its id is already in the journal."""
        (result,) = await self.apply_many([event], policy, durable=durable)
        if isinstance(result, InvalidTransition):
            raise result
        return result

    async def apply_many(self, events: Sequence[Event], policy: PolicySource, *,
                         durable: bool | None = None) -> list[Applied | InvalidTransition]:
        """Apply events, pipelining different quests together; events of one quest are
        applied in the order given. Refusals are returned in place, not raised."""
        wait = self.durable if durable is None else durable
        results: list[Applied | InvalidTransition | None] = [None] * len(events)
        queue = [_Item(i, e, e.quest_id) for i, e in enumerate(events)]
        while queue:
            this_round: list[_Item] = []
            later: list[_Item] = []
            seen: set[str] = set()
            for item in queue:
                qid = item.qid
                (later if qid in seen else this_round).append(item)
                seen.add(qid)
            retry = await self._round(this_round, policy, results, wait)
            if retry:
                await asyncio.sleep(random.uniform(0, 0.002))  # noqa: S311 - jitter, not crypto
            queue = sorted(retry + later, key=lambda it: it.index)
        return [r for r in results if r is not None]

    async def _round(self, items: list[_Item], policy: PolicySource,
                     results: list[Applied | InvalidTransition | None],
                     wait: bool) -> list[_Item]:
        retry: list[_Item] = []
        follow_up: list[tuple[Quest | None, Quest, tuple[Effect, ...], bool, bool]] = []
        # 1. read the snapshots we do not hold (with the dedupe check and the outbox length)
        # a quest's first event needs no read: it is stepped on "no quest, version 0", and the
        # script's version check sends it back here if the quest exists after all
        uncached: list[_Item] = []
        for it in items:
            if it.qid in self._cache or it.loaded:
                continue
            if it.conflicts == 0 and it.event.type == "signal_sensed":  # fresh
                it.loaded, it.version, it.before, it.at = True, 0, None, None
            else:
                uncached.append(it)
        if uncached:
            batch = Batch()
            for it in uncached:
                k = quest_keys(it.qid)
                batch.add("HMGET", k.snap, "v", "quest")
                batch.add("HGET", k.ids, it.event.id)
                batch.add("XLEN", k.outbox)
            replies = await batch.execute(self.client)
            read: list[tuple[_Item, Stored, Any, Any]] = []
            for n, it in enumerate(uncached):
                it.loaded = True
                snap, seen_at, outbox_len = replies[3 * n: 3 * n + 3]
                for reply in (snap, seen_at, outbox_len):
                    if isinstance(reply, Exception):
                        raise reply
                v, qjson = snap
                if v is not None and qjson is None:  # compacted: its keys come back first
                    await thaw(self.client, it.qid)
                    it.conflicts += 1
                    it.loaded, it.version = False, -1  # read again next round
                    retry.append(it)
                    continue
                read.append((it, parse(it.qid, v, qjson), seen_at, outbox_len))
            # a snapshot that lags is caught up with the entries after it (``snapshots``)
            await catch_up(self.client, [stored for _, stored, _, _ in read])
            for it, stored, seen_at, outbox_len in read:
                quest, version = stored.quest, stored.version
                if quest is not None:
                    it.head = it.head or self._head(it.qid)
                    self._remember(it.qid, version, quest, stored.at, it.head)
                if seen_at is not None and quest is not None:
                    results[it.index] = Applied(it.event.id, quest, (), int(seen_at),
                                                duplicate=True)
                    follow_up.append((None, quest, (), True, int(outbox_len) > 0))
                    it.version = -1  # done
                else:
                    it.version, it.before, it.at = version, quest, stored.at
        # 2. step each event on its snapshot
        stepped: list[_Item] = []
        for it in items:
            if it.version == -1:
                continue
            qid = it.qid
            cached = not it.loaded
            it.loaded = False
            if cached:
                it.version, it.before, it.at, _written, it.head = self._cache[qid]
            it.policy = _policy(policy, qid)
            try:
                t = step(it.before, it.event, it.policy)
                it.transition_quest, it.effects, it.absorbed = t.quest, t.effects, t.absorbed
                if t.follow_ups:  # journaled with the event, in the same write
                    moves = [m for then in t.follow_ups
                             for m in steps(t.quest, then, it.policy)]
                    it.follow_ups = tuple(event for event, _ in moves)
                    it.transition_quest = moves[-1][1].quest
                    it.effects += tuple(e for _, moved in moves for e in moved.effects)
            except InvalidTransition as exc:
                if cached:  # the refusal may be a redelivery: check against a fresh snapshot
                    self._cache.pop(qid, None)
                    retry.append(it)
                else:
                    results[it.index] = exc
                continue
            stepped.append(it)
        # 3. one atomic write per event, all in one round trip
        if stepped:
            batch = Batch()
            for it in stepped:
                assert it.transition_quest is not None and it.policy is not None
                if it.event_json is None:  # kept across retries: the event does not change
                    it.event_json = dump_event(it.event)
                digest = it.digest = self._policies.digest(it.policy)
                args: list[bytes | str | int] = [
                    it.version, digest, self._policies.body(it.qid, digest,
                                                            it.policy),
                    1 + len(it.follow_ups), it.event.id, it.event_json]
                for then in it.follow_ups:
                    args += [then.id, dump_event(then)]
                # the snapshot, every ``SNAPSHOT_EVERY`` entries and when the quest ends
                after = it.version + 1 + len(it.follow_ups)
                it.sent = due(it.at, after, it.transition_quest)
                args.append(dump_quest(it.transition_quest, after) if it.sent else b"")
                for effect in it.effects:
                    args += [effect.key, dump_effect(effect)]
                if it.head is None:
                    it.head = self._head(it.qid)
                batch.call(it.head, *args)
            waitaof = self.durability.command() if wait else None
            if waitaof is not None:
                batch.add(*waitaof)
            replies = await batch.execute(self.client)
            if waitaof is not None:
                await self.durability.check(self.client, replies[-1])
            reload_scripts = False
            recorded_at = versions()["quest"] > 1  # a version 2 record names its version
            for it, reply in zip(stepped, replies, strict=False):
                qid = it.qid
                if isinstance(reply, redis.exceptions.NoScriptError):
                    reload_scripts = True
                    retry.append(it)
                    continue
                if isinstance(reply, Exception):
                    raise reply
                status, version_, *_ = text(reply).split()
                if status == "ok":
                    assert it.transition_quest is not None and it.head is not None
                    version = int(version_)
                    if it.transition_quest.state not in TERMINAL:  # ``_remember`` says why
                        self._policies.stored(qid, it.digest)
                    self._remember(qid, version, it.transition_quest,
                                   (version if recorded_at else None)
                                   if it.sent else it.at, it.head)
                    results[it.index] = Applied(it.event.id, it.transition_quest, it.effects,
                                                version - len(it.follow_ups),
                                                absorbed=it.absorbed)
                    # the script appended the effects, so the outbox holds them: ring if any
                    follow_up.append((it.before, it.transition_quest, it.effects, False,
                                      bool(it.effects)))
                    continue
                # conflict, or a duplicate the cache hid: redo on a fresh snapshot
                self._cache.pop(qid, None)
                if status == "compacted":  # an ended quest written to: bring its keys back
                    await thaw(self.client, qid)
                    it.conflicts += 1
                if status == "dup":
                    it.conflicts += 1  # read before the next try, even for a first event
                if status not in {"compacted", "dup", "conflict"}:  # never loop on it
                    raise InternalError(f"the apply script answered {reply!r}")
                if status == "conflict":
                    it.conflicts += 1
                    if it.conflicts > self.max_conflicts:
                        raise ConcurrencyError(
                            f"gave up applying {it.event.id} to quest {qid} after "
                            f"{it.conflicts} lost races; another writer keeps winning")
                retry.append(it)
            if reload_scripts:
                await self.scripts.load(self.client)
        # 4. indexes and doorbells, outside the atomic step (idempotent), in one round trip
        if follow_up:
            await self._follow_up(follow_up)
        return retry

    async def _follow_up(
            self, follow_up: list[tuple[Quest | None, Quest, tuple[Effect, ...], bool, bool]]
    ) -> None:
        """The round's index writes, owed views and doorbells, in one round trip: one ``ZADD``
        and one ``scripts.RING`` per shard rather than a command a quest, since each command
        is a reply to read (issue 26, item 5: ~2 of the ~3 replies an apply read)."""
        indexes = IndexWrites()
        now = self.clock()
        # its GitHub view is owed until a projector wrote it (``bot.journal.views``); the score
        # is whole milliseconds: a small sorted set is a listpack, where Redis parses every
        # fractional score it walks past with strtod, so a member cost ~8 µs among 40 members
        # with a score like 1764670000123.456 and ~2 µs with 1764670000123 (issue 26, item 5).
        # A sync's ``begin`` score keeps its random fraction, so the two all but never compare
        # equal (as with the fractional scores before).
        owed = int(time.time() * 1000)
        by_shard: dict[int, list[str | int]] = {}  # the keys are named once a round, below
        rung: dict[int, list[str]] = {}
        for before, after, effects, full, outbox_full in follow_up:
            shard = shard_of(after.id, self.shards)
            by_shard.setdefault(shard, []).extend((owed, after.id))
            indexes.transition(before, after, effects, now, full=full)
            # ring on every apply that adds effects, even to an outbox that held some
            # (whoever was told of those may be gone), and on a redelivery
            if outbox_full and (full or effects):
                rung.setdefault(shard, []).append(after.id)
        doorbells = {doorbell_key(shard): quests for shard, quests in rung.items()}
        batch = Batch()
        for command in indexes.commands():
            batch.add(*command)
        for shard, pairs in by_shard.items():
            batch.add("ZADD", views_key(shard), *pairs)
        ring = self.scripts.sha("ring")
        for key, quests in doorbells.items():
            batch.add("EVALSHA", ring, 1, key, *quests)
        replies = await batch.execute(self.client)
        rings = replies[len(replies) - len(doorbells):]
        for reply in replies[:len(replies) - len(doorbells)]:
            if isinstance(reply, Exception):
                raise reply
        lost = [(key, quests) for (key, quests), reply in zip(doorbells.items(), rings,
                                                              strict=True)
                if isinstance(reply, redis.exceptions.NoScriptError)]
        for reply in rings:
            if isinstance(reply, Exception) and not isinstance(
                    reply, redis.exceptions.NoScriptError):
                raise reply
        if lost:  # the server lost its scripts (a restart): nothing of those ran
            await self.scripts.load(self.client)
            for key, quests in lost:
                await self.scripts.call(self.client, "ring", [key], list(quests))

    def _head(self, quest_id: str) -> Head:
        """``EVALSHA <apply> 5 <the quest's snap, events, ids, outbox and policies keys>``,
        packed once for as long as the quest is held (``_remember``): the call is the same
        for every apply to the quest, and packing it costs as much as the rest of the call's
        arguments. Held beside the snapshot, it lives and goes with it — a cache of its own,
        smaller than the quests a worker moves, was missed by every apply once more quests
        moved than it held (issue 26, item 5)."""
        k = quest_keys(quest_id)
        return Head.of("EVALSHA", self.scripts.sha("apply"), 5, k.snap, k.events, k.ids,
                       k.outbox, k.policies)

    def _remember(self, quest_id: str, version: int, quest: Quest, at: int | None,
                  head: Head) -> None:
        """Hold the quest at ``version``; ``at`` is the version its stored snapshot record is
        at (``None``: a version 1 record, so the next apply writes one in full)."""
        if quest.state in TERMINAL:
            # An ended quest is written again only if it lives again (a regression, rare),
            # which reads its snapshot once; kept, every ended quest would hold a place among
            # ``cache_size`` (with its policy digest) for nothing until thousands had ended —
            # a worker's memory growing with each quest it closed (``docs/performance.md``,
            # the soak).
            self.forget(quest_id)
            return
        now = self.timer()
        self._cache[quest_id] = (version, quest, at, now, head)
        self._cache.move_to_end(quest_id)
        while len(self._cache) > self.cache_size:
            self._policies.forget(self._cache.popitem(last=False)[0])
        # The quests this journal last wrote ``idle_s`` ago go too, oldest first (the cache is
        # in the order of writes): another worker may have ended them, which this one never
        # hears of, and each held a whole snapshot (~15-50 KB) until ``cache_size`` others had
        # come — a worker's memory growing with the quests the *other* workers closed. A live
        # quest idle that long costs one read when it moves again.
        while self._cache:
            oldest = next(iter(self._cache))
            if now - self._cache[oldest][3] <= self.idle_s:
                break
            del self._cache[oldest]
            self._policies.forget(oldest)

    async def snapshot(self, quest_id: str) -> tuple[int, Quest | None]:
        """``JournalReads.snapshot``, from this writer's memory when it holds the quest at the
        version Redis holds: the quest at a version is the fold of the same entries whoever
        reads it, and the stored snapshot may lag (``snapshots``), which would cost a reader
        a second round trip and a fold. One small ``HGET`` instead."""
        held = self._cache.get(quest_id)
        if held is not None:
            v = await self.client.hget(quest_keys(quest_id).snap, "v")
            if v is not None and int(v) == held[0]:
                return held[0], held[1]
        return await super().snapshot(quest_id)

    def held(self) -> tuple[int, int]:
        """How many quests' snapshots and stored policy digests this journal holds in memory:
        the live quests it writes, not every quest it ever did (a test of the bound reads it)."""
        return len(self._cache), self._policies.held()

    def forget(self, quest_id: str | None = None) -> None:
        """Drop cached snapshots (all, or one quest's); the next apply reads Redis."""
        if quest_id is None:
            self._cache.clear()
        else:
            self._cache.pop(quest_id, None)
        self._policies.forget(quest_id)

    async def ring(self, quest_id: str) -> None:
        """Ring the quest's doorbell: an effect runner will look at its outbox."""
        await self.client.xadd(doorbell_key(shard_of(quest_id, self.shards)), {"q": quest_id})

    async def enqueue(self, trail_id: str, effects: Sequence[Effect], *,
                      durable: bool | None = None) -> int:
        """Queue effects that no transition produced — a reply to a refused command, a
        reaction — on ``trail_id``'s outbox, for the effect runner to deliver like any other.

        One script (``scripts.ENQUEUE``) appends each effect unless its key is already
        delivered or queued, so keys made from the delivery make a redelivered webhook
        enqueue nothing new. The trail need not be a quest: a thread without one has its own
        (``keys.thread_trail``). Then the doorbell is rung while the outbox holds anything,
        which also heals a crash between the script and an earlier ring. Returns how many
        effects were new."""
        if not effects:
            return 0
        k = quest_keys(trail_id)
        args: list[bytes | str | int] = []
        for effect in effects:
            if effect.quest_id != trail_id:
                raise ValueError(f"effect {effect.key} is on trail {effect.quest_id}, not "
                                 f"{trail_id}; enqueue it on its own trail")
            args += [effect.key, dump_effect(effect)]
        wait = self.durable if durable is None else durable
        for _ in range(2):
            batch = Batch()
            batch.add("EVALSHA", self.scripts.sha("enqueue"), 2, k.done, k.outbox, *args)
            waitaof = self.durability.command() if wait else None
            if waitaof is not None:
                batch.add(*waitaof)
            replies = await batch.execute(self.client)
            if isinstance(replies[0], redis.exceptions.NoScriptError):
                await self.scripts.load(self.client)
                continue
            if isinstance(replies[0], Exception):
                raise replies[0]
            if waitaof is not None:
                await self.durability.check(self.client, replies[-1])
            added, length = (int(n) for n in replies[0])
            if length:
                await self.ring(trail_id)
            return added
        raise redis.exceptions.NoScriptError("the enqueue script could not be loaded")


def _policy(source: PolicySource, quest_id: str) -> Policy:
    return source if isinstance(source, Policy) else source(quest_id)
