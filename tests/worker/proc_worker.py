"""A questbot worker process for the deploy tests: ``Worker.run`` as ``python -m bot worker``
assembles it — the production Redis client (``assembly.redis_client``), ``build_worker`` with
its default leases, every loop — with recording adapters in place of GitHub and the agent.

The adapters are idempotent by effect key the way real ones are (check, then write): every
call is counted in ``rec:calls``, the write is made once per key in ``rec:writes``. Effects of
the types named in ``--slow`` first mark ``rec:started:<key>`` and then take ``--seconds``, like
an agent run. ``request_spend`` reports a usage receipt, applied through the journal.

Webhook deliveries go to a recording handler in place of intake (which would ask GitHub): it
counts each in ``rec:intake``, marks ``rec:intake-started:<delivery>``, takes
``--intake-seconds`` and marks the delivery handled in ``rec:handled``.

Usage: python -m tests.worker.proc_worker URL CONSUMER [--slow TYPE,...] [--seconds S]
       [--intake-seconds S]
Prints ``ready`` once its consumer groups exist, then works until killed (or SIGTERM).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import aiohttp
import redis.asyncio

from bot.adapters import AdapterContext, AppIdentity, Plugin, Sync
from bot.core import EVENT_ADAPTER, Effect, EffectType, Event
from bot.github.client import GitHubClients
from bot.github.forge import Forges
from bot.runner import Adapter
from bot.settings.repository.schema import Settings
from bot.worker.assembly import redis_client
from bot.worker.process import build_worker
from questbot_testing.fakegithub.keys import shared_key_pair


class DefaultSettings:
    async def settings(self, repo: str) -> Settings:
        return Settings()


def recording(client: redis.asyncio.Redis, slow: set[str], seconds: float) -> Plugin:
    async def record(effect: Effect) -> Sequence[Event] | None:
        await client.hincrby("rec:calls", effect.key, 1)
        if effect.type.value in slow:
            await client.set(f"rec:started:{effect.key}", os.getpid())
            await asyncio.sleep(seconds)
        await client.hsetnx("rec:writes", effect.key, os.getpid())
        if effect.type is EffectType.REQUEST_SPEND:
            return [EVENT_ADAPTER.validate_python({
                "type": "usage_recorded", "id": f"receipt:{effect.key}",
                "quest_id": effect.quest_id, "at": "2026-01-01T00:00:00Z", "tokens": 1})]
        return None

    def plug(_ctx: AdapterContext) -> tuple[dict[EffectType, Adapter], Sync | None]:
        return dict.fromkeys(EffectType, record), None

    return plug


def recording_intake(client: redis.asyncio.Redis, seconds: float
                     ) -> Callable[[str, dict[str, Any], str], Awaitable[None]]:
    async def handle(_event: str, _payload: dict[str, Any], delivery_id: str) -> None:
        await client.hincrby("rec:intake", delivery_id, 1)
        await client.set(f"rec:intake-started:{delivery_id}", os.getpid())
        await asyncio.sleep(seconds)
        await client.hsetnx("rec:handled", delivery_id, os.getpid())

    return handle


async def main(url: str, consumer: str, slow: set[str], seconds: float,
               intake_seconds: float) -> None:
    client = redis_client(url)
    async with aiohttp.ClientSession() as session:
        clients = GitHubClients(session, client, app_id=1,
                                private_key=shared_key_pair().private_pem,
                                base_url="http://127.0.0.1:9")  # never called
        worker = build_worker(client, Forges(clients), DefaultSettings(),
                              [recording(client, slow, seconds)],
                              app=AppIdentity(id=1, slug="questbot"), durable=False)
        worker.consumer = consumer
        worker.intake.handle = recording_intake(  # type: ignore[method-assign]
            client, intake_seconds)
        worker.runner.consumer = f"runner-{consumer}"
        stop = asyncio.Event()
        asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
        await worker.runner.setup()
        await worker.inbound.ensure_group()
        print("ready", flush=True)
        await worker.run(stop)
    await client.aclose()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("url")
    parser.add_argument("consumer")
    parser.add_argument("--slow", default="")
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--intake-seconds", type=float, default=0.0)
    args = parser.parse_args()
    asyncio.run(main(args.url, args.consumer, {t for t in args.slow.split(",") if t},
                     args.seconds, args.intake_seconds))
