"""The worker process: inbound deliveries → intake → journal; the effect runner; timers; the
projection of every quest onto GitHub (status comment and check run: ``bot.worker.projector``).

Everything is wired here, in one place, from the configuration (``build_worker``), so the
demo, the end-to-end tests and ``python -m bot worker`` run the same assembly. Several workers
may run against one Redis: deliveries are shared by a consumer group, effects by the doorbell
streams, and a quest's effects are delivered by one runner at a time (its lease, short and
kept by a heartbeat: ``bot.runner.lease``).

No loop of the worker ends because Redis went away: each runs its steps through one shared
``Outage`` (``bot.runner.outage``), which backs off, logs once per loop and outage and tells
``/healthz`` that the worker is degraded meanwhile; the client counts reconnects
(``assembly.redis_client``).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import socket
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field

import gidgethub
import redis.asyncio
import redis.exceptions

from bot.adapters import AdapterContext, AppIdentity, Plugin, SettingsSource, Sync
from bot.core import Effect, EffectType, Event, Quest
from bot.core.events import EffectFailed
from bot.github.auth import InstallationTokenError
from bot.github.client import NotInstalled
from bot.github.forge import Forges
from bot.intake.intake import Intake
from bot.journal import Indexes, Journal, PermanentError
from bot.journal.memory import ForgeMemory
from bot.journal.records import NewerRecord
from bot.journal.views import OwedViews
from bot.journal.wire import RedisClient
from bot.observe import waits
from bot.observe.logs import bind
from bot.observe.metrics import Metrics
from bot.quests.policybook import PolicyBook
from bot.reflection.runs import ReflectionModel, ReflectionRuns
from bot.reflection.waves import Reflections
from bot.repository.restorable import RestorableSweep
from bot.runner import REDIS_AWAY, Adapters, EffectRunner, Failure, Leases, Outage, Timers
from bot.runner.inbound import Inbound
from bot.runner.inbound_entries import InboundDelivery
from bot.runner.outbox import Adapter
from bot.worker import memory
from bot.worker.compaction_sweep import CompactionSweep
from bot.worker.coordination import Coordination
from bot.worker.owed_sweep import OwedSweep
from bot.worker.projector import ObservedJournal, Projector

log = logging.getLogger(__name__)


def permanent(exc: BaseException) -> bool:
    """Errors a retry cannot fix: GitHub refused (4xx other than rate limits, or the Forge's
    ``PermanentError`` for one), or the App is not installed where the delivery came from.
    Anything else (Redis, the network, 5xx, rate limits) is worth another try."""
    if isinstance(exc, NotInstalled | PermanentError):
        return True
    if isinstance(exc, InstallationTokenError):
        return exc.status in (401, 403, 404)
    if isinstance(exc, gidgethub.RateLimitExceeded):
        return False
    if isinstance(exc, gidgethub.BadRequest):
        return 400 <= int(exc.status_code) < 500 and int(exc.status_code) != 429
    return False


@dataclass
class Timings:
    """Seconds spent in each effect type's adapter, and how many ran: the demo splits its
    time into questbot's own and the agent's and proof's from this, and /metrics could too.
    ``seconds`` leaves out the time an adapter waited for GitHub's pacing, which is ``paced``
    (``bot.observe.waits``): it is pacing's time, not the agent's or the proof's."""

    seconds: dict[str, float] = field(default_factory=dict)
    count: dict[str, int] = field(default_factory=dict)
    paced: dict[str, float] = field(default_factory=dict)

    def add(self, effect_type: str, seconds: float, paced: float = 0.0) -> None:
        self.seconds[effect_type] = self.seconds.get(effect_type, 0.0) + seconds - paced
        self.count[effect_type] = self.count.get(effect_type, 0) + 1
        self.paced[effect_type] = self.paced.get(effect_type, 0.0) + paced


LONG_EFFECTS = frozenset({EffectType.START_AGENT, EffectType.RUN_PROOF})
"""Effects that may take minutes: the quest's view is brought up to date before each starts."""


def prepared(book: PolicyBook, adapter: Adapter, timings: Timings,
             metrics: Metrics | None = None,
             before: Callable[[Effect], Awaitable[None]] | None = None) -> Adapter:
    """Make sure the policy of every quest an adapter touches is loaded before its outcome
    events are applied (``Journal.apply`` looks policies up synchronously); time the call.
    ``before`` runs first (the projection's ``catch_up`` for ``LONG_EFFECTS``)."""

    async def run(effect: Effect) -> Sequence[Event] | None:
        with bind(quest_id=effect.quest_id, effect=effect.key):
            return await deliver(effect)

    async def deliver(effect: Effect) -> Sequence[Event] | None:
        if before is not None:
            await before(effect)
        await book.prepare(effect.quest_id)
        start = time.perf_counter()
        ok = False
        try:
            with waits.timing() as paced:
                events = await adapter(effect)
            ok = True
        finally:
            spent = time.perf_counter() - start
            timings.add(effect.type.value, spent, paced[0])
            if metrics is not None:
                metrics.effect_delivered(effect.type.value, spent, ok=ok)
        for event in events or ():
            await book.prepare(event.quest_id)
        return events

    return run


@dataclass
class Worker:
    journal: ObservedJournal
    inbound: Inbound
    intake: Intake
    runner: EffectRunner
    timers: Timers
    projector: Projector
    timings: Timings = field(default_factory=Timings)
    outage: Outage = field(default_factory=Outage)
    """Shared by every loop: whether Redis answers, for ``/healthz``."""
    claim_idle_ms: int = 12_000
    """A delivery another worker read and left unrefreshed this long is taken over: while a
    worker handles deliveries it refreshes them every ``keep_s``, so only a dead worker's wait
    this long. A delivery that failed is left unrefreshed and so tried again this long after."""
    keep_s: float = 2.0
    max_tries: int = 40
    """Failed attempts before a delivery moves to the dead letters (``inbound:{inbound}:dead``):
    about eight minutes of retries, ``claim_idle_ms`` apart (GitHub down for a while)."""
    consumer: str = field(default_factory=lambda: f"worker-{socket.gethostname()}")
    owed: OwedSweep | None = None
    """The look at runs repositories still owe (``bot.worker.owed_sweep``)."""
    restorable: RestorableSweep | None = None
    """Quests parked by their repository's deletion: taken up again when the repository is
    found restored, abandoned once GitHub no longer lets it be restored
    (``bot.repository.restorable``)."""
    compaction: CompactionSweep | None = None
    """Ended quests compacted a while after they end (``bot.worker.compaction_sweep``);
    ``None``: never (tests and the demo, which drive time, call it themselves)."""
    trim_s: float = memory.TRIM_S
    """Seconds between two returns of the C heap's free memory to the system
    (``bot.worker.memory``); 0: never."""

    async def handle(self, delivery: InboundDelivery) -> None:
        try:
            payload = json.loads(delivery.body)
        except ValueError:
            log.warning("delivery %s is not JSON; dropping it", delivery.delivery_id)
            return
        if isinstance(payload, dict):
            with bind(delivery_id=delivery.delivery_id, event=delivery.event):
                await self.intake.handle(delivery.event, payload, delivery.delivery_id)

    async def inbound_once(self, *, block_ms: int | None = None) -> int:
        deliveries = await self.inbound.claim_stale(self.consumer,
                                                    min_idle_ms=self.claim_idle_ms)
        deliveries += await self.inbound.read(self.consumer, block_ms=block_ms)
        if not deliveries:
            return 0
        held = {d.entry_id for d in deliveries}
        keeper = asyncio.create_task(self._keep(held), name="inbound:keep")
        try:
            await self._handle_all(deliveries, held)
        finally:
            held.clear()  # and told twice, as a lease's heartbeat is: a cancel can be lost
            keeper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await keeper
        return len(deliveries)

    async def _keep(self, held: set[str]) -> None:
        """Reset the idle time of the deliveries this worker still holds, so nobody takes them
        over while it lives (``XCLAIM … 0 … JUSTID``: only pending entries are touched)."""
        while True:
            await asyncio.sleep(self.keep_s)
            if not held:
                return
            try:
                await self.inbound.keep(self.consumer, list(held))
            except REDIS_AWAY as exc:
                log.info("could not refresh the deliveries in hand: %s", exc)
            except redis.exceptions.ResponseError as exc:  # NOGROUP: the read recreates it
                log.info("could not refresh the deliveries in hand: %s", exc)

    async def _handle_all(self, deliveries: Sequence[InboundDelivery], held: set[str]) -> None:
        for delivery in deliveries:
            try:
                await self._handle_one(delivery)
            finally:  # acknowledged, or left for a retry ``claim_idle_ms`` from now
                held.discard(delivery.entry_id)

    async def _handle_one(self, delivery: InboundDelivery) -> None:
        if delivery.unreadable is not None:  # never readable: no point in retrying it
            await self.inbound.failed(delivery, delivery.unreadable, max_tries=1)
            log.error("delivery %s moved to the dead letters: %s", delivery.delivery_id,
                      delivery.unreadable)
            return
        try:
            await self.handle(delivery)
        except NewerRecord as exc:  # a rolling upgrade: a newer worker takes it, no try lost
            log.error("delivery %s is left for a newer questbot: %s", delivery.delivery_id, exc)
            return
        except Exception as exc:
            if not permanent(exc):  # left pending: claimed again after the idle time
                log.exception("delivery %s failed; it stays pending for a retry",
                              delivery.delivery_id)
                if await self.inbound.failed(delivery, f"{type(exc).__name__}: {exc}",
                                             max_tries=self.max_tries):
                    log.error("delivery %s failed %d times; moved to the dead letters",
                              delivery.delivery_id, self.max_tries)
                return
            log.error("delivery %s (%s) cannot be handled and is dropped: %s",
                      delivery.delivery_id, delivery.event, exc)
        await self.inbound.ack([delivery.entry_id])

    async def settle(self, *, rounds: int = 200) -> None:
        """Run everything until nothing is left to do (tests and the demo drive time).

        A long effect (an agent stage, a proof) brings its quest's view up to date before it
        starts (``LONG_EFFECTS``), here as in ``run``: what GitHub shows while a stage runs is
        the stage, not the state before it."""
        await self.runner.setup()
        for _ in range(rounds):
            busy = await self.inbound_once()
            stats = await self.runner.run_once()
            busy += stats.delivered + stats.retried + len(stats.failures)
            busy += len(await self.timers.fire_due())
            busy += await self.projector.drain()
            if self.owed is not None:
                busy += await self.owed.sweep_once()
            if self.restorable is not None:
                busy += await self.restorable.pass_once()
            if not busy:
                return

    async def run(self, stop: asyncio.Event) -> None:
        """Every loop until ``stop``; none of them ends when Redis goes away (see the module
        docs)."""
        loops = [self.outage.guard("inbound", lambda: self.inbound_once(block_ms=1000), stop),
                 self.runner.run(stop), self.timers.run(stop), self.projector.run(stop)]
        if self.owed is not None:
            owed = self.owed
            loops.append(self.outage.guard("owed", lambda: owed.step(stop), stop))
        if self.restorable is not None:
            restorable = self.restorable
            loops.append(self.outage.guard("restorable", lambda: restorable.step(stop), stop))
        if self.compaction is not None:
            compaction = self.compaction
            loops.append(self.outage.guard("compaction", lambda: compaction.step(stop), stop))
        if self.trim_s:
            loops.append(memory.trimming(stop, self.trim_s))
        await asyncio.gather(*loops)


def failure_reporter(journal: Journal, book: PolicyBook) -> Callable[[Failure], Awaitable[None]]:
    """A permanent delivery failure becomes an ``effect_failed`` event: journaled, shown.

    A trail that is no quest — a thread's replies and reactions (``Journal.enqueue``) — has no
    journal to take the event; its failure stays in the trail's failures stream and the log."""

    async def report(failure: Failure) -> None:
        _version, quest = await journal.snapshot(failure.quest_id)
        if quest is None:
            log.warning("effect %s failed on trail %s, which is no quest, so it is only "
                        "logged: %s", failure.effect_key, failure.quest_id, failure.error)
            return
        event = EffectFailed(id=f"failed:{failure.effect_key}", quest_id=failure.quest_id,
                             at=journal.clock(), effect_key=failure.effect_key,
                             effect_type=failure.effect_type, error=failure.error[:500],
                             tries=max(1, failure.tries))
        await book.prepare(failure.quest_id)
        await journal.apply(event, book)

    return report


def build_worker(client: RedisClient, forges: Forges, settings: SettingsSource,
                 plugins: Sequence[Plugin] = (), *, app: AppIdentity, durable: bool = True,
                 leases: Leases | None = None, metrics: Metrics | None = None,
                 reflection_model: ReflectionModel | None = None) -> Worker:
    """Assemble a worker: the coordination adapters plus each plugin's adapters and
    projection. ``app`` is who the App is (``GitHubClients.identity``). ``leases`` are the
    effect runner's figures (``Leases()``: a 10 s lease kept by a 2 s heartbeat however long
    an adapter runs, and a dead runner's work taken over after 12 s). The agent reaches
    repositories through ``forges.git_host`` and reads a failing job's log through
    ``forges.failing_log``; nothing else of GitHub is in the context. ``reflection_model``
    writes and reviews reflections when a wave is due (``reflection_runs``; ``None``: a
    maintainer's ``/reflect`` only)."""
    outage = Outage()
    journal = ObservedJournal(client, durable=durable)
    ctx = AdapterContext(journal=journal, hosts=forges.git_host, settings=settings, app=app,
                         logs=forges.failing_log)
    book = PolicyBook(settings, journal)
    indexes = Indexes(client)
    timers = Timers(journal, book, outage=outage)
    coordination = Coordination(ctx, forges, indexes, timers)
    every: dict[EffectType, Adapter] = coordination.adapters()
    syncs: list[Sync] = []
    for plugin in plugins:
        adapters, sync = plugin(ctx)
        every.update(adapters)
        if sync is not None:
            syncs.append(sync)
    # last, after the quest's own views: a quest that ended frees a slot for a held one (a
    # failure leaves the view owed, and the retry releases again: the ids are the hold's)
    syncs.append(coordination.after_change)
    runs = None if reflection_model is None else ReflectionRuns(
        ctx, coordination.limits, coordination.release, reflection_model, metrics=metrics)
    if runs is not None:
        every[EffectType.REFLECT] = runs.run
        syncs.append(runs.after_change)

    async def sync_all(quest: Quest) -> None:
        for sync in syncs:
            await sync(quest)

    async def load(quest_id: str) -> Quest | None:
        return (await journal.snapshot(quest_id))[1]

    projector = Projector(sync_all, outage, OwedViews(client, journal.shards), load)
    journal.listeners.append(projector.notify)

    async def shown_first(effect: Effect) -> None:
        """GitHub shows the stage before it starts (``LONG_EFFECTS``): the first sign of a
        failure, and each stage's, never waits for the model. A view that cannot be written
        now stays owed; the stage starts all the same."""
        with contextlib.suppress(*REDIS_AWAY):  # the projector's loop writes it when back
            await projector.catch_up(effect.quest_id)

    timings = Timings()
    runner = EffectRunner(journal, Adapters({
        t: prepared(book, a, timings, metrics, shown_first if t in LONG_EFFECTS else None)
        for t, a in every.items()}), book, leases=leases,
        on_failure=failure_reporter(journal, book), outage=outage)
    intake = Intake(ctx, forges, book, indexes)
    intake.reflections = Reflections(ctx, coordination.limits, coordination.release,
                                     runs=runs)
    # a repository found restored is taken up as the webhook that gives it back would be
    restorable = RestorableSweep(journal, ForgeMemory(client), clock=lambda: ctx.clock(),
                                 forges=forges, take_up=intake.handle)
    return Worker(journal, Inbound(client, durable=durable), intake, runner, timers, projector,
                  timings, outage, owed=OwedSweep(ctx), restorable=restorable)
