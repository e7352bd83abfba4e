"""Worker processes for the deploy tests, started as a supervisor would and killed as a deploy
or a crash does."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path

import pytest
import redis.asyncio

ROOT = Path(__file__).resolve().parents[2]


class Workers:
    """The worker processes a test started; any still running at the end are killed."""

    def __init__(self) -> None:
        self.procs: list[subprocess.Popen[str]] = []

    def start(self, url: str, consumer: str, *, slow: str = "", seconds: float = 60.0,
              intake_seconds: float = 0.0) -> subprocess.Popen[str]:
        proc = subprocess.Popen(
            [sys.executable, "-m", "tests.worker.proc_worker", url, consumer, "--slow", slow,
             "--seconds", str(seconds), "--intake-seconds", str(intake_seconds)],
            cwd=ROOT, stdout=subprocess.PIPE, text=True)
        self.procs.append(proc)
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "ready", f"worker {consumer} did not start"
        return proc

    def stop_all(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                proc.kill()
            proc.wait()


@pytest.fixture
def workers() -> Iterator[Workers]:
    made = Workers()
    try:
        yield made
    finally:
        made.stop_all()


async def until(check: Callable[[], Awaitable[bool]], *, within: float,
                every: float = 0.05) -> float:
    """Wait until ``check()`` holds; the seconds it took. Fails after ``within`` seconds."""
    started = time.monotonic()
    while not await check():
        if time.monotonic() - started > within:
            raise AssertionError(f"not done within {within:g} s")
        await asyncio.sleep(every)
    return time.monotonic() - started


def text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


async def counts(client: redis.asyncio.Redis, key: str) -> dict[str, int]:
    return {text(k): int(v) for k, v in (await client.hgetall(key)).items()}
