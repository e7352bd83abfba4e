"""POST /webhook end to end on a real Redis: the order of the checks, what each answers, and
that only signed, well-formed, subscribed, first-time deliveries reach the inbound stream."""

from __future__ import annotations

import asyncio
import uuid
from collections import Counter

import pytest
import redis.asyncio

from bot.github.signature import sign
from bot.observe.metrics import Metrics
from bot.runner.inbound import Inbound
from bot.web.app import DEFAULT_MAX_BODY, SUBSCRIBED_EVENTS, make_app
from questbot_testing.fakegithub.webhooks import build_delivery, example_files, signature_headers
from questbot_testing.redis_server import free_port
from tests.web.conftest import (
    SECRET,
    Client,
    MakeClient,
    delivery,
    post,
    send,
    stream_length,
)

# https://docs.github.com/en/webhooks/using-webhooks/validating-webhook-deliveries#testing-the-webhook-payload-validation
GITHUB_SECRET = "It's a Secret to Everybody"
GITHUB_BODY = b"Hello, World!"
GITHUB_SIGNATURE = "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"


def headers_for(event: str = "issues", delivery_id: str | None = None) -> dict[str, str]:
    return {"X-GitHub-Event": event, "X-GitHub-Delivery": delivery_id or str(uuid.uuid4()),
            "Content-Type": "application/json"}


async def test_an_issue_delivery_is_stored_and_answered_202(
    client: Client, redis_async: redis.asyncio.Redis, inbound: Inbound
) -> None:
    d = delivery("issues", "opened")
    response = await send(client, d)
    assert response.status == 202
    assert await response.json() == {"status": "accepted", "delivery": d.id}
    (stored,) = await inbound.read("test", block_ms=None)
    assert (stored.delivery_id, stored.event, stored.body) == (d.id, "issues", d.body)


async def test_githubs_published_test_vector_passes_the_signature_check(
    make_client: MakeClient, redis_async: redis.asyncio.Redis
) -> None:
    client = await make_client(secret=GITHUB_SECRET)
    headers = {**headers_for(), "X-Hub-Signature-256": GITHUB_SIGNATURE}
    response = await post(client, GITHUB_BODY, headers)
    # The signature is accepted; "Hello, World!" then fails as JSON (400, not 401).
    assert response.status == 400
    assert (await response.json())["status"] == "malformed"
    tampered = GITHUB_SIGNATURE[:-1] + "f"
    response = await post(client, GITHUB_BODY, {**headers, "X-Hub-Signature-256": tampered})
    assert response.status == 401
    assert await stream_length(redis_async) == 0


async def test_a_real_payload_signed_with_githubs_test_secret_is_accepted(
    make_client: MakeClient,
) -> None:
    client = await make_client(secret=GITHUB_SECRET)
    response = await send(client, delivery("issues", "opened", secret=GITHUB_SECRET))
    assert response.status == 202


@pytest.mark.parametrize(
    "signature",
    [
        None,
        "",
        "sha256=" + "0" * 64,
        "sha1=" + "0" * 40,
        "sha256=nothex",
        sign("another secret", b"{}"),
    ],
    ids=["missing", "empty", "wrong-digest", "sha1-only", "not-hex", "other-secret"],
)
async def test_a_missing_or_wrong_signature_is_401_and_nothing_is_stored(
    client: Client, redis_async: redis.asyncio.Redis, metrics: Metrics, signature: str | None
) -> None:
    d = delivery("issues", "opened")
    headers = {k: v for k, v in d.headers.items() if not k.startswith("X-Hub-Signature")}
    if signature is not None:
        headers["X-Hub-Signature-256"] = signature
    response = await post(client, d.body, headers)
    assert response.status == 401
    assert (await response.json())["status"] == "bad_signature"
    assert await stream_length(redis_async) == 0
    assert metrics.deliveries.labels("unverified", "bad_signature")._value.get() == 1


async def test_a_body_signed_then_changed_is_401(
    client: Client, redis_async: redis.asyncio.Redis
) -> None:
    d = delivery("issues", "opened")
    response = await post(client, d.body.replace(b"opened", b"closed", 1), d.headers)
    assert response.status == 401
    assert await stream_length(redis_async) == 0


async def test_a_body_over_the_cap_is_413_and_not_stored(
    make_client: MakeClient, redis_async: redis.asyncio.Redis, metrics: Metrics
) -> None:
    client = await make_client(max_body=4096)
    d = delivery("issues", "opened")
    assert len(d.body) > 4096
    response = await send(client, d)
    assert response.status == 413
    assert (await response.json())["status"] == "too_large"
    assert await stream_length(redis_async) == 0
    assert metrics.deliveries.labels("unverified", "too_large")._value.get() == 1


async def test_a_chunked_body_over_the_cap_is_413(
    make_client: MakeClient, redis_async: redis.asyncio.Redis
) -> None:
    """No Content-Length to judge by: the cap applies while reading."""
    client = await make_client(max_body=4096)
    d = delivery("issues", "opened")

    async def chunks():  # type: ignore[no-untyped-def]
        for start in range(0, len(d.body), 1024):
            yield d.body[start:start + 1024]

    response = await post(client, chunks(), d.headers)  # type: ignore[arg-type]
    assert response.status == 413
    assert await stream_length(redis_async) == 0


async def test_the_default_cap_is_githubs_25_mb_and_is_judged_before_reading(
    make_client: MakeClient,
) -> None:
    """A request announcing 25 MB + 1 byte is refused at once, before its body is sent."""
    client = await make_client(max_body=DEFAULT_MAX_BODY)
    assert DEFAULT_MAX_BODY == 25 * 1024 * 1024
    host, port = client.server.host, client.server.port
    assert port is not None
    reader, writer = await asyncio.open_connection(host, port)
    writer.write(
        b"POST /webhook HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        + f"Content-Length: {DEFAULT_MAX_BODY + 1}\r\n\r\n".encode()
    )
    await writer.drain()
    status_line = await asyncio.wait_for(reader.readline(), 5)
    writer.close()
    assert status_line.split()[1] == b"413"


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (b'{"action": "opened"', "not valid JSON"),
        (b"", "not valid JSON"),
        (b"\xff\xfe{}", "not valid JSON"),
        (b"[1, 2, 3]", "a list, not an object"),
        (b'"opened"', "a str, not an object"),
        (b"null", "a NoneType, not an object"),
    ],
    ids=["truncated", "empty", "bad-utf8", "array", "string", "null"],
)
async def test_a_signed_body_that_is_not_a_json_object_is_400(
    client: Client, redis_async: redis.asyncio.Redis, body: bytes, expected: str
) -> None:
    headers = {**headers_for(), **signature_headers(body, SECRET)}
    response = await post(client, body, headers)
    assert response.status == 400
    answer = await response.json()
    assert answer["status"] == "malformed"
    assert expected in answer["detail"]
    assert await stream_length(redis_async) == 0


@pytest.mark.parametrize("header", ["X-GitHub-Event", "X-GitHub-Delivery"])
async def test_a_missing_github_header_is_400_naming_it(
    client: Client, redis_async: redis.asyncio.Redis, header: str
) -> None:
    d = delivery("issues", "opened")
    headers = {k: v for k, v in d.headers.items() if k != header}
    response = await post(client, d.body, headers)
    assert response.status == 400
    assert header in (await response.json())["detail"]
    assert await stream_length(redis_async) == 0


async def test_an_unprintable_delivery_id_is_400(
    client: Client, redis_async: redis.asyncio.Redis
) -> None:
    d = delivery("issues", "opened")
    response = await post(client, d.body, {**d.headers, "X-GitHub-Delivery": "x" * 200})
    assert response.status == 400
    assert await stream_length(redis_async) == 0


async def test_ping_is_answered_200_and_not_stored(
    client: Client, redis_async: redis.asyncio.Redis, metrics: Metrics
) -> None:
    response = await send(client, delivery("ping", "payload.json"))
    assert response.status == 200
    assert (await response.json())["status"] == "pong"
    assert await stream_length(redis_async) == 0
    assert metrics.deliveries.labels("ping", "ping")._value.get() == 1


@pytest.mark.parametrize(("event", "example"), [("deployment_status", "payload.json"),
                                                ("status", "payload.json"),
                                                ("star", None)])
async def test_an_event_questbot_does_not_subscribe_to_is_202_ignored_and_not_stored(
    client: Client, redis_async: redis.asyncio.Redis, event: str, example: str | None
) -> None:
    if example is None:
        d = build_delivery(event, {"action": "created", "starred_at": None}, SECRET)
    else:
        d = delivery(event, example)
    response = await send(client, d)
    assert response.status == 202
    answer = await response.json()
    assert answer["status"] == "ignored"
    assert event in answer["detail"]
    assert await stream_length(redis_async) == 0


async def test_a_redelivery_is_absorbed_with_one_stream_entry(
    client: Client, redis_async: redis.asyncio.Redis, metrics: Metrics
) -> None:
    d = delivery("issue_comment", "created", comment_body="/approve")
    first = await send(client, d)
    again = await send(client, d)
    assert (first.status, again.status) == (202, 200)
    assert (await again.json())["status"] == "duplicate"
    assert await stream_length(redis_async) == 1
    assert metrics.deliveries.labels("issue_comment", "duplicate")._value.get() == 1


async def test_every_example_payload_is_accepted_without_a_5xx(
    client: Client, redis_async: redis.asyncio.Redis
) -> None:
    examples = example_files()
    assert len(examples) > 100
    statuses: Counter[int] = Counter()
    subscribed = 0
    for example in examples:
        d = build_delivery(example.event, example.load(), SECRET)
        response = await send(client, d)
        assert response.status < 500, (example.path, response.status, await response.text())
        expected = 200 if example.event == "ping" else 202
        assert response.status == expected, (example.path, await response.text())
        statuses[response.status] += 1
        subscribed += example.event in SUBSCRIBED_EVENTS
    assert await stream_length(redis_async) == subscribed


async def test_concurrent_deliveries_are_each_stored_exactly_once_in_shared_round_trips(
    client: Client, redis_async: redis.asyncio.Redis, inbound: Inbound, batches: list[int]
) -> None:
    distinct = [delivery("check_run", "completed") for _ in range(200)]
    redelivered = distinct[:50] * 2  # each of these arrives three times in all
    responses = await asyncio.gather(*(send(client, d) for d in distinct + redelivered))
    statuses = Counter(r.status for r in responses)
    assert statuses == {202: 200, 200: 100}
    assert await stream_length(redis_async) == 200
    stored = await inbound.read("test", count=1000, block_ms=None)
    assert sorted(s.delivery_id for s in stored) == sorted(d.id for d in distinct)
    assert {s.body for s in stored} == {d.body for d in distinct}
    assert sum(batches) == 300
    assert len(batches) < 300 and max(batches) > 1  # group commit: shared round trips


async def test_redis_down_is_503_not_a_lie(
    make_client: MakeClient, metrics: Metrics
) -> None:
    dead = redis.asyncio.Redis(port=free_port(), socket_connect_timeout=1)
    client = await make_client(inbound=Inbound(dead), redis=dead)
    response = await send(client, delivery("issues", "opened"))
    assert response.status == 503
    assert (await response.json())["status"] == "unavailable"
    assert metrics.deliveries.labels("issues", "unavailable")._value.get() == 1
    await dead.aclose()


async def test_the_store_recovers_from_a_flushed_script_cache(
    client: Client, redis_async: redis.asyncio.Redis
) -> None:
    assert (await send(client, delivery())).status == 202
    await redis_async.script_flush()
    assert (await send(client, delivery())).status == 202
    assert await stream_length(redis_async) == 2


@pytest.mark.parametrize("secret", ["", "   ", b""])
def test_the_app_refuses_to_exist_without_a_secret(
    redis_async: redis.asyncio.Redis, secret: str | bytes
) -> None:
    with pytest.raises(ValueError, match="GITHUB_WEBHOOK_SECRET"):
        make_app(secret=secret, inbound=Inbound(redis_async), redis=redis_async,
                 metrics=Metrics())


def test_the_subscribed_events_are_the_ones_questbot_acts_on() -> None:
    assert {
        "check_run", "check_suite", "workflow_run", "issues", "issue_comment", "push",
        "pull_request", "pull_request_review", "installation", "installation_repositories",
        "repository",  # the repository's own life: archived, renamed, ... (bot.repository)
    } == SUBSCRIBED_EVENTS


@pytest.mark.parametrize(
    "body",
    [
        b"[" * 5000 + b"]" * 5000,
        b'{"a":' * 2000 + b"1" + b"}" * 2000,
        b'{"n": 1e999999}',
        b'{"n": NaN}',
        b"\xef\xbb\xbf{}",
        b'{"a": 1, "a": 2}',
        b'{"s": "\\ud800"}',
        b"{}" + b" " * 10_000,
        b"{}\x00",
        bytes(range(256)),
    ],
    ids=["deep-array", "deep-object", "huge-number", "nan", "bom", "dup-keys", "lone-surrogate",
         "trailing-space", "nul", "all-bytes"],
)
async def test_odd_signed_bodies_never_get_a_5xx(client: Client, body: bytes) -> None:
    headers = {**headers_for("issues"), **signature_headers(body, SECRET)}
    response = await post(client, body, headers)
    assert response.status in {202, 400}, await response.text()
