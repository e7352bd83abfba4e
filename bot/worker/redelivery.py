"""The redelivery reconciler: finds the webhook deliveries questbot never stored and asks GitHub
to send them again.

GitHub does not retry a failed delivery (BEHAVIOUR.md §14): a web process that was down, slow
past GitHub's 10 s, or answered 503 because Redis was away loses the event for good unless
someone asks. GitHub's own advice is a job that lists the App's recent deliveries and
redelivers the failed ones; this is that job, inside the worker, with questbot's own record as
the judge. Theory of operation, one pass every ``interval_s``:

1. One worker at a time: a pass takes ``redelivery:{redelivery}:turn`` (``SET NX PX``, for
   most of an interval); the others skip theirs.
2. It reads the delivery log (``bot.github.hook_deliveries``) back to the last pass's start
   minus ``overlap_s`` — or ``window_h`` hours on the first pass — and at most ``max_pages``
   pages of 100.
3. A delivery counts as stored when its GUID has an inbound dedupe marker
   (``bot.runner.inbound.seen_key``, written with the stream entry, kept four days) — not when
   GitHub says ``OK``: an ``OK`` questbot has no marker for was lost after the answer (durable
   acks off, Redis replaced), and an error with a marker was stored and answered late. Only the
   events questbot stores are considered (``SUBSCRIBED_EVENTS``; ``ping`` and the rest are
   answered and dropped on purpose).
4. Every unstored GUID is asked for once, oldest first (events arrive in their order), its
   newest attempt's id in ``POST …/attempts``, ``pause_s`` apart, at most ``max_per_pass`` a
   pass. What the cap leaves over is read again next pass (the pass's mark stops before it).
5. GUIDs asked for are kept (``redelivery:{redelivery}:asked``) until their marker appears —
   counted as recovered — or they were asked ``max_tries`` times: given up, counted, logged,
   and kept as given up (never asked again) until they leave the window. One is asked again
   at most once an interval, so a redelivery still on its way is not asked for twice.

GitHub refusing one redelivery (a 4xx: too old, gone) gives that GUID up; any other GitHub
trouble ends the pass early, without moving its mark, for the next one to try; Redis going
away is waited out by the worker's ``Outage`` like every loop. ``questbot_webhook_redeliveries``
counts what was asked, recovered, refused and given up, by event.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import aiohttp
import gidgethub

from bot.github.hook_deliveries import AppHooks, HookDelivery
from bot.intake.subscriptions import SUBSCRIBED_EVENTS
from bot.journal.wire import RedisClient
from bot.observe.metrics import Metrics
from bot.runner.inbound import default_shards, seen_key
from bot.runner.outage import Outage, pause

log = logging.getLogger(__name__)

TURN_KEY = "redelivery:{redelivery}:turn"
"""String, PX most of an interval: the worker doing this interval's pass."""
MARK_KEY = "redelivery:{redelivery}:scanned"
"""String: epoch ms up to which every delivery is settled; the next pass reads back to it."""
ASKED_KEY = "redelivery:{redelivery}:asked"
"""Hash: GUID → JSON ``{n, first, at, id, event}``: asks so far, first and last ask (epoch ms),
the delivery id asked for, its event."""
_GITHUB_TROUBLE = (gidgethub.HTTPException, aiohttp.ClientError, TimeoutError, OSError)


@dataclass(frozen=True)
class RedeliveryPolicy:
    """How far back, how many and how fast (``QUESTBOT_REDELIVERY_*`` set the first three)."""

    interval_s: float = 300.0
    window_h: float = 24.0
    max_per_pass: int = 50
    pause_s: float = 1.0
    """Between two redelivery requests: GitHub's secondary limits, and our own web process."""
    max_tries: int = 3
    max_pages: int = 50
    overlap_s: float = 120.0
    """Re-read before the last pass's start: an attempt GitHub was still making (up to its
    10 s) or logging when the last pass read appears now."""


@dataclass
class PassReport:
    """What one pass did (for logs and tests)."""

    ran: bool = True
    read: int = 0
    asked: list[str] = field(default_factory=list)
    recovered: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)
    given_up: list[str] = field(default_factory=list)
    left: int = 0
    """Unstored GUIDs over the cap, left for the next pass."""
    truncated: bool = False
    error: str | None = None


@dataclass
class _Ask:
    """One GUID asked for: how often, first and last (epoch ms), by which delivery id."""

    n: int
    first: int
    at: int
    id: int
    event: str
    done: str = ""
    """``given_up`` or ``refused``: kept only so it is not asked for again."""

    def dump(self) -> str:
        return json.dumps({"n": self.n, "first": self.first, "at": self.at, "id": self.id,
                           "event": self.event, "done": self.done})


@dataclass(frozen=True)
class _Due:
    """A GUID to ask for, by its newest attempt's id; ``at`` when that attempt was made."""

    guid: str
    id: int
    event: str
    at: int
    listed: bool = True
    """Read in this pass (not only remembered from an earlier ask)."""


class Redeliverer:
    """One worker's reconciler; ``run`` is its loop, ``once`` one pass."""

    def __init__(self, hooks: AppHooks, client: RedisClient, *,
                 policy: RedeliveryPolicy | None = None, metrics: Metrics | None = None,
                 owner: str = "worker", wall: Callable[[], float] = time.time,
                 sleep: Callable[[float], Awaitable[None]] = asyncio.sleep) -> None:
        self.hooks = hooks
        self.client = client
        self.inbound_shards = default_shards(client)
        self.policy = policy or RedeliveryPolicy()
        self.metrics = metrics
        self.owner = owner
        self.wall = wall
        self.sleep = sleep

    async def run(self, stop: asyncio.Event, outage: Outage | None = None) -> None:
        """A pass every ``interval_s`` until ``stop`` (the first one an interval after start:
        the web process is usually starting too)."""
        guard = outage or Outage()

        async def turn() -> None:
            await pause(stop, self.policy.interval_s)
            if not stop.is_set():
                report = await self.once()
                if report.ran and (report.asked or report.recovered or report.given_up
                                   or report.error):
                    log.info("redelivery pass: read %d, asked %d, recovered %d, gave up %d%s",
                             report.read, len(report.asked), len(report.recovered),
                             len(report.given_up), f" ({report.error})" if report.error else "")

        await guard.guard("redelivery", turn, stop)

    async def once(self, *, force: bool = False) -> PassReport:
        """One pass (``force``: even if another worker holds this interval's)."""
        ttl_ms = max(1000, int(self.policy.interval_s * 900))
        if not force and not await self.client.set(TURN_KEY, self.owner, nx=True, px=ttl_ms):
            return PassReport(ran=False)
        report = PassReport()
        now_ms = int(self.wall() * 1000)
        window_ms = int(self.policy.window_h * 3600 * 1000)
        asked = await self._asked()
        await self._settle(asked, now_ms - window_ms, report)
        mark = await self.client.get(MARK_KEY)
        since_ms = now_ms - window_ms
        if mark is not None:
            since_ms = max(since_ms, int(mark) - int(self.policy.overlap_s * 1000))
        try:
            listed, report.truncated = await self.hooks.since(
                datetime.fromtimestamp(since_ms / 1000, UTC), max_pages=self.policy.max_pages)
        except _GITHUB_TROUBLE as exc:
            report.error = f"could not read GitHub's delivery log: {_said(exc)}"
            self._count_pass(ok=False)
            return report
        report.read = len(listed)
        if report.truncated:
            log.warning("more than %d deliveries since %s: the older ones were not checked",
                        len(listed), datetime.fromtimestamp(since_ms / 1000, UTC).isoformat())
        newest = _newest_per_guid(listed)
        stored = await self._stored(list(newest))
        due = sorted((_Due(guid, d.id, d.event, _ms(d.delivered_at))
                      for guid, d in newest.items()
                      if guid not in stored and d.event in SUBSCRIBED_EVENTS
                      and self._due(asked.get(guid), now_ms)),
                     key=lambda d: (d.at, d.id))  # GitHub's times are to the second; ids grow
        due += [_Due(guid, a.id, a.event, a.first, listed=False)
                for guid, a in sorted(asked.items(), key=lambda item: item[1].first)
                if guid not in newest and self._due(a, now_ms)]
        cap = self.policy.max_per_pass
        left = [*await self._ask(due[:cap], asked, now_ms, report), *due[cap:]]
        report.left = len(left)
        if report.error is None:
            first_left = min((d.at for d in left if d.listed), default=now_ms + 1)
            await self.client.set(MARK_KEY, str(min(now_ms, first_left - 1)))
        self._count_pass(ok=report.error is None)
        if self.metrics is not None:
            self.metrics.redelivery_pending.set(sum(1 for a in asked.values() if not a.done))
        return report

    # -- the steps -----------------------------------------------------------------------------

    async def _asked(self) -> dict[str, _Ask]:
        raw: dict[Any, Any] = await self.client.hgetall(ASKED_KEY)
        asked = {}
        for guid, value in raw.items():
            try:
                asked[_text(guid)] = _Ask(**json.loads(value))
            except (ValueError, TypeError):
                await self.client.hdel(ASKED_KEY, guid)
        return asked

    async def _settle(self, asked: dict[str, _Ask], oldest_ms: int, report: PassReport) -> None:
        """GUIDs asked for that are stored now (recovered), that will not be (given up), or
        that have left the window (forgotten)."""
        stored = await self._stored([g for g, a in asked.items() if not a.done])
        for guid, ask in list(asked.items()):
            if ask.first < oldest_ms:
                del asked[guid]
                await self.client.hdel(ASKED_KEY, guid)
            elif ask.done:
                continue
            elif guid in stored:
                report.recovered.append(guid)
                self._count(ask.event, "recovered")
                del asked[guid]
                await self.client.hdel(ASKED_KEY, guid)
            elif ask.n >= self.policy.max_tries:
                report.given_up.append(guid)
                self._count(ask.event, "given_up")
                log.warning("gave up on webhook delivery %s (%s): asked GitHub %d times and "
                            "questbot still has not stored it; redeliver it from the App's "
                            "settings page (Advanced) once the web process answers", guid,
                            ask.event, ask.n)
                ask.done = "given_up"
                await self.client.hset(ASKED_KEY, guid, ask.dump())

    async def _stored(self, guids: Sequence[str]) -> set[str]:
        found: set[str] = set()
        for start in range(0, len(guids), 500):
            chunk = guids[start:start + 500]
            pipe = self.client.pipeline(transaction=False)  # on a cluster: one slot a key
            for g in chunk:
                pipe.exists(seen_key(g, self.inbound_shards))
            markers = [n or None for n in await pipe.execute()]
            found |= {g for g, marker in zip(chunk, markers, strict=True) if marker is not None}
        return found

    def _due(self, ask: _Ask | None, now_ms: int) -> bool:
        return ask is None or (not ask.done and now_ms - ask.at >= self.policy.interval_s * 1000)

    async def _ask(self, due: Sequence[_Due], asked: dict[str, _Ask], now_ms: int,
                   report: PassReport) -> list[_Due]:
        """Ask for each; what was not asked for (GitHub in trouble) is returned."""
        for n, item in enumerate(due):
            if n:
                await self.sleep(self.policy.pause_s)
            before = asked.get(item.guid)
            ask = _Ask(n=(before.n if before else 0) + 1,
                       first=before.first if before else now_ms, at=now_ms, id=item.id,
                       event=item.event)
            try:
                await self.hooks.redeliver(item.id)
            except gidgethub.BadRequest as exc:
                status = int(exc.status_code)
                if not (400 <= status < 500 and status != 429):
                    report.error = f"GitHub did not take a redelivery: {_said(exc)}"
                    return list(due[n:])
                report.refused.append(item.guid)
                self._count(item.event, "refused")
                log.warning("GitHub refused to redeliver %s (%s): %s", item.guid, item.event,
                            _said(exc))
                ask.done = "refused"
            except _GITHUB_TROUBLE as exc:
                report.error = f"GitHub did not take a redelivery: {_said(exc)}"
                return list(due[n:])
            else:
                report.asked.append(item.guid)
                self._count(item.event, "requested")
            asked[item.guid] = ask
            await self.client.hset(ASKED_KEY, item.guid, ask.dump())
        return []

    # -- metrics -------------------------------------------------------------------------------

    def _count(self, event: str, result: str) -> None:
        if self.metrics is not None:
            label = event if event in SUBSCRIBED_EVENTS else "other"
            self.metrics.redeliveries.labels(event=label, result=result).inc()

    def _count_pass(self, *, ok: bool) -> None:
        if self.metrics is not None:
            self.metrics.redelivery_passes.labels(outcome="ok" if ok else "failed").inc()


def _newest_per_guid(listed: Sequence[HookDelivery]) -> dict[str, HookDelivery]:
    """Each GUID's newest attempt (the log is newest first), within the read."""
    newest: dict[str, HookDelivery] = {}
    for delivery in listed:
        newest.setdefault(delivery.guid, delivery)
    return newest


def _ms(moment: datetime) -> int:
    return int(moment.timestamp() * 1000)


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _said(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"[:300]
