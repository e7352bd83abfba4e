"""``scripts/soak.py`` end to end, in short: a few quests through the whole stack (separate web
and worker processes, the fake GitHub sending webhooks, a real Redis), each to closed,
compacted and exported to a file, and the figures the soak reports at the start and the end
with its flatness verdict — never how big or fast they were, which the soak itself judges
over minutes (``docs/performance.md``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_a_short_soak_closes_its_quests_compacts_them_and_reports_flatness() -> None:
    env = {k: v for k, v in os.environ.items() if k != "REDIS_URL"}
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "soak.py"), "--minutes", "1", "--quests", "3",
         "--parallel", "3", "--sample", "1", "--agent", "scripted", "--timeout", "90",
         "--compact-after", "2", "--export-after", "2"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300, check=False)
    lines = done.stdout.strip().splitlines()
    assert lines, done.stderr[-3000:]
    figures = json.loads(lines[-1])
    assert figures["quests"] == figures["closed"] == 3, done.stdout[-3000:]
    for window in ("first", "last"):
        seen = figures[window]
        assert seen["samples"] >= 1
        assert seen["rss_web_mb"] > 10 and seen["rss_worker_mb"] > 10
        assert seen["redis_used_mb"] > 0 and seen["redis_keys"] > 0
    assert figures["last"]["ended_quests"] == 3
    assert 0 < figures["latency_p50_ms"] <= figures["latency_p95_ms"]
    # each figure judged flat or not, from its start and end over the steady part and the
    # slope of its last half
    flatness = figures["flatness"]
    for name in ("rss_worker_mb", "rss_web_mb", "redis_used_mb", "redis_lasting_keys"):
        row = flatness[name]
        assert row["start"] > 0 and row["end"] > 0, row
        assert isinstance(row["flat"], bool) and isinstance(row["last_half_per_minute"], float)
    assert figures["flat"] == all(flatness[n]["flat"] for n in flatness if n != "last_half")
    # the workers compacted every quest within the run (QUESTBOT_COMPACT_AFTER_HOURS as a
    # fraction, on their fast clock): each keeps its snapshot hash with the record, and none
    # its journal; the repositories' keys are counted apart
    assert figures["at_end"]["compacted_within_s"] is not None, done.stdout[-3000:]
    kinds = figures["keys_at_end"]
    assert kinds["q:*:snap"]["keys"] == 3
    assert "q:*:events" not in kinds and "q:*:evidence" not in kinds, kinds
    # and exported each record to a file of the run (QUESTBOT_EXPORT_DIR, its days as a
    # fraction): Redis keeps where the file is, a few hundred bytes a quest
    assert figures["at_end"]["exported_files"] == 3, done.stdout[-3000:]
    assert kinds["q:*:snap"]["bytes"] <= 3 * 600, kinds["q:*:snap"]
    # how many quests waited for compaction and export is reported
    assert figures["backlog"]["due"]["most"] >= 0 and "exporting" in figures["backlog"]
    # the deliveries' seen markers (expiring after four days) are counted apart, not judged
    assert 0 < figures["delivery_markers"]["keys"] <= kinds["inbound:*:seen"]["keys"]
    # and what they cost in all, measured by deleting them once the run is over, is at least
    # what MEMORY USAGE shows of them (their expiries and the tables are not in that figure)
    markers = figures["delivery_markers"]
    assert markers["cost_bytes"] >= markers["bytes"] > 0, markers
    assert "census" in figures  # the steady part's census of keys (too short a run for one)
    assert figures["repository_keys"]["repositories"] == 3
    assert figures["repository_keys"]["keys"] >= 3
    # The verdict is the soak's: over so short a run only the quests and the processes are
    # held here; the exit status follows the problems it printed.
    problems = [line for line in lines if line.startswith("- ")]
    assert not any("stopped at" in p or "exited" in p for p in problems), problems
    assert (done.returncode == 0) == figures["ok"] == (figures["problems"] == 0)
