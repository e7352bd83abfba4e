"""Fuzzing ``POST /webhook`` end to end: the real app on a real Redis, any body, any headers.

Each example sends one to three requests, a later one sometimes reusing an earlier delivery id.
Bodies are damaged real payloads, arbitrary JSON, arbitrary bytes or past the size cap, sent
with a length or chunked; signatures are right (most of the time, so the checks behind them are
reached), wrong, for another body, malformed or absent; event and delivery headers are real,
odd, long, non-ASCII or missing. The web process must never answer 5xx while Redis is up, and
what it answers must be what its docstring promises, in its order — this test's ``expected``
restates those rules independently — with a delivery stored exactly when it answers 202
``accepted``.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import orjson
import redis.asyncio
from hypothesis import event, given
from hypothesis import strategies as st

from bot.github.signature import sign
from bot.web.app import SUBSCRIBED_EVENTS
from tests.fuzz.budget import fuzz
from tests.fuzz.strategies import deliveries, json_values
from tests.web.conftest import MAX_BODY, SECRET, Client, stream_length

SIGNATURE = "X-Hub-Signature-256"
EVENT = "X-GitHub-Event"
DELIVERY = "X-GitHub-Delivery"


@dataclass(frozen=True)
class Request:
    body: bytes
    headers: dict[str, str]
    chunked: bool


latin1 = st.text(st.characters(min_codepoint=0x20, max_codepoint=0xFF,
                               blacklist_characters="\x7f"), max_size=12)
_payload_bodies = deliveries().map(lambda d: json.dumps(d[1]).encode())
_odd_bodies = st.sampled_from(
    [b"", b"{}", b"[]", b"null", b'{"a": NaN}', b'{"a": 1, "a": 2}', b"[" * 2000 + b"]" * 2000,
     b'{"x": "\xff\xfe"}', b"\xef\xbb\xbf{}", b"x" * (MAX_BODY + 1)])
bodies = st.integers(0, 7).flatmap(lambda n: [
    _payload_bodies, _payload_bodies, _payload_bodies, _payload_bodies,
    json_values.map(lambda value: json.dumps(value, ensure_ascii=False).encode()),
    st.binary(max_size=200), _odd_bodies,
    st.dictionaries(st.text(max_size=8), json_values).map(lambda d: json.dumps(d).encode()),
][n])
_real_events = st.sampled_from(sorted(SUBSCRIBED_EVENTS | {"ping", "status", "member"}))
_odd = latin1 | st.sampled_from(["e" * 129, " ", "\t", "issues é"])


def _mostly(real: st.SearchStrategy[str], odd: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    return st.integers(0, 4).flatmap(lambda n: real if n else odd)


@st.composite
def requests(draw: st.DrawFn, earlier: list[str]) -> Request:
    body = draw(bodies)
    headers: dict[str, str] = {}
    how = draw(st.sampled_from(["right"] * 6 + ["upper", "spaced", "other body", "sha1",
                                                   "garbage", "absent"]))
    digest = sign(SECRET, body)
    headers[SIGNATURE] = {
        "right": digest, "upper": "sha256=" + digest[7:].upper(), "spaced": f"  {digest} ",
        "other body": sign(SECRET, body + b" "), "sha1": "sha1=" + digest[7:47],
        "garbage": draw(latin1), "absent": "",
    }[how]
    if draw(st.integers(0, 9)):
        headers[EVENT] = draw(_mostly(_real_events, _odd))
    if draw(st.integers(0, 9)):
        again = st.sampled_from(earlier) if earlier else st.uuids().map(str)
        headers[DELIVERY] = draw(_mostly(st.uuids().map(str) | again, _odd))
    headers["Content-Type"] = draw(st.sampled_from(
        ["application/json", "application/x-www-form-urlencoded", "text/plain", ""]))
    return Request(body, {k: v for k, v in headers.items() if v}, draw(st.booleans()))


def _plausible(value: str) -> bool:
    return 0 < len(value) <= 128 and value.isascii() and value.isprintable()


def expected(request: Request, stored: set[str]) -> tuple[int, str]:
    """What the web process must answer, from its documented rules."""
    if len(request.body) > MAX_BODY:
        return 413, "too_large"
    signature = request.headers.get(SIGNATURE, "").strip()
    digest = sign(SECRET, request.body)
    if signature[:7] != "sha256=" or signature[7:].lower() != digest[7:]:
        return 401, "bad_signature"
    event = request.headers.get(EVENT, "").strip(" \t")
    delivery = request.headers.get(DELIVERY, "").strip(" \t")
    if not _plausible(event) or not _plausible(delivery):
        return 400, "malformed"
    try:
        payload = orjson.loads(request.body)
    except ValueError:
        return 400, "malformed"
    if not isinstance(payload, dict):
        return 400, "malformed"
    if event == "ping":
        return 200, "pong"
    if event not in SUBSCRIBED_EVENTS:
        return 202, "ignored"
    if delivery in stored:
        return 200, "duplicate"
    stored.add(delivery)
    return 202, "accepted"


async def _chunks(body: bytes) -> AsyncIterator[bytes]:
    for start in range(0, len(body), 64 * 1024):
        yield body[start:start + 64 * 1024]


async def post(client: Client, request: Request) -> tuple[int, Any]:
    data: Any = _chunks(request.body) if request.chunked else request.body
    response = await client.post("/webhook", data=data, headers=request.headers)
    return response.status, await response.json()


@st.composite
def exchanges(draw: st.DrawFn) -> list[Request]:
    sent: list[Request] = []
    for _ in range(draw(st.integers(1, 3))):
        earlier = [r.headers[DELIVERY] for r in sent if DELIVERY in r.headers]
        sent.append(draw(requests(earlier)))
    return sent


@fuzz(150)
@given(exchanges())
async def test_any_request_is_answered_as_documented_never_5xx(
        client: Client, redis_async: redis.asyncio.Redis, sent: list[Request]) -> None:
    await redis_async.flushdb()
    stored: set[str] = set()
    for request in sent:
        before = await stream_length(redis_async)
        status, answer = await post(client, request)
        assert status < 500, (status, answer)
        assert (status, answer["status"]) == expected(request, stored), answer
        event(f"{status} {answer['status']}")
        accepted = answer["status"] == "accepted"
        assert await stream_length(redis_async) == before + accepted


async def test_the_oracle_agrees_on_a_real_delivery(client: Client,
                                                    redis_async: redis.asyncio.Redis) -> None:
    body = b'{"action": "opened"}'
    headers = {SIGNATURE: sign(SECRET, body), EVENT: "issues", DELIVERY: str(uuid.uuid4())}
    request = Request(body, headers, chunked=False)
    stored: set[str] = set()
    assert expected(request, stored) == (202, "accepted")
    assert expected(request, stored) == (200, "duplicate")
    assert await post(client, request) == (202, {"status": "accepted",
                                                 "delivery": headers[DELIVERY]})
