"""A questbot worker for ``scripts/chaos.py``: ``python -m bot worker`` with two test settings.

It builds the same runtime ``python -m bot worker`` builds (``bot.worker.assembly``), from the
same environment, and changes only what the demo and the end-to-end tests change:

* the scripted agent follows the demo's script (``questbot_testing.sample.sample_spec``) for the
  repositories named in ``QUESTBOT_CHAOS_REPOS`` (comma-separated), which hold the sample —
  unless ``QUESTBOT_CHAOS_AGENT=model``: then the model agent runs, at the endpoint the
  ``QUESTBOT_MODEL*`` settings name (``scripts/chaos.py --agent model`` starts the recorded
  model server and sets them), exactly as ``python -m bot worker`` would;
* the worker's clock runs ``QUESTBOT_CHAOS_SPEED`` times faster than real time from the instant
  ``QUESTBOT_CHAOS_EPOCH`` (epoch seconds), so a watch window of minutes passes in seconds.
  Every worker of a run gets the same epoch and speed, so their clocks agree, and a respawned
  worker's clock carries on where the dead one's stood;
* ``QUESTBOT_CHAOS_CONSUMER`` names its consumer in the inbound group, like a supervisor's
  stable process name (``worker.1``): three workers on one host would otherwise share
  ``worker-<hostname>``.
"""

from __future__ import annotations

import asyncio
import contextlib
import faulthandler
import logging
import os
import signal
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime

from bot.agent.model.endpoint import endpoint_from
from bot.observe.logs import configure_logging
from bot.settings.process import load_config
from bot.worker.assembly import start_runtime, start_sandbox
from questbot_testing.sample import sample_spec

log = logging.getLogger("questbot_testing.chaos.worker")


def fast_clock(epoch: float, speed: float) -> Callable[[], datetime]:
    def now() -> datetime:
        real = time.time()
        return datetime.fromtimestamp(epoch + (real - epoch) * speed, UTC)

    return now


def dump_tasks() -> None:
    """``kill -USR1``: where every task of the worker waits, for a quest that stalls."""
    for task in asyncio.all_tasks():
        print(f"--- task {task.get_name()}", file=sys.stderr)
        task.print_stack(limit=12, file=sys.stderr)
    sys.stderr.flush()


async def run() -> None:
    config = load_config()
    repos = [r for r in os.environ.get("QUESTBOT_CHAOS_REPOS", "").split(",") if r]
    model = os.environ.get("QUESTBOT_CHAOS_AGENT") == "model"
    runtime = await start_runtime(
        redis_url=config.redis_url, github_api_url=config.github_api_url,
        app_id=config.github_app_id, private_key=config.github_private_key,
        durable=config.durable_acks,
        scripted_specs=None if model else {r: sample_spec() for r in repos},
        model=endpoint_from(config) if model else None, poll_seconds=0.2)
    worker = runtime.worker
    clock = fast_clock(float(os.environ.get("QUESTBOT_CHAOS_EPOCH", time.time())),
                       float(os.environ.get("QUESTBOT_CHAOS_SPEED", "1")))
    worker.journal.clock = clock
    worker.timers.clock = clock
    worker.intake.ctx.clock = clock
    worker.consumer = os.environ.get("QUESTBOT_CHAOS_CONSUMER", worker.consumer)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    loop.add_signal_handler(signal.SIGUSR1, dump_tasks)
    log.info("chaos worker %s started (pid %d, effect runner %s)", worker.consumer, os.getpid(),
             worker.runner.consumer)
    try:
        await worker.run(stop)
    finally:
        await runtime.close()


def main() -> None:
    config = load_config()
    faulthandler.register(signal.SIGUSR2)
    configure_logging(os.environ.get("QUESTBOT_CHAOS_LOG_LEVEL", "INFO"),
                      secrets=[config.github_webhook_secret.get_secret_value(),
                               config.github_private_key.get_secret_value()])
    start_sandbox(config)
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(run())


if __name__ == "__main__":
    main()
