"""The production wiring ``python -m bot serve`` uses: built from the environment's config,
it stores deliveries, counts group-commit batches, and logs the secret nowhere."""

from __future__ import annotations

import io
import logging
import os
import subprocess
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
import redis.asyncio
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from prometheus_client.parser import text_string_to_metric_families

from bot.observe.logs import configure_logging
from bot.settings.process import load_config
from bot.settings.process.problems import ConfigError
from bot.web.app import app_from_config
from questbot_testing.stack import free_port
from tests.web.conftest import SECRET, Client, delivery, send, stream_length

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def key_pem() -> str:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption()).decode()


def environ(redis_url: str, key_pem: str, **more: str) -> dict[str, str]:
    return {"GITHUB_APP_ID": "12345", "GITHUB_PRIVATE_KEY": key_pem,
            "GITHUB_WEBHOOK_SECRET": SECRET, "REDIS_URL": redis_url, **more}


async def test_the_app_from_config_stores_deliveries_and_counts_batches(
    aiohttp_client: Callable[..., Awaitable[Client]],
    redis_async: redis.asyncio.Redis,
    redis_url: str,
    key_pem: str,
) -> None:
    config = load_config(environ(redis_url, key_pem))
    client = await aiohttp_client(app_from_config(config))
    assert (await client.get("/healthz")).status == 200
    d = delivery("push", "payload.json")
    assert (await send(client, d)).status == 202
    assert (await send(client, d)).status == 200
    assert await stream_length(redis_async) == 1
    text = await (await client.get("/metrics")).text()
    batches: dict[str, Any] = {s.name: s.value for f in text_string_to_metric_families(text)
                               for s in f.samples}
    assert batches["questbot_inbound_batch_size_count"] == 2


async def test_the_served_app_leaves_the_collector_thresholds_alone(
    aiohttp_client: Callable[..., Awaitable[Client]], redis_url: str, key_pem: str,
) -> None:
    """A raised young-generation threshold coincided with a half-load p99 of 31-83 ms in every
    bench run; with the defaults most runs are near 10 ms (docs/performance.md)."""
    import gc

    before = gc.get_threshold()
    client = await aiohttp_client(app_from_config(load_config(environ(redis_url, key_pem))))
    assert gc.get_threshold() == before
    await client.close()
    assert gc.get_threshold() == before


def test_without_a_webhook_secret_the_server_cannot_be_configured(
    redis_url: str, key_pem: str
) -> None:
    env = environ(redis_url, key_pem)
    del env["GITHUB_WEBHOOK_SECRET"]
    with pytest.raises(ConfigError, match="GITHUB_WEBHOOK_SECRET is not set"):
        load_config(env)


def test_serve_refuses_a_one_character_secret_at_start(
    redis_url: str, key_pem: str, tmp_path: Path
) -> None:
    """The bug it was: ``GITHUB_WEBHOOK_SECRET=s`` started, and the log redaction then blanked
    every "s" of every line. Now ``serve`` stops before anything starts, in a sentence."""
    done = subprocess.run(
        [sys.executable, "-m", "bot", "serve"], capture_output=True, text=True, timeout=120,
        cwd=tmp_path, check=False,
        env={**environ(redis_url, key_pem, GITHUB_WEBHOOK_SECRET="s", PORT=str(free_port())),
             "PATH": os.environ.get("PATH", "/usr/bin:/bin"), "PYTHONPATH": str(ROOT)})
    assert done.returncode == 2 and done.stdout == ""
    assert "- GITHUB_WEBHOOK_SECRET: is 1 character long; a webhook secret needs at least 16" \
        in done.stderr, done.stderr
    assert "Traceback" not in done.stderr


def test_serve_logging_redacts_the_configured_secrets(redis_url: str, key_pem: str) -> None:
    """What ``run_web`` installs: the webhook secret and the private key never reach a line."""
    config = load_config(environ(redis_url, key_pem))
    stream = io.StringIO()
    root = logging.getLogger()
    level = root.level
    handler = configure_logging(secrets=[config.github_webhook_secret.get_secret_value(),
                                         config.github_private_key.get_secret_value()],
                                stream=stream)
    try:
        logging.getLogger("bot.test").warning("secret %s key %s", SECRET,
                                              config.github_private_key.get_secret_value())
    finally:
        root.removeHandler(handler)
        root.setLevel(level)
    assert SECRET not in stream.getvalue()
    assert "PRIVATE KEY" not in stream.getvalue()
