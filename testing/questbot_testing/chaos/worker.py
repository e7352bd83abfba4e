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
* ended quests are compacted ``QUESTBOT_COMPACT_AFTER_HOURS`` after they end on that clock,
  as ``python -m bot worker`` compacts them, the sweep passing every minute or every half of
  that delay in real time if it is shorter (a soak sets a fraction of an hour);
* ``QUESTBOT_CHAOS_CONSUMER`` names its consumer in the inbound group, like a supervisor's
  stable process name (``worker.1``): three workers on one host would otherwise share
  ``worker-<hostname>``;
* ``QUESTBOT_CHAOS_TRACEMALLOC`` (a directory) makes it trace its allocations
  (``tracemalloc``, ``QUESTBOT_CHAOS_TRACEMALLOC_FRAMES`` frames (1: ten slow a worker
  fivefold), from the first tick on) and, every
  ``QUESTBOT_CHAOS_TRACEMALLOC_S`` seconds (30), write a snapshot there with a count of live
  objects by type: how ``scripts/soak.py --tracemalloc`` finds what a worker keeps from one
  quest to the next.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import faulthandler
import logging
import os
import signal
import sys
import time
import tracemalloc
from collections import Counter
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from bot.agent.model.endpoint import endpoint_from
from bot.observe.logs import configure_logging
from bot.settings.process import load_config
from bot.worker.assembly import start_runtime, start_sandbox
from bot.worker.compaction_sweep import POLL_S, CompactionSweep
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


class _Mallinfo2(ctypes.Structure):
    _fields_ = [(f, ctypes.c_size_t) for f in (
        "arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks",
        "fordblks", "keepcost")]


def malloc() -> dict[str, int]:
    """glibc's own count (``mallinfo2``): bytes the C heap has in use (``uordblks``, which
    ``tracemalloc`` does not see when a library calls ``malloc`` itself: OpenSSL, Rust's
    allocator in pydantic-core) and holds free (``fordblks``: fragmentation); empty elsewhere."""
    try:
        libc = ctypes.CDLL("libc.so.6")
        libc.mallinfo2.restype = _Mallinfo2
    except (OSError, AttributeError):
        return {}
    info = libc.mallinfo2()
    return {"in_use": info.uordblks + info.hblkhd, "free": info.fordblks, "arena": info.arena}


async def tracing(directory: Path, every_s: float, name: str, stop: asyncio.Event) -> None:
    """Every ``every_s``: a ``tracemalloc`` snapshot (``<name>-<n>.snap``) and the live objects
    counted by type (``<name>-<n>.types``, the 60 most numerous), for two of them to be compared
    (``Snapshot.compare_to``): what grew between them, and where it was allocated."""
    import gc

    n = 0
    while not stop.is_set():
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), every_s)
        if not tracemalloc.is_tracing():
            # from the first tick on: the first imports (pydantic-ai's price tables, a module
            # of 20,000 lines) take minutes under tracing, and are no growth
            tracemalloc.start(int(os.environ.get("QUESTBOT_CHAOS_TRACEMALLOC_FRAMES", "1")))
            continue
        n += 1
        gc.collect()
        tracemalloc.take_snapshot().dump(str(directory / f"{name}-{n:03d}.snap"))
        counts = Counter(type(o).__qualname__ for o in gc.get_objects())
        traced, _peak = tracemalloc.get_traced_memory()
        (directory / f"{name}-{n:03d}.types").write_text(
            f"{traced} traced\n" + "".join(f"{v} malloc_{k}\n" for k, v in malloc().items())
            + "".join(f"{c} {t}\n" for t, c in counts.most_common(60)))


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
    speed = float(os.environ.get("QUESTBOT_CHAOS_SPEED", "1"))
    clock = fast_clock(float(os.environ.get("QUESTBOT_CHAOS_EPOCH", time.time())), speed)
    worker.journal.clock = clock
    worker.timers.clock = clock
    worker.intake.ctx.clock = clock
    worker.consumer = os.environ.get("QUESTBOT_CHAOS_CONSUMER", worker.consumer)
    if config.compact_after_hours:  # as ``python -m bot worker`` does, on the fast clock
        after_s = config.compact_after_hours * 3600.0
        worker.compaction = CompactionSweep(
            runtime.redis, after_s, clock=clock, export_dir=config.export_dir,
            export_after_s=config.export_after_days * 86_400.0,
            poll_s=min(POLL_S, max(1.0, after_s / speed / 2)))
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    loop.add_signal_handler(signal.SIGUSR1, dump_tasks)
    traced = os.environ.get("QUESTBOT_CHAOS_TRACEMALLOC")
    probe = None if not traced else asyncio.create_task(tracing(
        Path(traced), float(os.environ.get("QUESTBOT_CHAOS_TRACEMALLOC_S", "30")),
        worker.consumer, stop))
    log.info("chaos worker %s started (pid %d, effect runner %s)", worker.consumer, os.getpid(),
             worker.runner.consumer)
    try:
        await worker.run(stop)
    finally:
        if probe is not None:
            probe.cancel()
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
