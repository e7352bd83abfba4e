"""Webhooks sent the way GitHub sends them: later, concurrently, and not always once.

By default the fake delivers a webhook inside the action that caused it (``await
fake.comment(...)`` returns once the receiver answered), which keeps tests step by step. A
``Dispatcher`` instead queues each delivery and sends it from a task of its own, as GitHub's
Hookshot does, to one of several receivers (the App's webhook URL behind a load balancer):

* ``copies`` — each delivery is sent between ``lo`` and ``hi`` times, with the same
  ``X-GitHub-Delivery`` and body, to receivers picked at random: a redelivery from the App's
  settings page or API has the same GUID (BEHAVIOUR.md §14), and a receiver must absorb it;
* ``reorder`` — that share of deliveries is held back 0.2-2 s, so later ones overtake it;
* ``redeliver_failed`` — GitHub itself never redelivers a failed delivery; the documented
  remedy is a job that lists failed deliveries and redelivers them (docs: webhooks/using-
  webhooks/automatically-redelivering-failed-deliveries-for-a-github-app-webhook).
  With it on, the dispatcher plays that job: a delivery no attempt got a 2xx for (connection
  refused, a timeout, a 5xx) is sent again with back-off until one does.

Every attempt is recorded (``attempts``), and a delivery counts as acknowledged once any
attempt got a 2xx — what a receiver promised to have stored.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import time
from dataclasses import dataclass, field
from typing import Any

import aiohttp

from questbot_testing.fakegithub.hooklog import HookLog
from questbot_testing.fakegithub.webhooks import Delivery

GITHUB_TIMEOUT_S = 10.0
"""GitHub counts a delivery as failed when the receiver has not answered within 10 s."""


@dataclass
class Attempt:
    """One POST of one delivery to one receiver; ``status`` 0 means no HTTP answer."""

    guid: str
    event: str
    action: str | None
    target: str
    started: float
    redelivery: bool
    finished: float = 0.0
    status: int = 0
    error: str = ""

    def as_json(self) -> dict[str, Any]:
        return {"guid": self.guid, "event": self.event, "action": self.action,
                "target": self.target, "started": self.started, "finished": self.finished,
                "status": self.status, "error": self.error, "redelivery": self.redelivery}


@dataclass
class Dispatcher:
    targets: list[str]
    copies: tuple[int, int] = (1, 1)
    reorder: float = 0.0
    redeliver_failed: bool = False
    seed: int | None = None
    timeout_s: float = GITHUB_TIMEOUT_S
    backoff_cap_s: float = 5.0
    attempts: list[Attempt] = field(default_factory=list)
    submitted: list[dict[str, Any]] = field(default_factory=list)
    acknowledged: set[str] = field(default_factory=set)
    hooks: HookLog | None = None
    """The fake's delivery log: each attempt is an entry, and its drops apply here too."""
    _rng: random.Random = field(init=False, repr=False)
    _tasks: set[asyncio.Task[None]] = field(default_factory=set, repr=False)
    _session: aiohttp.ClientSession | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        if not self.targets:
            raise ValueError("a dispatcher needs at least one webhook URL to send to")
        lo, hi = self.copies
        if not 1 <= lo <= hi:
            raise ValueError(f"copies must be 1 <= lo <= hi, got {self.copies}")
        self._rng = random.Random(self.seed)

    @property
    def in_flight(self) -> int:
        """Deliveries not yet settled: still being sent, or waiting to be redelivered."""
        return len(self._tasks)

    def submit(self, delivery: Delivery) -> None:
        """Queue ``delivery``; it is sent from a task of its own (call from the event loop)."""
        self.submitted.append({"guid": delivery.id, "event": delivery.event,
                               "action": delivery.payload.get("action"), "at": time.time()})
        task = asyncio.get_running_loop().create_task(self._deliver(delivery))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def resend(self, delivery: Delivery) -> None:
        """One more attempt, as a redelivery (GitHub's redelivery API asked for it)."""
        await self._attempt(delivery, 0.0, redelivery=True)

    async def close(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        for task in list(self._tasks):
            with contextlib.suppress(asyncio.CancelledError):
                await task
        if self._session is not None:
            await self._session.close()
            self._session = None

    async def _deliver(self, delivery: Delivery) -> None:
        if self._rng.random() < self.reorder:
            await asyncio.sleep(self._rng.uniform(0.2, 2.0))
        count = self._rng.randint(*self.copies)
        delays = [0.0] + [self._rng.uniform(0.0, 0.5) for _ in range(count - 1)]
        await asyncio.gather(*(self._attempt(delivery, delay, redelivery=n > 0)
                               for n, delay in enumerate(delays)))
        wait = 0.25
        while self.redeliver_failed and delivery.id not in self.acknowledged:
            await asyncio.sleep(wait)
            wait = min(wait * 2, self.backoff_cap_s)
            await self._attempt(delivery, 0.0, redelivery=True)

    async def _attempt(self, delivery: Delivery, delay: float, *, redelivery: bool) -> None:
        if delay:
            await asyncio.sleep(delay)
        if self._session is None:
            self._session = aiohttp.ClientSession()
        target = self._rng.choice(self.targets)
        action = delivery.payload.get("action")
        attempt = Attempt(delivery.id, delivery.event, action if isinstance(action, str) else None,
                          target, time.time(), redelivery)
        self.attempts.append(attempt)
        entry = self.hooks.begin(delivery, target, redelivery=redelivery) if self.hooks else None
        body = ""
        try:
            if self.hooks is not None and self.hooks.take_drop():
                raise aiohttp.ClientConnectionError("dropped: the receiver did not answer")
            async with self._session.post(
                target, data=delivery.body, headers=delivery.headers,
                timeout=aiohttp.ClientTimeout(total=self.timeout_s),
            ) as response:
                body = (await response.read()).decode(errors="replace")
                attempt.status = response.status
        except (aiohttp.ClientError, TimeoutError, OSError) as exc:
            attempt.error = f"{type(exc).__name__}: {exc}"[:300]
        attempt.finished = time.time()
        if self.hooks is not None and entry is not None:
            self.hooks.finish(entry, attempt.status, error=attempt.error, body=body)
        if 200 <= attempt.status < 300:
            self.acknowledged.add(delivery.id)
