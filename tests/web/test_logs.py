"""Logs are one JSON object a line, carry the delivery and quest they concern, and never a
secret — whichever logger wrote them, in the message, the traceback or the context."""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator
from typing import Any

import pytest

from bot.observe.logs import REDACTED, bind, bind_context, configure_logging, redact, unbind
from tests.web.conftest import SECRET, Client, delivery, post, send

PEM = """-----BEGIN RSA PRIVATE KEY-----
MIIEpAIBAAKCAQEA1c7+9z5Pad7OejecsQ0bu3aozN3tihPmljnnudb9G3HECdnH
lWu2/a1gB9JW5TBQ+AVpum9Okx7KfqkfBKL9mcHgSL0yWMdjMfNOqNtrQqKlN4kE
p6RD++7sGbzbfZ9arwrlD/HSDAWGdGGJTSOBM6pHehyLmSC3DJoR/CTu0vTGTWXQ
-----END RSA PRIVATE KEY-----"""
TOKEN = "ghs_16C7e42F292c6912E7710c838347Ae178B4a"
PAT = "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz"
JWT = "eyJhbGciOiJSUzI1NiJ9.eyJpYXQiOjE3MDAwMDAwMDAsImlzcyI6IjEyMyJ9.c2lnbmF0dXJlc2lnbmF0dXJl"
BEARER = "Bearer abc.def-ghi_jkl012345"


@pytest.fixture
def logs() -> Iterator[io.StringIO]:
    """Root logging as ``python -m bot serve`` sets it up, into a buffer; restored after."""
    root = logging.getLogger()
    level = root.level
    stream = io.StringIO()
    handler = configure_logging(logging.DEBUG, secrets=[SECRET], stream=stream)
    try:
        yield stream
    finally:
        root.removeHandler(handler)
        root.setLevel(level)


def lines(stream: io.StringIO) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stream.getvalue().splitlines()]


def test_each_line_is_a_json_object_with_the_bound_context(logs: io.StringIO) -> None:
    log = logging.getLogger("questbot.test")
    with bind(delivery_id="d-1", event="issues"), bind(quest_id="q-7"):
        log.info("stepped %s", "the quest", extra={"revision": 3})
    log.warning("outside")
    inside, outside = lines(logs)
    assert inside["message"] == "stepped the quest"
    assert (inside["level"], inside["logger"]) == ("info", "questbot.test")
    assert (inside["delivery_id"], inside["quest_id"], inside["event"]) == ("d-1", "q-7", "issues")
    assert inside["revision"] == 3
    assert inside["time"].endswith("+00:00")
    assert "delivery_id" not in outside and outside["level"] == "warning"


def test_bind_context_without_with(logs: io.StringIO) -> None:
    token = bind_context(quest_id="q-1", delivery_id=None)
    logging.getLogger("t").info("x")
    unbind(token)
    logging.getLogger("t").info("y")
    first, second = lines(logs)
    assert first["quest_id"] == "q-1" and "delivery_id" not in first
    assert "quest_id" not in second


def test_no_secret_survives_the_message_the_args_the_context_or_the_traceback(
    logs: io.StringIO,
) -> None:
    log = logging.getLogger("questbot.test")
    log.info("loaded the key %s", PEM)
    log.info("installation token %s expires soon", TOKEN)
    log.info("request headers: {'Authorization': '%s', 'Accept': 'json'}", BEARER)
    log.info("sent %s", BEARER)
    log.info("webhook secret is %s", SECRET)
    log.info("pat=%s jwt %s", PAT, JWT)
    log.info("connecting to redis://:hunter2hunter2@redis.internal:6379/0")
    log.info("config", extra={"private_key": PEM, "webhook_secret": SECRET})
    with bind(delivery_id=TOKEN):
        log.info("bound a token by mistake")
    try:
        raise RuntimeError(f"GitHub refused {TOKEN} with key {PEM}")
    except RuntimeError:
        log.exception("delivery failed")
    text = logs.getvalue()
    for secret in (SECRET, TOKEN, PAT, JWT, "abc.def-ghi_jkl012345", "hunter2hunter2",
                   "MIIEpAIBAAKCAQEA", "BEGIN RSA PRIVATE KEY"):
        assert secret not in text, secret
    assert text.count(REDACTED) >= 10
    parsed = lines(logs)
    assert parsed[-1]["exception"].startswith("Traceback")
    assert "Accept" in parsed[2]["message"]  # only the credential goes


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("token cached until 12:00", "token cached until 12:00"),
        ("rate limit: 4999 remaining", "rate limit: 4999 remaining"),
        ("sha256 of the body differs", "sha256 of the body differs"),
        ("tokens=5", "tokens=5"),
    ],
)
def test_ordinary_text_is_left_alone(text: str, kept: str) -> None:
    assert redact(text) == kept


@pytest.mark.parametrize(
    "text",
    ["password=swordfish", 'client_secret: "abc123"', "Authorization: token ghp_" + "a" * 36,
     "-----BEGIN PRIVATE KEY-----\nMIIB...truncated"],
)
def test_credentials_by_shape(text: str) -> None:
    out = redact(text)
    assert REDACTED in out
    assert "swordfish" not in out and "abc123" not in out and "MIIB" not in out


async def test_the_endpoint_logs_json_with_the_delivery_id_and_no_secret(
    client: Client, logs: io.StringIO
) -> None:
    d = delivery("issues", "opened")
    await send(client, d)
    await send(client, d)  # the redelivery is logged at info
    await post(client, d.body, {**d.headers, "X-Hub-Signature-256": "sha256=" + "0" * 64})
    parsed = lines(logs)
    ours = [line for line in parsed if line["logger"] == "bot.web.app"]
    assert any(line.get("delivery_id") == d.id and "redelivery" in line["message"]
               for line in ours)
    assert any("does not match" in line["message"] for line in ours)
    assert SECRET not in logs.getvalue()


def test_bind_nests_restores_and_never_lets_none_hide_an_outer_value() -> None:
    from bot.observe.logs import current_context

    assert dict(current_context()) == {}
    with bind(delivery_id="d-1", quest_id="q-1"):
        with bind(quest_id=None, event="issues"):
            assert dict(current_context()) == {"delivery_id": "d-1", "quest_id": "q-1",
                                               "event": "issues"}
        assert dict(current_context()) == {"delivery_id": "d-1", "quest_id": "q-1"}
        with pytest.raises(RuntimeError), bind(quest_id="q-2"):
            raise RuntimeError("the context is restored on the way out of an error too")
        assert dict(current_context()) == {"delivery_id": "d-1", "quest_id": "q-1"}
    assert dict(current_context()) == {}
