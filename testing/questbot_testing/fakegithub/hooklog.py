"""The App's webhook delivery log, as GitHub keeps it and serves it (BEHAVIOUR.md §14).

Every attempt to deliver a webhook — first attempts, the dispatcher's copies, redeliveries —
is one entry with an id of its own; the ``guid`` (``X-GitHub-Delivery``) is the event's and is
shared by its redeliveries. An entry's ``status`` is ``OK`` for a 2xx answer,
``Invalid HTTP Response: <code>`` for another, ``failed to connect`` (with ``status_code``
502, as the description's example pairs them) when nothing answered, ``timed out`` (504)
after GitHub's 10 s. The last two statuses' codes are **(unconfirmed)**.

The three operations (JWT only, like every ``/app/hook/*``):

* ``apps/list-webhook-deliveries``: newest first (GitHub's own redelivery script reads it so:
  docs: webhooks/using-webhooks/automatically-redelivering-failed-deliveries-for-a-github-app-
  webhook), ``per_page`` default 30 and at most 100, ``status=success`` (200-399) or ``failure``
  (400-599, so a failure to connect counts: its code is 502), and cursor pagination: the
  ``Link`` header's ``rel="next"`` carries ``cursor``. An unreadable cursor is 400
  **(unconfirmed)**.
* ``apps/get-webhook-delivery``: the entry with its request (headers, payload) and response.
* ``apps/redeliver-webhook-delivery``: 202, and the same body (same guid) is sent again later,
  re-signed, as a new entry with ``redelivery: true``. An id GitHub does not have is 404; one
  older than the three days GitHub allows redelivering is 422 **(unconfirmed wording)**.

``drop(n)`` makes the next ``n`` attempts fail to connect without reaching the receiver — the
receiver was down — so a test can lose deliveries the way production loses them.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

import aiohttp

from questbot_testing.fakegithub.calls import Call, GitHubError, Reply, not_found
from questbot_testing.fakegithub.rules import validation_failed
from questbot_testing.fakegithub.state import iso
from questbot_testing.fakegithub.webhooks import Delivery, DeliveryResult, signature_headers

if TYPE_CHECKING:
    from questbot_testing.fakegithub.server import FakeGitHub

REDELIVERY_WINDOW_S = 3 * 24 * 3600.0
"""§14: deliveries can be redelivered for the past three days on github.com."""
GITHUB_TIMEOUT_S = 10.0


@dataclass
class HookDelivery:
    id: int
    delivery: Delivery
    url: str
    started: float
    redelivery: bool
    finished: float = 0.0
    status_code: int = 0
    status: str = ""
    response_body: str = ""
    response_headers: dict[str, str] = field(default_factory=dict)

    @property
    def guid(self) -> str:
        return self.delivery.id

    def item(self) -> dict[str, Any]:
        """The ``hook-delivery-item`` GitHub lists."""
        payload = self.delivery.payload
        action = payload.get("action")
        return {
            "id": self.id, "guid": self.guid, "delivered_at": iso(self.started),
            "redelivery": self.redelivery, "duration": round(self.finished - self.started, 3),
            "status": self.status, "status_code": self.status_code,
            "event": self.delivery.event, "action": action if isinstance(action, str) else None,
            "installation_id": _id(payload.get("installation")),
            "repository_id": _id(payload.get("repository")), "throttled_at": None,
        }

    def detail(self) -> dict[str, Any]:
        """The ``hook-delivery`` GitHub answers for one id."""
        return {**self.item(), "url": self.url,
                "request": {"headers": dict(self.delivery.headers),
                            "payload": self.delivery.payload},
                "response": {"headers": self.response_headers, "payload": self.response_body}}


def _id(value: Any) -> int | None:
    found = value.get("id") if isinstance(value, dict) else None
    return found if isinstance(found, int) else None


@dataclass
class HookLog:
    """Every delivery attempt of one fake, and the knob that drops some."""

    entries: list[HookDelivery] = field(default_factory=list)
    dropping: int = 0
    tasks: set[asyncio.Task[Any]] = field(default_factory=set)
    next_id: int = 7_000_000_000

    def drop(self, count: int) -> None:
        """The next ``count`` attempts fail to connect (the receiver is down)."""
        self.dropping = count

    def guids(self, *, ok: bool | None = None) -> list[str]:
        """The guids attempted (in order, once each); ``ok``: only those some attempt of which
        was (or none was) answered 2xx."""
        seen: dict[str, bool] = {}
        for entry in self.entries:
            seen[entry.guid] = seen.get(entry.guid, False) or entry.status == "OK"
        return [guid for guid, good in seen.items() if ok is None or good is ok]

    def begin(self, delivery: Delivery, url: str, *, redelivery: bool) -> HookDelivery:
        self.next_id += 1
        entry = HookDelivery(self.next_id, delivery, url, time.time(), redelivery)
        self.entries.append(entry)
        return entry

    def finish(self, entry: HookDelivery, status_code: int, *, error: str = "",
               body: str = "", headers: dict[str, str] | None = None) -> None:
        entry.finished = time.time()
        if error:
            entry.status_code, entry.status = (504, "timed out") if "timeout" in error.lower() \
                else (502, "failed to connect")
        else:
            entry.status_code = status_code
            entry.status = "OK" if 200 <= status_code < 300 else (
                f"Invalid HTTP Response: {status_code}")
        entry.response_body, entry.response_headers = body[:2000], dict(headers or {})

    def take_drop(self) -> bool:
        if self.dropping <= 0:
            return False
        self.dropping -= 1
        return True

    async def attempt(self, url: str, delivery: Delivery, *, redelivery: bool) -> DeliveryResult:
        """One attempt, recorded (the fake without a dispatcher sends this way)."""
        entry = self.begin(delivery, url, redelivery=redelivery)
        if self.take_drop():
            self.finish(entry, 0, error="dropped: the receiver did not answer")
            return DeliveryResult(delivery, 0, "failed to connect")
        try:
            async with aiohttp.ClientSession() as session, session.post(
                    url, data=delivery.body, headers=delivery.headers,
                    timeout=aiohttp.ClientTimeout(total=GITHUB_TIMEOUT_S)) as response:
                body = await response.text()
                self.finish(entry, response.status, body=body, headers=dict(response.headers))
                return DeliveryResult(delivery, response.status, body)
        except (aiohttp.ClientError, TimeoutError, OSError) as exc:
            self.finish(entry, 0, error=f"{type(exc).__name__}: {exc}")
            return DeliveryResult(delivery, 0, entry.status)

    async def settle(self) -> None:
        """Wait until every redelivery asked for has been attempted."""
        while self.tasks:
            await asyncio.gather(*list(self.tasks), return_exceptions=True)


# -- the REST operations -----------------------------------------------------------------------


async def list_deliveries(call: Call) -> Reply:
    log = call.fake.hooks
    per_page = max(1, min(int(call.query.get("per_page") or 30), 100))
    entries = sorted(log.entries, key=lambda e: e.id, reverse=True)
    wanted = call.query.get("status")
    if wanted == "success":
        entries = [e for e in entries if 200 <= e.status_code <= 399]
    elif wanted == "failure":
        entries = [e for e in entries if 400 <= e.status_code <= 599]
    cursor = call.query.get("cursor")
    if cursor:
        if not cursor.startswith("v1_") or not cursor[3:].isdigit():
            raise GitHubError(400, "Bad request")
        entries = [e for e in entries if e.id <= int(cursor[3:])]
    shown, rest = entries[:per_page], entries[per_page:]
    reply = Reply(200, [e.item() for e in shown])
    if rest:
        query = {k: v for k, v in call.query.items() if k in ("status", "per_page")}
        query["cursor"] = f"v1_{rest[0].id}"
        reply.headers["Link"] = (f'<{call.fake.url}/app/hook/deliveries?{urlencode(query)}>; '
                                 'rel="next"')
    return reply


def _entry(call: Call) -> HookDelivery:
    wanted = call.int_param("delivery_id")
    found = next((e for e in call.fake.hooks.entries if e.id == wanted), None)
    if found is None:
        raise not_found()
    return found


async def get_delivery(call: Call) -> Reply:
    return Reply(200, _entry(call).detail())


async def redeliver(call: Call) -> Reply:
    entry = _entry(call)
    if time.time() - entry.started > REDELIVERY_WINDOW_S:
        raise validation_failed("Hook", "custom", message="this delivery is too old to be "
                                "redelivered")
    fake: FakeGitHub = call.fake
    again = Delivery(entry.delivery.event, entry.guid, entry.delivery.payload, entry.delivery.body,
                     {**entry.delivery.headers,
                      **signature_headers(entry.delivery.body, fake.webhook_secret)})
    task = asyncio.get_running_loop().create_task(fake.redeliver(again))
    fake.hooks.tasks.add(task)
    task.add_done_callback(fake.hooks.tasks.discard)
    return Reply(202, {})


HANDLERS = {
    "apps/list-webhook-deliveries": list_deliveries,
    "apps/get-webhook-delivery": get_delivery,
    "apps/redeliver-webhook-delivery": redeliver,
}
