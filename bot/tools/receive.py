"""``python -m bot receive EVENT FIXTURE.json``: one webhook delivery from a file, as GitHub
would send it — like ``probot receive``.

The fixture's bytes are sent as they are, signed the way GitHub signs (``X-Hub-Signature-256``,
HMAC-SHA256 of the body keyed with ``GITHUB_WEBHOOK_SECRET``, and the legacy SHA-1
``X-Hub-Signature``), with ``X-GitHub-Event: EVENT`` and a fresh ``X-GitHub-Delivery`` GUID
(or ``--delivery-id``, to try a redelivery). GitHub's own example payloads work as they are
(``scripts/try`` prints one: ``python -m questbot_testing.playground payload issues opened``).

* By default the delivery goes to a running web process (``--url``, default
  ``http://127.0.0.1:$PORT/webhook``), which checks it like any other: the answer is printed,
  and the exit status is 0 for a 2xx, 1 otherwise.
* ``--local`` hands it straight to the worker's intake in this process — no web process, no
  inbound stream — with the configuration ``python -m bot worker`` would use (Redis, the App's
  key for the GitHub reads intake makes). What intake did is printed: the events it applied,
  the moves it refused, the replies it queued; a running worker delivers the effects.
  Like the worker it first asks GitHub who the App is (``GET /app``); unlike the worker it
  does not wait for ever: after ``--wait`` seconds (default 20) without an answer it says so
  and exits 2, as it does at once when GitHub refuses the App's key.

The secret is read like every setting (the environment over ``.env``) and never printed.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import aiohttp

from bot import control_chars
from bot.errors import Refused
from bot.github.auth import AuthError
from bot.github.signature import sign

if TYPE_CHECKING:
    from bot.settings.process import Config

USER_AGENT = "questbot-receive"
IDENTITY_PATIENCE_S = 20.0
"""How long ``--local`` waits for ``GET /app``: the worker waits for ever, a command answers
(a few of the worker's back-offs: 0.5 + 1 + 2 + 4 + 8 s)."""


class FixtureError(Refused):
    """The fixture cannot be sent: unreadable, or not a JSON object."""


@dataclass(frozen=True)
class Signed:
    """One delivery: the exact bytes and the headers GitHub would send with them."""

    event: str
    delivery_id: str
    body: bytes
    headers: dict[str, str]

    def payload(self) -> dict[str, Any]:
        data: dict[str, Any] = json.loads(self.body)
        return data


def read_fixture(path: Path) -> bytes:
    """The fixture's bytes, once they are known to be a JSON object."""
    try:
        body = path.read_bytes()
    except OSError as exc:
        raise FixtureError(f"cannot read {path} ({exc.strerror or exc}); give the path of a "
                           "webhook payload file, as GitHub sends it") from None
    try:
        data = json.loads(body)
    except ValueError as exc:
        raise FixtureError(f"{path} is not JSON ({exc}); give a webhook payload file") from None
    if not isinstance(data, dict):
        raise FixtureError(f"{path} holds a JSON {type(data).__name__}, not an object; a "
                           "webhook payload is an object")
    return body


def signed(event: str, body: bytes, secret: str, delivery_id: str | None = None) -> Signed:
    """``body`` signed for ``event`` as GitHub's Hookshot signs it."""
    ident = delivery_id or str(uuid.uuid4())
    sha1 = hmac.new(secret.encode(), body, hashlib.sha1).hexdigest()
    headers = {
        "Content-Type": "application/json",
        "User-Agent": USER_AGENT,
        "X-GitHub-Event": event,
        "X-GitHub-Delivery": ident,
        "X-Hub-Signature-256": sign(secret, body),
        "X-Hub-Signature": f"sha1={sha1}",
    }
    return Signed(event, ident, body, headers)


async def send(url: str, delivery: Signed, *, timeout_s: float = 30.0) -> tuple[int, str]:
    """POST the delivery; the receiver's status and body."""
    async with aiohttp.ClientSession() as session, session.post(
            url, data=delivery.body, headers=delivery.headers,
            timeout=aiohttp.ClientTimeout(total=timeout_s)) as response:
        return response.status, await response.text()


async def run_local(config: Config, delivery: Signed, *,
                    patience: float = IDENTITY_PATIENCE_S) -> list[str]:
    """Hand the delivery to intake as the worker would (its runtime, built from ``config``);
    lines saying what intake did. Raises ``AuthError`` when GitHub refuses the App's key or
    does not say who the App is within ``patience`` seconds."""
    from bot.worker.assembly import start_runtime  # the worker's assembly, only for --local

    runtime = await start_runtime(
        redis_url=config.redis_url, github_api_url=config.github_api_url,
        app_id=config.github_app_id, private_key=config.github_private_key,
        durable=config.durable_acks, app_slug=config.github_app_slug,
        identity_patience=patience)
    try:
        out = await runtime.worker.intake.handle(delivery.event, delivery.payload(),
                                                 delivery.delivery_id)
    finally:
        await runtime.close()
    lines = [f"applied event {a.event_id} to quest {a.quest.id} (now {a.quest.state})"
             + (" — applied before: nothing new" if a.duplicate else "")
             for a in out.applied]
    lines += [f"refused: {r}" for r in out.refused]
    lines.append(f"{out.replies} repl{'y' if out.replies == 1 else 'ies'} queued for the workers")
    if not out.applied and not out.refused:
        lines.insert(0, f"intake read nothing to do in this {delivery.event} delivery")
    return lines


def default_url(values: Mapping[str, str]) -> str:
    port = values.get("PORT") or "8080"
    return f"http://127.0.0.1:{port}/webhook"


def receive(event: str, fixture: Path, *, url: str | None, local: bool,
            delivery_id: str | None, say: Callable[[str], None] = control_chars.say,
            warn: Callable[[str], None] = control_chars.say,
            patience: float | None = None) -> int:
    """The command: 0 when the delivery was accepted (2xx, or handled with ``--local``), 1
    when it was answered otherwise, 2 when it could not be sent at all. What it prints
    quotes the receiver's answer (whatever listens at ``url``) and intake's refusals (a
    comment's words): ``say`` and ``warn`` must make them inert, as
    ``bot.control_chars.say`` does."""
    from bot.settings.process import load_config
    from bot.settings.process.environment import settings_values
    from bot.settings.process.problems import ConfigError

    try:
        body = read_fixture(fixture)
    except FixtureError as exc:
        warn(f"receive: {exc}")
        return 2
    values, _origins, _problems = settings_values()
    if local:
        try:
            config = load_config()
        except ConfigError as exc:
            warn(f"receive: {exc}")
            return 2
        secret = config.github_webhook_secret.get_secret_value()
    else:
        secret = values.get("GITHUB_WEBHOOK_SECRET", "")
        if not secret.strip():
            warn("receive: GITHUB_WEBHOOK_SECRET is not set; set it (or put it in .env) to the "
                 "secret the web process checks signatures with")
            return 2
    delivery = signed(event, body, secret, delivery_id)
    if local:
        try:
            lines = asyncio.run(run_local(
                config, delivery, patience=IDENTITY_PATIENCE_S if patience is None else patience))
        except AuthError as exc:
            warn(f"receive: {exc}")
            return 2
        for line in lines:
            say(line)
        return 0
    target = url or default_url(values)
    try:
        status, answer = asyncio.run(send(target, delivery))
    except (aiohttp.ClientError, OSError, TimeoutError) as exc:
        warn(f"receive: could not send to {target}: {exc or type(exc).__name__}; is "
             "python -m bot serve running there? (or use --local)")
        return 2
    say(f"{event} delivery {delivery.delivery_id} → {target}: {status} {answer.strip()}")
    return 0 if 200 <= status < 300 else 1
