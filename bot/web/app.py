"""The web process: accept GitHub's webhook deliveries, store them, answer — and serve reviews
by capability (``bot.web.reviews``), the one thing it applies to a journal itself.

``POST /webhook`` checks, in this order, each step cheaper than the next and none trusting
what it has not yet checked:

1. the body size — from ``Content-Length`` before reading, and again while reading (413);
   the body must arrive within a few seconds (408, ``bot.web.ingress``, which also holds
   the deadline on a request's headers);
2. ``X-Hub-Signature-256`` over the raw bytes, constant-time, before anything parses them
   (401; nothing is stored);
3. ``X-GitHub-Event`` and ``X-GitHub-Delivery`` present (400);
4. the body is a JSON object (400);
5. ``ping`` is answered 200; an event questbot does not subscribe to is acknowledged (202,
   ``ignored``) and not stored — GitHub sends what the App's manifest asks for, so this only
   happens after the manifest changed;
6. the delivery is stored in the inbound stream, once per delivery id (``bot.runner.inbound``): 202
   ``accepted`` once it is stored, 200 ``duplicate`` for a redelivery, 503 if Redis cannot
   store it within ``STORE_DEADLINE_S`` (GitHub shows the failure, and the delivery can be
   redelivered).

It never calls GitHub: a worker does that (``bot.worker.process``), so a slow or rate-limited GitHub
cannot make webhook deliveries time out (GitHub gives up after 10 seconds).

``GET /healthz`` is 200 ``{"status": "ok", "redis": "ok"}`` when Redis answers ``PING``, and
503 ``{"status": "unavailable", "redis": "unreachable", ...}`` while it does not: the process
is alive but cannot accept deliveries, so use it as a readiness check, not a liveness check
(restarting the process would not bring Redis back). ``GET /metrics`` serves
``bot.observe.metrics`` in the Prometheus text format. ``POST /reviews/{id}/start`` and
``/submit`` serve reviews by capability (``bot.web.reviews``).

Redis going away. The client comes from ``bot.journal.wire.connect``: a command that meets a
closed connection (Redis restarted, failed over) is sent again on a new one after a back-off,
so the first delivery after Redis is back is stored like any other, not answered 503; while
Redis stays away the retries give up after about 2.5 s and the delivery is answered 503 —
right then, because GitHub does not retry a failed delivery by itself and a 503 is what its
"redeliver failed deliveries" picks up. Nothing in the process waits on Redis outside a
request, so nothing is left to die: each request fails or succeeds on its own.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import time
from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Final

import orjson
import redis.asyncio
import redis.exceptions
from aiohttp import web

from bot.github.signature import HEADER as SIGNATURE_HEADER
from bot.github.signature import SignatureError, verify_signature
from bot.intake.subscriptions import SUBSCRIBED_EVENTS
from bot.journal.errors import DurabilityError
from bot.journal.store import Journal
from bot.journal.wire import RedisClient, connect
from bot.observe.logs import bind, configure_logging
from bot.observe.metrics import UNVERIFIED_EVENT, Metrics, Outcome
from bot.reviews.capabilities import Capabilities
from bot.reviews.proof_context import proof_context
from bot.reviews.service import Reviews
from bot.runner.inbound import Duplicate, Inbound
from bot.web.ingress import (
    BODY_DEADLINE_S,
    BodyTimedOut,
    header_deadline,
    read_body,
    serve_until_stopped,
    timed_out,
)
from bot.web.reviews import add_review_routes

if TYPE_CHECKING:
    from bot.settings.process import Config

log = logging.getLogger(__name__)

# orjson parses a 15 KB payload in about 30 µs, json in 70 µs: a third of a delivery's cost
_loads: Callable[[bytes], Any] = orjson.loads
_dumps: Callable[[Any], bytes] = orjson.dumps

DEFAULT_MAX_BODY: Final = 25 * 1024 * 1024
"""GitHub caps webhook payloads at 25 MB and does not send larger ones
(https://docs.github.com/en/webhooks/webhook-events-and-payloads#payload-cap)."""

EVENT_HEADER: Final = "X-GitHub-Event"
DELIVERY_HEADER: Final = "X-GitHub-Delivery"
_MAX_ID = 128
HEALTH_TIMEOUT_S: Final = 2.0
"""How long ``/healthz`` waits for ``PING`` (a load balancer's probe gives up soon)."""
STORE_DEADLINE_S: Final = 8.0
"""The longest a delivery waits for Redis before it is answered 503: GitHub counts a delivery
as failed when it has no answer within 10 s, and an answer it never reads helps nobody."""

_SECRET: web.AppKey[bytes] = web.AppKey("questbot_secret", bytes)
_INBOUND: web.AppKey[Inbound] = web.AppKey("questbot_inbound", Inbound)
_REDIS: web.AppKey[RedisClient] = web.AppKey("questbot_redis")
_METRICS: web.AppKey[Metrics] = web.AppKey("questbot_metrics", Metrics)
_MAX_BODY: web.AppKey[int] = web.AppKey("questbot_max_body", int)


_JSON: Final = {"Content-Type": "application/json"}


def _answer(status: int, outcome: str, detail: str | None = None, **fields: str) -> web.Response:
    body: dict[str, Any] = {"status": outcome, **fields}
    if detail is not None:
        body["detail"] = detail
    # The header given as is: ``content_type=`` parses and rebuilds it on every response.
    return web.Response(status=status, body=_dumps(body), headers=_JSON)


def _plausible_id(value: str) -> bool:
    """GitHub's delivery ids are GUIDs; allow any short printable ASCII, refuse the rest
    (it becomes part of a Redis key and of log lines)."""
    return 0 < len(value) <= _MAX_ID and value.isascii() and value.isprintable()


async def webhook(request: web.Request) -> web.Response:
    """``POST /webhook``; see the module docstring for the order of the checks."""
    started = time.perf_counter()
    app = request.app
    metrics = app[_METRICS]
    try:
        response = await _webhook(request, app, metrics)
    finally:
        metrics.webhook_seconds.observe(time.perf_counter() - started)
    return response


async def _webhook(request: web.Request, app: web.Application, metrics: Metrics) -> web.Response:
    max_body = app[_MAX_BODY]
    length = request.content_length
    if length is not None and length > max_body:
        return _too_large(metrics, length, max_body)
    try:
        body = await read_body(request)
    except web.HTTPRequestEntityTooLarge:
        return _too_large(metrics, None, max_body)
    except BodyTimedOut:
        metrics.delivery(UNVERIFIED_EVENT, Outcome.TIMED_OUT)
        log.warning("refused a delivery whose body did not arrive within %g s",
                    BODY_DEADLINE_S, extra={"remote": request.remote,
                                            "outcome": Outcome.TIMED_OUT.value})
        return await timed_out(request)
    headers = request.headers
    try:
        verify_signature(app[_SECRET], body, headers.get(SIGNATURE_HEADER))
    except SignatureError as exc:
        metrics.delivery(UNVERIFIED_EVENT, Outcome.BAD_SIGNATURE)
        log.warning("refused a webhook delivery: %s", exc,
                    extra={"remote": request.remote, "outcome": Outcome.BAD_SIGNATURE.value})
        return _answer(401, Outcome.BAD_SIGNATURE, str(exc))

    event = headers.get(EVENT_HEADER, "")
    delivery_id = headers.get(DELIVERY_HEADER, "")
    missing = [name for name, value in ((EVENT_HEADER, event), (DELIVERY_HEADER, delivery_id))
               if not value]
    if missing or not _plausible_id(delivery_id) or not _plausible_id(event):
        metrics.delivery(event if event in SUBSCRIBED_EVENTS else UNVERIFIED_EVENT,
                         Outcome.MALFORMED)
        detail = (f"the delivery has no {' or '.join(missing)} header; GitHub sends both with "
                  "every delivery" if missing else
                  f"{DELIVERY_HEADER} or {EVENT_HEADER} is not a short printable ASCII string")
        return _answer(400, Outcome.MALFORMED, detail)

    with bind(delivery_id=delivery_id, event=event):
        try:
            payload = _loads(body)
        except ValueError as exc:  # JSONDecodeError, and UnicodeDecodeError for bad UTF-8
            metrics.delivery(_event_label(event), Outcome.MALFORMED)
            log.warning("refused a signed delivery whose body is not JSON: %s", exc)
            return _answer(400, Outcome.MALFORMED, f"the body is not valid JSON: {exc}")
        if not isinstance(payload, dict):
            metrics.delivery(_event_label(event), Outcome.MALFORMED)
            return _answer(400, Outcome.MALFORMED,
                           f"the body is JSON but a {type(payload).__name__}, not an object")
        if event == "ping":
            metrics.delivery(event, Outcome.PING)
            log.info("ping from GitHub (hook %s)", payload.get("hook_id"))
            return _answer(200, "pong")
        # The parsed payload was only a check; the worker parses the stored bytes again. Drop
        # it before waiting for Redis: held across the wait by every delivery in flight, its
        # hundreds of objects survive into the garbage collector's older generations and make
        # its collections cost more than the parse did.
        del payload
        if event not in SUBSCRIBED_EVENTS:
            metrics.delivery(event, Outcome.IGNORED)
            log.info("ignored a %s delivery: questbot does not subscribe to it", event)
            return _answer(202, Outcome.IGNORED, f"questbot does not act on {event} events")
        try:
            async with asyncio.timeout(STORE_DEADLINE_S):
                stored = await app[_INBOUND].store(delivery_id, event, body, datetime.now(UTC))
        except (redis.exceptions.RedisError, OSError, TimeoutError, DurabilityError) as exc:
            metrics.delivery(event, Outcome.UNAVAILABLE)
            log.error("could not store a delivery: %s", exc or type(exc).__name__)
            return _answer(503, Outcome.UNAVAILABLE,
                           "questbot could not store the delivery; redeliver it later")
        if isinstance(stored, Duplicate):
            metrics.delivery(event, Outcome.DUPLICATE)
            log.info("absorbed a redelivery (first stored as %s)", stored.entry_id)
            return _answer(200, Outcome.DUPLICATE, delivery=delivery_id)
        metrics.delivery(event, Outcome.ACCEPTED)
        log.debug("stored a delivery as %s", stored.entry_id)
        return _answer(202, Outcome.ACCEPTED, delivery=delivery_id)


def _event_label(event: str) -> str:
    """A signed event name is GitHub's; still, only known ones become a label value."""
    return event if event in SUBSCRIBED_EVENTS or event == "ping" else "other"


def _too_large(metrics: Metrics, length: int | None, max_body: int) -> web.Response:
    metrics.delivery(UNVERIFIED_EVENT, Outcome.TOO_LARGE)
    size = f"{length} bytes" if length is not None else "more than that"
    log.warning("refused a delivery over the %d-byte cap (%s)", max_body, size)
    return _answer(413, Outcome.TOO_LARGE,
                   f"the body is over the {max_body}-byte limit ({size})")


async def healthz(request: web.Request) -> web.Response:
    """200 when Redis answers ``PING`` within ``HEALTH_TIMEOUT_S``, 503 (degraded: the process
    is up, Redis is not) otherwise."""
    try:
        async with asyncio.timeout(HEALTH_TIMEOUT_S):
            await request.app[_REDIS].ping()
    except (redis.exceptions.RedisError, OSError, TimeoutError) as exc:
        log.warning("health check failed: redis did not answer: %s", exc or type(exc).__name__)
        return _answer(503, "unavailable",
                       f"redis did not answer PING within {HEALTH_TIMEOUT_S:g} s "
                       f"({type(exc).__name__}); deliveries are answered 503 until it does, "
                       "and GitHub's failed deliveries can be redelivered then",
                       redis="unreachable")
    return _answer(200, "ok", redis="ok")


async def metrics_view(request: web.Request) -> web.Response:
    metrics = request.app[_METRICS]
    inbound = request.app[_INBOUND]
    try:  # the backlog as of this scrape; with Redis away the last value stays
        async with asyncio.timeout(1.0):
            metrics.inbound_backlog.set(await inbound.backlog())
            metrics.inbound_dead.set(await inbound.dead_letters())
    except (TimeoutError, redis.exceptions.RedisError, OSError) as exc:
        log.info("could not read the inbound backlog for /metrics: %s", exc)
    return web.Response(body=metrics.render(), headers={"Content-Type": metrics.content_type})


def make_app(
    *,
    secret: str | bytes,
    inbound: Inbound,
    redis: RedisClient,
    metrics: Metrics,
    max_body: int = DEFAULT_MAX_BODY,
    reviews: Reviews | None = None,
) -> web.Application:
    """The aiohttp application. It owns none of its parts: whoever made ``inbound`` and
    ``redis`` closes them (``run_web`` does, on shutdown).

    Raises ``ValueError`` for an empty ``secret``: a server that cannot check signatures
    would store whatever anyone sends it.
    """
    key = secret.encode() if isinstance(secret, str) else bytes(secret)
    if not key.strip():
        raise ValueError("the webhook secret is empty; set GITHUB_WEBHOOK_SECRET to the secret "
                         "configured on the GitHub App's webhook")
    if max_body < 1:
        raise ValueError(f"max_body must be at least 1 byte, got {max_body}")
    app = web.Application(client_max_size=max_body, middlewares=[header_deadline])
    app[_SECRET] = key
    app[_INBOUND] = inbound
    app[_REDIS] = redis
    app[_METRICS] = metrics
    app[_MAX_BODY] = max_body
    app.router.add_post("/webhook", webhook)
    app.router.add_get("/healthz", healthz)
    app.router.add_get("/metrics", metrics_view)
    add_review_routes(app, reviews or Reviews(Journal(redis), Capabilities(redis),
                                              context_of=proof_context(redis)))
    return app


def app_from_config(config: Config, *, max_body: int = DEFAULT_MAX_BODY) -> web.Application:
    """The production application: its own Redis client, inbound store and metrics, closed
    in order on shutdown (the batches in flight first, then the connections)."""
    metrics = Metrics()
    on_error, on_reconnect = metrics.redis_hooks("web")
    client = connect(config.redis_url, socket_timeout=10, on_error=on_error,
                     on_reconnect=on_reconnect)
    inbound_batches = metrics.inbound_batch
    inbound = Inbound(client, durable=config.durable_acks,
                      on_batch=lambda n: inbound_batches.observe(n))
    reviews = Reviews(Journal(client, durable=config.durable_acks), Capabilities(client),
                      context_of=proof_context(client))
    app = make_app(secret=config.github_webhook_secret.get_secret_value(), inbound=inbound,
                   redis=client, metrics=metrics, max_body=max_body, reviews=reviews)

    async def lifecycle(_: web.Application) -> AsyncIterator[None]:
        try:
            await client.ping()
        except (redis.exceptions.RedisError, OSError) as exc:
            log.warning("redis does not answer yet (%s); /healthz reports 503 and deliveries "
                        "are refused with 503 until it does", exc)
        # Everything allocated so far (modules, classes, the app) lives as long as the process.
        # Frozen, the collector stops walking it on every full collection: measured under load,
        # those took about 30 ms each (a p99 spike) and 2 ms once it was frozen.
        gc.freeze()
        # The collector's thresholds stay at Python's defaults. A raised young-generation
        # threshold (10,000, to save ~5 µs a delivery) coincided with a half-load p99 of
        # 31-83 ms in every bench run; with the defaults most runs are near 10 ms
        # (docs/performance.md has what is still unexplained).
        yield
        await inbound.close()
        await client.aclose()

    app.cleanup_ctx.append(lifecycle)
    return app


def run_web(config: Config, *, host: str = "0.0.0.0") -> None:  # noqa: S104 - a server
    """``python -m bot serve``: log JSON lines (secrets redacted), serve until SIGINT/SIGTERM,
    with the deadlines on reading a request (``bot.web.ingress``)."""
    configure_logging(secrets=[config.github_webhook_secret.get_secret_value(),
                               config.github_private_key.get_secret_value()])
    log.info("questbot web listening on %s:%d (durable acks %s)", host, config.port,
             "on" if config.durable_acks else "off")
    asyncio.run(serve_until_stopped(app_from_config(config), host, config.port))
