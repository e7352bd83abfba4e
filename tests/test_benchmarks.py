"""The benchmark scripts still run and print the figures docs/performance.md quotes.

Smoke runs at tiny sizes: they check that each script works end to end and that its last line
is the JSON object the issues ask for, with sane values — never how fast anything was (speed
is judged by the scripts' own side-by-side ratios, not by timed tests).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from questbot_testing.bugs import BY_NAME
from questbot_testing.modelserver.make_bugs import conversations
from questbot_testing.modelserver.server import ModelServer, recorded

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.slow  # each runs a script whole


def run_bench(script: str, *args: str, timeout: float = 150) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if k != "REDIS_URL"}  # its own redis-server
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / script), *args], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=timeout, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    for logs in re.findall(r"server logs in (\S+)", done.stdout):  # kept for people, not here
        shutil.rmtree(logs, ignore_errors=True)
    figures: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return figures


def test_bench_fold_prints_its_figures() -> None:
    figures = run_bench("bench_fold.py", "--events", "3000", "--rounds", "1")
    assert figures["events"] >= 3000 and figures["effects"] > 1000
    for key in ("events_per_s", "baseline_events_per_s", "events_per_s_gc_paused",
                "events_per_s_reading_every_effect"):
        assert figures[key] > 0, key
    assert abs(figures["ratio"] - figures["events_per_s"] / figures["baseline_events_per_s"]) < 0.01
    assert figures["clock"] == "wall"


def test_bench_fold_times_by_cpu_when_asked() -> None:
    figures = run_bench("bench_fold.py", "--events", "3000", "--rounds", "1", "--clock", "cpu")
    assert figures["clock"] == "cpu" and figures["events_per_s"] > 0
    assert abs(figures["ratio"] - figures["events_per_s"] / figures["baseline_events_per_s"]) < 0.01


def test_bench_webhook_prints_its_figures() -> None:
    figures = run_bench("bench_webhook.py", "--seconds", "0.5", "--warmup", "0.2",
                        "--turns", "1", "--concurrency", "8")
    assert figures["ingest_per_s"] > 0 and figures["bare_per_s"] > 0
    assert abs(figures["ratio"] - figures["ingest_per_s"] / figures["bare_per_s"]) < 0.01
    assert 0 < figures["p50_ms"] <= figures["p99_ms"]
    assert figures["payload_bytes"] > 10_000


def test_bench_journal_prints_its_figures() -> None:
    figures = run_bench("bench_journal.py", "--quick")
    assert figures["apply_per_s"] > 0 and figures["xadd_per_s"] > 0
    assert 0 < figures["ratio"] < 5
    assert figures["bytes_per_quest"] > 0


def test_bench_storage_prints_its_figures() -> None:
    """Issue 26's goal, at a small count: an ended quest keeps at most 4 KB of Redis, and a
    replay of compacted quests is the replay of the originals."""
    figures = run_bench("bench_storage.py", "--quests", "200", timeout=400)
    assert figures["compacted"] == 201 and figures["replay_identical"]
    assert 0 < figures["bytes_per_ended_quest"] <= 4096 < figures["bytes_per_live_quest"]
    assert figures["redis_used_memory_ended"] < figures["redis_used_memory_before"]


def test_bench_github_prints_its_figures() -> None:
    figures = run_bench("bench_github.py", "--files", "300", timeout=400)
    assert figures["files_big"] == 300 and figures["files"] < figures["files_big"]
    assert 0 < figures["requests_to_closed"] <= figures["goal"] == 30
    assert abs(figures["requests_to_closed_big"] - figures["requests_to_closed"]) <= 3
    assert figures["git_requests_to_closed_big"] == figures["git_requests_to_closed"] > 0
    assert figures["checkout_seconds_big"] > 0 and figures["checkout_seconds"] > 0


def test_bench_agent_prints_its_figures() -> None:
    figures = run_bench("bench_agent.py", "--bugs", "off-by-one,flaky-order", timeout=300)
    totals = figures["totals"]
    assert (totals["bugs"], totals["fixed"], totals["flaky"]) == (2, 1, 1)
    assert totals["as_expected"] == 2 and totals["failed"] == 0
    fixed, flaky = figures["bugs"]
    assert fixed["bug"] == "off-by-one" and fixed["ending"] == "fixed" and fixed["merged"]
    assert fixed["tokens"] == totals["tokens"] > 0 and fixed["cost_usd"] > 0
    assert 0 < fixed["seconds"] <= fixed["wall_seconds"]
    assert flaky["ending"] == "flaky" and flaky["tokens"] == 0 and flaky["seconds"] == 0
    assert figures["endpoint"] == "recorded" and figures["model"] == "gpt-4.1-mini"


async def test_bench_agent_takes_an_endpoint_by_url_with_its_key_from_the_environment() -> None:
    """The path a maintainer picking a model takes: ``--url``, ``--model``, the key from the
    variable ``--api-key-env`` names, ``--prices``, and the worker's probe of the endpoint
    first — against a model server that plays an endpoint holding the probe's and one bug's
    conversations, and sees the key arrive on every request."""
    bug = BY_NAME["spec-conflict"]
    names = ["probe-tools", "probe-limit", *conversations(bug)]
    env = {k: v for k, v in os.environ.items() if k != "REDIS_URL"} | {"BENCH_KEY": "sk-bench"}
    async with ModelServer(recorded("openai", *names)) as server:
        process = await asyncio.create_subprocess_exec(
            sys.executable, str(ROOT / "scripts" / "bench_agent.py"), "--url",
            f"{server.url}/v1", "--model", "gpt-4.1-mini", "--api-key-env", "BENCH_KEY",
            "--prices", "0,0", "--bugs", bug.name, cwd=ROOT, env=env,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
        out, err = await asyncio.wait_for(process.communicate(), 300)
        assert process.returncode == 0, err.decode()[-3000:]
        server.assert_clean()
    figures = json.loads(out.decode().strip().splitlines()[-1])
    assert figures["endpoint"] == f"{server.url}/v1" and figures["protocol"] == "openai"
    (run,) = figures["bugs"]
    assert run["ending"] == "parked" and run["as_expected"] and "a person" in run["why"]
    assert run["tokens"] > 0 and run["cost_usd"] == 0  # priced 0,0: a local model
    assert {s.conversation for s in server.served} == set(names)  # probed, then worked
    assert {s.headers.get("Authorization") for s in server.served} == {"Bearer sk-bench"}
