"""questbot for a long while: a few hundred quests driven through the whole stack, one after
another, with memory, Redis's size and latency measured at the start and at the end.

The stack is the chaos run's (``scripts/chaos.py --no-faults``), as separate OS processes on
loopback: ``--webs`` web processes (``python -m bot serve``), ``--workers`` workers
(``questbot_testing.chaos.worker``: ``python -m bot worker`` with a fast clock, so the one-minute
watch window passes in two seconds), a ``redis-server`` with AOF, and the fake GitHub as its own
process sending signed webhooks. The agent is the recorded model server
(``questbot_testing.modelserver``, the demo's conversations; its proofs and tool commands in the
sandbox) unless ``--agent scripted``. Each quest gets a fresh repository (under one of
``--owners`` accounts: one installation each, as a deployment has few) holding the demo's
sample, a failing ``tests`` check and a maintainer's ``/approve A``, ``B``, ``C``
(``questbot_testing.chaos.story``), and ends **closed**: the quests end, so what an ended quest
leaves behind is what the soak measures.

``--parallel`` quests are kept in flight until ``--minutes`` have passed (or ``--quests`` have
been started); then the last ones are driven to closed. Every ``--sample`` seconds the RSS of
each web and worker process (``/proc/<pid>/status``) and Redis's ``used_memory`` and key count
are read, and the repositories' keys apart (``repo:{…}``: the soak makes a fresh repository for
every quest, whose keys stay as long as it does; a deployment has few). The workers compact an
ended quest ``--compact-after`` seconds after it ends (30: ``QUESTBOT_COMPACT_AFTER_HOURS`` set
to that on their fast clock), as a deployment does days later, and export its record to a file
of the run's directory ``--export-after`` seconds after that (30: ``QUESTBOT_EXPORT_DIR``,
``QUESTBOT_EXPORT_AFTER_DAYS``), as a deployment does weeks later: an ended quest then keeps
only where its file is in Redis (``--ended-bytes``, 600), so that Redis can be flat while quests
keep ending, not only once they stop. The run is cut in three: a
warm-up (``--warmup``, a share of the driving time: the
first imports, connection pools, caches and pymalloc's arenas filling), then the **first
window** and the **last window** (``--window`` of the driving time each, the last ending when
the driving does). Each window's figure is the median of its samples; its latency is that of the
quests whose failing check was sent in it: from the check's webhook to questbot's first write
to GitHub for that repository (p50, p95).

The verdict, printed as problems and in the JSON line (the last line), exit status 1 on any:

* **memory**: the web processes' RSS (summed) and the workers' (summed) may not grow by more
  than ``--rss-tolerance`` (15%) from the first window to the last. Python's RSS moves in steps
  (arenas of 256 KiB, the allocator's free lists, the sandbox's and the model client's buffers),
  a few per cent between two samples of an idle process; 15% of ~100 MB is far more than that
  noise and far less than what a leak of even 50 KB a quest would add over a few hundred;
* **Redis**, without the repositories' keys and the deliveries' seen markers (which expire
  after four days: a deployment's level, a soak's growth; reported apart): ``used_memory`` may
  grow by ``--redis-tolerance`` (15%) of the first window's plus ``--ended-bytes`` (600 once
  exported; 4,096, issue 26's goal for a compacted ended quest, without exports) for every
  quest that ended between the windows, and the keys without an expiry by 15% plus
  ``--ended-keys`` (1: the record or where its file is) a quest;
* **flat**: over the last half of the steady part (from the first quest to the last started,
  ``--parallel`` in flight throughout; the draining after it left out), each of the workers'
  RSS, the web processes' RSS, Redis's ``used_memory`` and its keys without an expiry (both
  without the repositories') has a least-squares slope that adds at most ``--flat-tolerance``
  (5%) of its level over that half, plus for Redis ``--ended-bytes`` and ``--ended-keys`` for
  each quest that ended in it — what an ended quest keeps for good (600 bytes and one key
  once exported; 4 KB with ``--export-after 0``): a deployment's Redis grows by that a
  quest and by nothing else. The JSON line's ``flatness`` holds each figure's start, end,
  slope a minute and per quest ended;
* **quests**: every quest driven reached closed.

Beside the verdict: a census of Redis's keys by family at the steady part's start and end
(``census``: keys, ``MEMORY USAGE`` bytes and what ``used_memory`` grew beyond them, per quest
ended), and the deliveries' seen markers' whole cost, measured by deleting them once the run
is over (``delivery_markers.cost_bytes``): what the judged Redis figure leaves out for them.

    scripts/soak.py                         # ten minutes, 16 in flight, the recorded model
    scripts/soak.py --minutes 3             # the figures in docs/performance.md
    scripts/soak.py --minutes 1 --quests 3 --parallel 3 --agent scripted \
        --compact-after 2 --export-after 2                                 # tests/test_soak.py
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import shutil
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from chaos import APP_ID, SECRET, model_agent, wait_http  # scripts/, run as a script

from bot.journal.keys import compaction_due_key, compaction_export_key
from questbot_testing.chaos.processes import Proc, Redis, Supervisor, python_env
from questbot_testing.chaos.signals import until_signalled
from questbot_testing.chaos.story import Fake, QuestRun, Story, reader_client
from questbot_testing.redis_server import free_port

ROOT = Path(__file__).resolve().parent.parent

CLOSED = "closed"


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--minutes", type=float, default=10.0, help="how long new quests are started")
    p.add_argument("--quests", type=int, help="stop starting quests after this many")
    p.add_argument("--parallel", type=int, default=16, help="quests in flight at once")
    p.add_argument("--owners", type=int, default=48,
                   help="accounts the repositories are spread over (one installation each): "
                        "enough that no installation spends its hour's writes (380 at once, "
                        "then one every 36 s; ~50 a quest) within the run")
    p.add_argument("--webs", type=int, default=1, help="web processes")
    p.add_argument("--workers", type=int, default=2, help="worker processes")
    p.add_argument("--agent", choices=("scripted", "model"), default="model",
                   help="the recorded model server (default) or the demo's scripted agent")
    p.add_argument("--speed", type=float, default=30.0,
                   help="how much faster the workers' clock runs (the watch window is 1 min)")
    p.add_argument("--sample", type=float, default=5.0, metavar="S", help="seconds between samples")
    p.add_argument("--warmup", type=float, default=0.2,
                   help="share of the driving time left out as warm-up")
    p.add_argument("--window", type=float, default=0.2,
                   help="share of the driving time in the first and in the last window")
    p.add_argument("--rss-tolerance", type=float, default=0.15)
    p.add_argument("--redis-tolerance", type=float, default=0.15)
    p.add_argument("--ended-bytes", type=int,
                   help="Redis bytes an ended quest may keep: 600 once exported (where its "
                        "file is), 4096 with --export-after 0 (issue 26: compacted, <= 4 KB)")
    p.add_argument("--ended-keys", type=float, default=1.0,
                   help="Redis keys an ended quest may keep (compacted: one record)")
    p.add_argument("--flat-tolerance", type=float, default=0.05,
                   help="share of its level a figure may grow over the last half (its slope)")
    p.add_argument("--compact-after", type=float, default=30.0, metavar="S",
                   help="real seconds after a quest ends before the workers compact it "
                        "(QUESTBOT_COMPACT_AFTER_HOURS on their fast clock); 0: never")
    p.add_argument("--export-after", type=float, default=30.0, metavar="S",
                   help="real seconds after a quest is compacted before the workers export its "
                        "record to a file of the run's directory (QUESTBOT_EXPORT_DIR, "
                        "QUESTBOT_EXPORT_AFTER_DAYS on their fast clock); 0: never")
    p.add_argument("--timeout", type=float, default=180.0, metavar="S",
                   help="how long the last quests may take to close after the driving ends")
    p.add_argument("--keep", action="store_true", help="keep the run's directory and logs")
    p.add_argument("--tracemalloc", type=float, metavar="S",
                   help="the workers trace their allocations and write a snapshot every S "
                        "seconds into the run's directory (kept): what grows, and where")
    args = p.parse_args(argv)
    if args.compact_after <= 0:
        args.export_after = 0.0  # only a compacted record is exported
    if args.ended_bytes is None:
        args.ended_bytes = EXPORTED_BYTES if args.export_after > 0 else COMPACTED_BYTES
    return args


COMPACTED_BYTES = 4096
"""What a compacted ended quest may keep in Redis: issue 26's goal for its record."""
EXPORTED_BYTES = 600
"""What an exported ended quest may keep in Redis: its snapshot hash holding its version and
where its file is, with its digest (``bot.journal.export``; ~250 bytes with a soak's path)."""


@dataclass
class Sample:
    at: float
    rss: dict[str, int]
    """Process name → resident set size in bytes."""
    used_memory: int
    keys: int
    lasting: int
    """Keys without an expiry: what stays unless something deletes it."""
    repo_lasting: int = 0
    """Of those, the repositories' keys (``repo:{…}:…``): each quest's repository is a fresh
    one in a soak, and its keys (quests, fingerprints, lessons, GitHub record) stay as long as
    the repository does — a deployment's few repositories keep them once, not per quest."""
    repo_bytes: int = 0
    """What those keys take (``MEMORY USAGE``)."""
    markers: int = 0
    """The deliveries' seen markers (``inbound:{…}:seen:<delivery>``, ``bot.runner.inbound``):
    one a webhook, each expiring four days after (a redelivery within GitHub's three is
    answered once). A deployment holds four days of deliveries' worth, a level; a soak of
    minutes only ever adds them, so they are measured apart rather than judged."""
    marker_bytes: int = 0
    marker_cost: int = 0
    """What the markers cost Redis in all: ``markers`` times the cost of one measured at the
    end (``measure_markers``: ``used_memory`` given back when they are deleted), which is
    ``MEMORY USAGE``'s figure plus their entries in the table of expiries and their share of
    the key tables' growth (~60 bytes a marker that no key's figure shows)."""
    due: int = 0
    """Ended quests waiting to be compacted (``compact:{compact}``): whether compaction keeps
    up, a bounded lag, or falls behind while quests keep ending."""
    exporting: int = 0
    """Compacted quests waiting to be exported (``compact:{compact}:export``)."""


@dataclass
class Started:
    repo: str
    at: float
    """When its failing check was sent (the webhook follows at once)."""
    run: QuestRun | None = None
    ended: float | None = None


@dataclass
class Soak:
    samples: list[Sample] = field(default_factory=list)
    quests: list[Started] = field(default_factory=list)
    last_start: float = 0.0
    """When the last quest was started: the steady part of the run (quests kept in flight)
    ends there and the draining of the last ones begins."""


def rss_of(proc: Proc) -> int:
    """The process's resident set size in bytes (0 if it is not running)."""
    if proc.popen is None:
        return 0
    try:
        for line in Path(f"/proc/{proc.popen.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    except OSError:
        return 0
    return 0


async def sample(reader: Any, procs: list[Proc]) -> Sample:
    info = await reader.info("memory")
    space = (await reader.info("keyspace")).get("db0", {"keys": 0, "expires": 0})
    keys, expiring = int(space["keys"]), int(space["expires"])
    repo_keys = [k async for k in reader.scan_iter(match="repo:*", count=1000)]
    async with reader.pipeline(transaction=False) as pipe:
        for k in repo_keys:
            pipe.ttl(k)
            pipe.memory_usage(k)
        answers = await pipe.execute()
    lasting = [(ttl, size) for ttl, size in zip(answers[::2], answers[1::2], strict=True)
               if int(ttl) == -1]
    markers = [k async for k in reader.scan_iter(match="inbound:*:seen:*", count=1000)]
    async with reader.pipeline(transaction=False) as pipe:
        for k in markers:
            pipe.memory_usage(k)
        sizes = await pipe.execute()
    marker_bytes = sum(int(size or 0) for size in sizes)
    return Sample(time.time(), {p.name: rss_of(p) for p in procs},
                  int(info["used_memory"]), keys, keys - expiring, len(lasting),
                  sum(int(size or 0) for _, size in lasting), len(markers), marker_bytes,
                  marker_bytes,  # until ``measure_markers`` knows their whole cost
                  int(await reader.zcard(compaction_due_key())),
                  int(await reader.zcard(compaction_export_key())))


async def sampling(reader: Any, procs: list[Proc], soak: Soak, every: float,
                   stop: asyncio.Event) -> None:
    while not stop.is_set():
        soak.samples.append(await sample(reader, procs))
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), every)


async def drive(args: argparse.Namespace, story: Story, soak: Soak, until: float,
                on_last_start: Any = None) -> None:
    """Keep ``--parallel`` quests in flight, each on a fresh repository, until ``until`` (or
    ``--quests`` started); then wait for the last ones. ``on_last_start``, a coroutine
    function, is awaited once no more quests are started (the steady part's end)."""
    gate = asyncio.Semaphore(args.parallel)
    tasks: list[asyncio.Task[None]] = []

    async def one(started: Started) -> None:
        try:
            started.at = time.time()
            started.run = await story.drive(started.repo)
            started.ended = time.time()
        finally:
            gate.release()

    n = 0
    while time.time() < until and (args.quests is None or n < args.quests):
        await gate.acquire()
        if time.time() >= until:
            gate.release()
            break
        n += 1
        repo = repo_name(n, args.owners)
        await story.setup(repo)
        started = Started(repo, time.time())
        soak.quests.append(started)
        soak.last_start = started.at
        tasks.append(asyncio.create_task(one(started)))
    if on_last_start is not None:
        await on_last_start()
    await asyncio.gather(*tasks)


def key_class(key: str) -> str:
    """``q:{id}:events`` → ``q:*:events``; ``repo:{owner/name}:fp:…`` → ``repo:*:fp``;
    ``inbound:{inbound}:seen:<guid>`` → ``inbound:*:seen``."""
    head, _, rest = key.partition("{")
    if not rest:
        return key.rsplit(":", 1)[0] if key.count(":") > 1 else key
    tag, _, after = rest.partition("}")
    tail = after.split(":")
    # a conversation's trail (``q:{owner/name#12}:…``) is not a quest: counted apart
    star = "*#*" if head == "q:" and "#" in tag else "*"
    return head + star + ":".join(tail if head == "q:" else tail[:2])


async def key_breakdown(reader: Any) -> dict[str, dict[str, int]]:
    """Every key's class → how many keys and bytes (``MEMORY USAGE``): what an ended quest and
    its repository leave behind, for whoever compacts them."""
    found: dict[str, dict[str, int]] = {}
    keys = [k async for k in reader.scan_iter(count=1000)]
    async with reader.pipeline(transaction=False) as pipe:
        for k in keys:
            pipe.memory_usage(k)
            pipe.ttl(k)
        answers = await pipe.execute()
    for k, size, ttl in zip(keys, answers[::2], answers[1::2], strict=True):
        name = k.decode() if isinstance(k, bytes) else str(k)
        row = found.setdefault(key_class(name), {"keys": 0, "bytes": 0, "expiring": 0})
        row["keys"] += 1
        row["bytes"] += int(size or 0)
        row["expiring"] += int(ttl or -1) > 0
    return dict(sorted(found.items(), key=lambda kv: -kv[1]["bytes"]))


@dataclass
class Census:
    """Every key of Redis by family at one moment (``key_breakdown``) with its ``used_memory``."""

    at: float
    used_memory: int
    families: dict[str, dict[str, int]]


async def take_census(reader: Any) -> Census:
    families = await key_breakdown(reader)
    info = await reader.info("memory")
    return Census(time.time(), int(info["used_memory"]), families)


def census_growth(start: Census, end: Census, ended: int, t0: float) -> dict[str, Any]:
    """What each family of keys grew by between two censuses (the steady part's start and
    end) and per quest ended between them, largest first: which keys an ended quest leaves.
    ``unaccounted`` is what ``used_memory`` grew beyond the keys' own ``MEMORY USAGE``: the
    tables of keys and of expiries, the allocator's slack — memory no key's figure shows."""
    rows: dict[str, dict[str, Any]] = {}
    for name in sorted(set(start.families) | set(end.families)):
        a = start.families.get(name, {"keys": 0, "bytes": 0, "expiring": 0})
        b = end.families.get(name, {"keys": 0, "bytes": 0, "expiring": 0})
        dk, db = b["keys"] - a["keys"], b["bytes"] - a["bytes"]
        rows[name] = {"keys": [a["keys"], b["keys"]], "bytes": [a["bytes"], b["bytes"]],
                      "expiring_at_end": b["expiring"],
                      "keys_per_ended_quest": round(dk / ended, 2) if ended else None,
                      "bytes_per_ended_quest": round(db / ended) if ended else None,
                      "_growth": db}
    keyed = sum(r["_growth"] for r in rows.values())
    used = end.used_memory - start.used_memory
    ordered = sorted(rows.items(), key=lambda kv: -abs(kv[1]["_growth"]))
    return {"from_s": round(start.at - t0, 1), "to_s": round(end.at - t0, 1),
            "quests_ended": ended, "used_memory": [start.used_memory, end.used_memory],
            "used_memory_per_ended_quest": round(used / ended) if ended else None,
            "keys_bytes_per_ended_quest": round(keyed / ended) if ended else None,
            "unaccounted_per_ended_quest": round((used - keyed) / ended) if ended else None,
            "families": {k: {f: v for f, v in r.items() if not f.startswith("_")}
                         for k, r in ordered}}


async def measure_markers(reader: Any, soak: Soak) -> None:
    """Once the run is over: delete the deliveries' seen markers and read what ``used_memory``
    gave back once Redis's cron has shrunk its tables (two seconds), the cost of one marker in
    all; every sample's ``marker_cost`` is its markers at that cost (never below their
    ``MEMORY USAGE``). Measured, not guessed: what the judged figure leaves out of Redis for the
    markers is what they take."""
    markers = [k async for k in reader.scan_iter(match="inbound:*:seen:*", count=1000)]
    if not markers:
        return
    before = int((await reader.info("memory"))["used_memory"])
    for at in range(0, len(markers), 1000):
        await reader.delete(*markers[at:at + 1000])
    await asyncio.sleep(2)
    given_back = before - int((await reader.info("memory"))["used_memory"])
    each = given_back / len(markers)
    for s in soak.samples:
        s.marker_cost = max(s.marker_bytes, round(s.markers * each))


def repo_name(n: int, owners: int) -> str:
    """The ``n``-th quest's repository: a fresh one, under one of ``owners`` accounts. The fake
    GitHub installs the App once per account, so the installations (and what a worker keeps
    for each: its token, its pacing) stop growing once
    every account has one — as in a deployment, where installations are few and repositories
    many. One account would hold every write to one installation's pacing (a write a second)."""
    return f"soak{(n - 1) % owners + 1}/sample-{n}"


async def settle(args: argparse.Namespace, reader: Any) -> float | None:
    """After the last quest closed: wait until the workers have compacted every ended quest
    (the due list empty) and, with ``--export-after``, exported every record (the export list
    empty), at most both delays three times over plus a minute; how long it took, ``None`` if
    they did not (or compaction is off). The figures ``at_end`` are then Redis's with nothing
    left to compact or export: what the run's quests keep for good."""
    if args.compact_after <= 0:
        return None
    start = time.time()
    while time.time() < start + 3 * (args.compact_after + args.export_after) + 60:
        if not await reader.zcard(compaction_due_key()) and not (
                args.export_after > 0 and await reader.zcard(compaction_export_key())):
            return round(time.time() - start, 1)
        await asyncio.sleep(1)
    return None


def compact_after_hours(args: argparse.Namespace) -> str:
    """``--compact-after`` real seconds as the workers' setting: hours on their clock, which
    runs ``--speed`` times faster (30 s at 30 times is 0.25 hours, fifteen minutes on their clock;
    never below the setting's least, 0.001)."""
    if args.compact_after <= 0:
        return "0"
    return f"{max(0.001, args.compact_after * args.speed / 3600):.4f}"


def export_settings(args: argparse.Namespace, directory: Path) -> dict[str, str]:
    """``--export-after`` real seconds as the workers' settings: the run's export directory
    and days on their fast clock (30 s at 30 times is 0.0104 days, fifteen minutes on their
    clock; never below the setting's least, 0.0001); nothing when exporting is off."""
    if args.export_after <= 0:
        return {}
    directory.mkdir(exist_ok=True)
    days = max(0.0001, args.export_after * args.speed / 86_400)
    return {"QUESTBOT_EXPORT_DIR": str(directory), "QUESTBOT_EXPORT_AFTER_DAYS": f"{days:.6f}"}


def first_writes(state: dict[str, Any]) -> dict[str, float]:
    """Repository → when questbot first wrote to GitHub about it (the fake's clock)."""
    first: dict[str, float] = {}
    for r in state["requests"]:
        if r["method"] == "GET" or not r["path"].startswith("/repos/"):
            continue
        repo = "/".join(r["path"].split("/")[2:4])
        first[repo] = min(first.get(repo, r["at"]), r["at"])
    return first


def percentile(values: list[float], share: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def window(soak: Soak, start: float, end: float, latency: dict[str, float],
           kinds: dict[str, str]) -> dict[str, Any]:
    """The medians of the samples in ``[start, end]`` and the latency of the quests started
    in it."""
    inside = [s for s in soak.samples if start <= s.at <= end] or [
        min(soak.samples, key=lambda s: abs(s.at - (start + end) / 2))]
    rss = {kind: int(statistics.median(sum(v for name, v in s.rss.items()
                                           if kinds[name] == kind) for s in inside))
           for kind in ("web", "worker")}
    waits = [latency[q.repo] for q in soak.quests if start <= q.at <= end and q.repo in latency]
    p50, p95 = percentile(waits, 0.5), percentile(waits, 0.95)
    return {
        "from_s": round(start - soak.samples[0].at, 1), "to_s": round(end - soak.samples[0].at, 1),
        "samples": len(inside),
        "rss_web_mb": round(rss["web"] / 2**20, 1),
        "rss_worker_mb": round(rss["worker"] / 2**20, 1),
        "redis_used_mb": round(statistics.median(s.used_memory for s in inside) / 2**20, 2),
        "redis_keys": int(statistics.median(s.keys for s in inside)),
        "redis_lasting_keys": int(statistics.median(s.lasting for s in inside)),
        "ended_quests": sum(1 for q in soak.quests if q.ended is not None and q.ended <= end),
        "latency_quests": len(waits),
        "latency_p50_ms": None if p50 is None else round(p50 * 1000),
        "latency_p95_ms": None if p95 is None else round(p95 * 1000),
        "redis_repository_keys": int(statistics.median(s.repo_lasting for s in inside)),
        # judged without the repositories' keys (``Sample.repo_lasting``)
        "_rss": rss, "_used": statistics.median(s.used_memory - s.repo_bytes - s.marker_cost
                                                for s in inside),
        "_keys": statistics.median(s.lasting - s.repo_lasting for s in inside),
    }


def series(soak: Soak, t0: float, t1: float, kinds: dict[str, str],
           points: int = 10) -> list[dict[str, Any]]:
    """The run in ``points`` steps (the sample nearest each): whether growth levels off or
    keeps on."""
    out = []
    for n in range(points + 1):
        at = t0 + (t1 - t0) * n / points
        s = min(soak.samples, key=lambda s: abs(s.at - at))
        out.append({"s": round(s.at - t0), "web_mb": round(sum(
            v for k, v in s.rss.items() if kinds[k] == "web") / 2**20, 1),
            "worker_mb": round(sum(v for k, v in s.rss.items() if kinds[k] == "worker")
                               / 2**20, 1),
            "redis_mb": round(s.used_memory / 2**20, 2), "lasting_keys": s.lasting,
            "ended": sum(1 for q in soak.quests if q.ended is not None and q.ended <= s.at)})
    return out


FIGURES = {
    "rss_worker_mb": ("the workers' memory", "MB"),
    "rss_web_mb": ("the web processes' memory", "MB"),
    "redis_used_mb": ("Redis's used_memory but the repositories' keys and the deliveries' "
                      "seen markers", "MB"),
    "redis_lasting_keys": ("Redis's keys without an expiry but the repositories'", "keys"),
}
"""The figures judged flat. Redis's are taken without the repositories' keys, which a soak
makes afresh for every quest (``Sample.repo_lasting``) and reports apart
(``repository_keys``), and its memory without the deliveries' seen markers, which expire four
days after (``Sample.markers``, reported apart as ``delivery_markers``)."""


def figure(s: Sample, name: str, kinds: dict[str, str]) -> float:
    """One sample's value of one of ``FIGURES``."""
    if name.startswith("rss_"):
        kind = name.split("_")[1]
        return sum(v for k, v in s.rss.items() if kinds[k] == kind) / 2**20
    if name == "redis_used_mb":
        return (s.used_memory - s.repo_bytes - s.marker_cost) / 2**20
    return float(s.lasting - s.repo_lasting)


def slope(points: list[tuple[float, float]]) -> float:
    """The least-squares slope of ``(x, y)`` points (0 for fewer than two distinct x)."""
    if len({x for x, _ in points}) < 2:
        return 0.0
    mx = statistics.fmean(x for x, _ in points)
    my = statistics.fmean(y for _, y in points)
    return (sum((x - mx) * (y - my) for x, y in points)
            / sum((x - mx) ** 2 for x, _ in points))


def flatness(args: argparse.Namespace, soak: Soak, t0: float, t1: float,
             kinds: dict[str, str]) -> dict[str, dict[str, Any]]:
    """Each figure at the start of the steady part (the median of the samples of its first
    ``--window``, after the warm-up), at its end (of its last ``--window``) and its slope over
    its last half, fitted to every sample there. The steady part runs from the first quest to
    the last one started (``Soak.last_start``), ``--parallel`` in flight throughout; the
    draining of the last quests after it is left out, as it would flatten any slope. A leak
    shows as a slope that does not fall to nothing once the warm-up is over, where two
    windows' medians alone could hide it in noise or a step. Flat: the slope over the last
    half adds at most ``--flat-tolerance`` of the figure's level, plus for Redis what the
    quests that ended in that half may keep (``--ended-bytes``, ``--ended-keys`` each)."""
    # a run too short to have a steady part of a few samples (a test's) is taken whole
    end = soak.last_start if soak.last_start - t0 >= 4 * args.sample else t1
    span = end - t0
    half = t0 + span / 2
    inside = [s for s in soak.samples if half <= s.at <= end]
    start_at = t0 + args.warmup * span
    early = [s for s in soak.samples if start_at <= s.at <= start_at + args.window * span] or [
        min(soak.samples, key=lambda s: abs(s.at - start_at))]
    late = [s for s in soak.samples if end - args.window * span <= s.at <= end] or [
        min(soak.samples, key=lambda s: abs(s.at - end))]
    ended = sum(1 for q in soak.quests if q.ended is not None and half <= q.ended <= end)
    out: dict[str, dict[str, Any]] = {}
    for name in FIGURES:
        points = [((s.at - half) / 60, figure(s, name, kinds)) for s in inside]
        per_minute = slope(points)
        # over the half the slope was fitted to and whose ended quests are allowed for: taken
        # on to the end of the draining (``t1``) it charged the half with growth of minutes it
        # allowed no quest for — an eighth more on a machine slow enough to drain for 40 s
        grown = per_minute * (end - half) / 60
        level = statistics.fmean(y for _, y in points) if points else 0.0
        allowed = args.flat_tolerance * level
        if name == "redis_used_mb":
            allowed += args.ended_bytes * ended / 2**20
        elif name == "redis_lasting_keys":
            allowed += args.ended_keys * ended
        out[name] = {
            "start": round(statistics.median(figure(s, name, kinds) for s in early), 2),
            "end": round(statistics.median(figure(s, name, kinds) for s in late), 2),
            "last_half_per_minute": round(per_minute, 3),
            "last_half_growth": round(grown, 3),
            "last_half_growth_share": round(grown / level, 4) if level else None,
            "last_half_per_ended_quest": round(grown / ended, 4) if ended else None,
            "allowed": round(allowed, 3), "flat": grown <= allowed,
        }
    out["last_half"] = {"from_s": round(half - t0, 1), "to_s": round(end - t0, 1),
                        "samples": len(inside), "quests_ended": ended}
    return out


def backlog(soak: Soak, t0: float) -> dict[str, Any]:
    """How many ended quests waited for compaction, and compacted ones for export, over the
    driving: the medians of the first and second half and the most, and when the most was.
    A lag that keeps growing is Redis growing with it (each waiting quest keeps its keys)."""
    inside = [s for s in soak.samples if t0 <= s.at <= (soak.last_start or t0)] or soak.samples
    mid = len(inside) // 2
    out: dict[str, Any] = {}
    for name in ("due", "exporting"):
        values = [getattr(s, name) for s in inside]
        most = max(inside, key=lambda s: getattr(s, name))
        out[name] = {"first_half": statistics.median(values[:mid] or values),
                     "second_half": statistics.median(values[mid:]),
                     "most": getattr(most, name), "most_at_s": round(most.at - t0)}
    return out


def delivery_markers(soak: Soak) -> dict[str, Any]:
    """The deliveries' seen markers at the end, and their share a quest: what a deployment
    holds four days of (``Sample.markers``)."""
    s, n = soak.samples[-1], max(len(soak.quests), 1)
    return {"keys": s.markers, "bytes": s.marker_bytes, "cost_bytes": s.marker_cost,
            "cost_per_marker": round(s.marker_cost / s.markers, 1) if s.markers else None,
            "keys_per_quest": round(s.markers / n, 1),
            "bytes_per_quest": round(s.marker_bytes / n)}


def repository_keys(soak: Soak) -> dict[str, Any]:
    """The repositories' keys without an expiry at the end, and their share a quest: what a
    soak's fresh repository for every quest leaves, apart from the quests'."""
    s, n = soak.samples[-1], max(len(soak.quests), 1)
    return {"keys": s.repo_lasting, "bytes": s.repo_bytes, "repositories": len(soak.quests),
            "keys_per_repository": round(s.repo_lasting / n, 1),
            "bytes_per_repository": round(s.repo_bytes / n)}


def judge(args: argparse.Namespace, first: dict[str, Any],
          last: dict[str, Any]) -> tuple[list[str], dict[str, Any]]:
    """The problems, and the growth figures, between the first and last window."""
    problems: list[str] = []
    growth: dict[str, Any] = {}
    ended = last["ended_quests"] - first["ended_quests"]
    growth["quests_ended_between"] = ended
    for kind in ("web", "worker"):
        a, b = first["_rss"][kind], last["_rss"][kind]
        ratio = b / a - 1 if a else 0.0
        growth[f"rss_{kind}"] = round(ratio, 3)
        # within the tolerance is not flat if it keeps on with every quest: say how much
        growth[f"rss_{kind}_kb_per_ended_quest"] = round((b - a) / 1024 / ended) if ended else None
        if ratio > args.rss_tolerance:
            problems.append(f"the {kind} processes' memory grew {ratio:.0%} "
                            f"({a / 2**20:.0f} → {b / 2**20:.0f} MB), more than "
                            f"{args.rss_tolerance:.0%}")
    used, allowed = last["_used"] - first["_used"], (
        args.redis_tolerance * first["_used"] + args.ended_bytes * ended)
    growth["redis_used_bytes"] = int(used)
    growth["redis_bytes_per_ended_quest"] = round(used / ended) if ended else None
    if used > allowed:
        problems.append(
            f"Redis grew {used / 1024:.0f} KB while {ended} quests ended "
            f"({used / max(ended, 1) / 1024:.1f} KB a quest), more than "
            f"{args.redis_tolerance:.0%} plus {args.ended_bytes / 1024:.0f} KB an ended quest "
            f"({allowed / 1024:.0f} KB): ended quests are not compacted in time")
    keys, allowed_keys = last["_keys"] - first["_keys"], (
        args.redis_tolerance * first["_keys"] + args.ended_keys * ended)
    growth["redis_keys"] = int(keys)
    growth["redis_keys_per_ended_quest"] = round(keys / ended, 1) if ended else None
    if keys > allowed_keys:
        problems.append(f"Redis's keys without an expiry grew by {keys:.0f} while {ended} "
                        f"quests ended, more than {args.redis_tolerance:.0%} plus "
                        f"{args.ended_keys:g} a quest ({allowed_keys:.0f})")
    return problems, growth


async def run(args: argparse.Namespace) -> tuple[dict[str, Any], list[str]]:
    started = time.time()
    workdir = Path(tempfile.mkdtemp(prefix="questbot-soak-"))
    redis = Redis.start(workdir / "redis")
    key = workdir / "app.pem"
    fake_port = free_port()
    web_ports = [free_port() for _ in range(args.webs)]
    fake_url = f"http://127.0.0.1:{fake_port}"
    env = python_env(ROOT, GITHUB_APP_ID=APP_ID, GITHUB_PRIVATE_KEY_PATH=str(key),
                     GITHUB_WEBHOOK_SECRET=SECRET, REDIS_URL=redis.url,
                     GITHUB_API_URL=fake_url, QUESTBOT_CHAOS_LOG_LEVEL="WARNING")
    model_server, model_env = await model_agent(args)
    fake_argv = [sys.executable, "-m", "questbot_testing.fakegithub", "--port", str(fake_port),
                 "--control", "--key-out", str(key), "--webhook-secret", SECRET,
                 "--app-id", APP_ID, "--async-webhooks", "--redeliver-failed"]
    for port in web_ports:
        fake_argv += ["--webhook-url", f"http://127.0.0.1:{port}/webhook"]
    fake_proc = Proc("fake", "fake", fake_argv, python_env(ROOT), workdir / "fake.log")
    webs = [Proc(f"web-{n + 1}", "web", [sys.executable, "-m", "bot", "serve"],
                 {**env, "PORT": str(port)}, workdir / f"web-{n + 1}.log")
            for n, port in enumerate(web_ports)]
    # Every repository a soak can make is named up front: the scripted agent is given the
    # sample's script for each (``QUESTBOT_CHAOS_REPOS``).
    traced: dict[str, str] = {}
    if args.tracemalloc:
        (workdir / "trace").mkdir()
        traced = {"QUESTBOT_CHAOS_TRACEMALLOC": str(workdir / "trace"),
                  "QUESTBOT_CHAOS_TRACEMALLOC_S": str(args.tracemalloc)}
    most = args.quests or 100_000
    repos = ",".join(repo_name(n + 1, args.owners) for n in range(min(most, 5_000)))
    workers = [Proc(f"worker-{n + 1}", "worker",
                    [sys.executable, "-m", "questbot_testing.chaos.worker"],
                    {**env, **model_env, "QUESTBOT_CHAOS_REPOS": repos,
                     "QUESTBOT_CHAOS_EPOCH": str(started),
                     "QUESTBOT_CHAOS_SPEED": str(args.speed),
                     "QUESTBOT_COMPACT_AFTER_HOURS": compact_after_hours(args),
                     **export_settings(args, workdir / "export"),
                     "QUESTBOT_CHAOS_CONSUMER": f"worker-{n + 1}", **traced},
                    workdir / f"worker-{n + 1}.log")
               for n in range(args.workers)]
    supervisor = Supervisor([fake_proc])
    supervisor.start()
    watching = asyncio.create_task(supervisor.watch())
    fake = Fake(fake_url)
    reader = reader_client(redis.url)
    driving_s = args.minutes * 60
    story = Story(fake, reader, started + driving_s + args.timeout)
    soak, stop = Soak(), asyncio.Event()
    notes: list[str] = []
    try:
        await wait_http(f"{fake_url}/_fake/control/state", 20)
        supervisor.procs += [*webs, *workers]
        for proc in (*webs, *workers):
            proc.spawn()
        for port in web_ports:
            await wait_http(f"http://127.0.0.1:{port}/healthz", 30, ok=True)
        measuring = asyncio.create_task(sampling(reader, [*webs, *workers], soak, args.sample,
                                                 stop))
        t0 = time.time()
        censuses: list[Census] = []

        async def census_at_start() -> None:
            await asyncio.sleep(args.warmup * driving_s)
            censuses.append(await take_census(reader))

        early_census = asyncio.create_task(census_at_start())

        async def census_at_end() -> None:
            if early_census.done():
                censuses.append(await take_census(reader))
            else:
                early_census.cancel()

        await drive(args, story, soak, t0 + driving_s, census_at_end)
        t1 = time.time()
        soak.samples.append(await sample(reader, [*webs, *workers]))
        settled = await settle(args, reader)
        soak.samples.append(await sample(reader, [*webs, *workers]))
        stop.set()
        await measuring
        state = await fake.state()
        breakdown = await key_breakdown(reader)
        await measure_markers(reader, soak)
    finally:
        supervisor.stop()
        watching.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await watching
        await fake.close()
        with contextlib.suppress(Exception):
            await reader.aclose()
        redis.stop()
        if model_server is not None:
            await model_server.close()
    files = list((workdir / "export").glob("*.qz"))
    exported_files, exported_bytes = len(files), sum(f.stat().st_size for f in files)
    # The windows are cut from the driving time: from the first quest sent to the last closed.
    span = t1 - t0
    kinds = {p.name: p.kind for p in (*webs, *workers)}
    sent = {q.repo: q.at for q in soak.quests}
    latency = {repo: at - sent[repo] for repo, at in first_writes(state).items() if repo in sent}
    w0 = t0 + args.warmup * span
    first = window(soak, w0, w0 + args.window * span, latency, kinds)
    last = window(soak, t1 - args.window * span, t1, latency, kinds)
    problems, growth = judge(args, first, last)
    flat = flatness(args, soak, t0, t1, kinds)
    for name, (what, unit) in FIGURES.items():
        row = flat[name]
        if not row["flat"]:
            problems.append(f"{what} is not flat: it grew {row['last_half_growth']:g} {unit} "
                            f"over the last half ({row['last_half_per_minute']:g} {unit} a "
                            f"minute), more than the {row['allowed']:g} {unit} allowed")
    steady_census = None
    if len(censuses) == 2:
        a, b = censuses
        steady_census = census_growth(a, b, sum(
            1 for q in soak.quests if q.ended is not None and a.at < q.ended <= b.at), t0)
    runs = [q.run for q in soak.quests]
    stuck = [r for r in runs if r is None or r.state != CLOSED]
    problems += [f"quest of {r.repo} stopped at {r.state}: {r.error}" for r in stuck if r]
    crashes = [(p, e) for p in supervisor.procs for e in p.crashes()]
    problems += [f"{p.name} exited {e.returncode} on its own: {e.cause()}" for p, e in crashes]
    if model_server is not None:
        problems += [f"the model server refused a request: {e}" for e in model_server.errors]
    all_waits = list(latency.values())
    summary = {
        "quests": len(runs), "closed": len(runs) - len(stuck), "agent": args.agent,
        "webs": args.webs, "workers": args.workers, "parallel": args.parallel,
        "driving_s": round(span, 1), "seconds": round(time.time() - started, 1),
        "quests_per_minute": round(len(runs) / span * 60, 1) if span else None,
        "first": {k: v for k, v in first.items() if not k.startswith("_")},
        "last": {k: v for k, v in last.items() if not k.startswith("_")},
        "growth": growth,
        "flatness": flat,
        "flat": all(flat[name]["flat"] for name in FIGURES),
        "repository_keys": repository_keys(soak),
        "delivery_markers": delivery_markers(soak),
        "backlog": backlog(soak, t0),
        "at_end": {"redis_used_mb": round(soak.samples[-1].used_memory / 2**20, 2),
                   "redis_lasting_keys": soak.samples[-1].lasting,
                   "compacted_within_s": settled,
                   "exported_files": exported_files,
                   "exported_bytes": exported_bytes,
                   "quests_ended": sum(1 for q in soak.quests if q.ended is not None)},
        "series": series(soak, t0, t1, kinds),
        "latency_p50_ms": round((percentile(all_waits, 0.5) or 0) * 1000),
        "latency_p95_ms": round((percentile(all_waits, 0.95) or 0) * 1000),
        "api_requests": len(state["requests"]),
        "tolerance": {"rss": args.rss_tolerance, "redis": args.redis_tolerance,
                      "ended_bytes": args.ended_bytes, "ended_keys": args.ended_keys,
                      "flat": args.flat_tolerance},
        "compact_after_s": args.compact_after,
        "export_after_s": args.export_after,
        "keys_at_end": breakdown,
        "census": steady_census,
        "problems": len(problems),
    }
    summary["ok"] = not problems
    if args.keep or args.tracemalloc or crashes:
        notes.append(f"run directory {workdir}")
    else:
        shutil.rmtree(workdir, ignore_errors=True)
    return summary, problems + notes


def readable(summary: dict[str, Any]) -> list[str]:
    """The summary for a person: the two windows side by side."""
    first, last = summary["first"], summary["last"]
    rows = [("web RSS (MB)", "rss_web_mb"), ("worker RSS (MB)", "rss_worker_mb"),
            ("Redis used_memory (MB)", "redis_used_mb"), ("Redis keys", "redis_keys"),
            ("Redis keys without an expiry", "redis_lasting_keys"),
            ("quests ended by then", "ended_quests"),
            ("webhook → first write p50 (ms)", "latency_p50_ms"),
            ("webhook → first write p95 (ms)", "latency_p95_ms")]
    out = [f"{summary['closed']} of {summary['quests']} quests closed in "
           f"{summary['driving_s']} s ({summary['quests_per_minute']} a minute), "
           f"{summary['workers']} workers, {summary['webs']} web, agent {summary['agent']}",
           f"{'':34}{'first window':>14}{'last window':>14}",
           f"{'(seconds into the run)':34}{first['from_s']:>7}-{first['to_s']:<6}"
           f"{last['from_s']:>7}-{last['to_s']:<6}"]
    out += [f"{label:34}{first[key]!s:>14}{last[key]!s:>14}" for label, key in rows]
    out.append("over the run (s: worker MB, Redis MB, quests ended): " + ", ".join(
        f"{p['s']}: {p['worker_mb']:.0f}, {p['redis_mb']:.1f}, {p['ended']}"
        for p in summary["series"]))
    g = summary["growth"]
    out.append(f"per quest ended between the windows: web RSS {g['rss_web_kb_per_ended_quest']} "
               f"KB, worker RSS {g['rss_worker_kb_per_ended_quest']} KB, Redis "
               f"{g['redis_bytes_per_ended_quest']} bytes and {g['redis_keys_per_ended_quest']} "
               "keys without an expiry")
    flat = summary["flatness"]
    out.append(f"steady part, start → end and the slope over its last half "
               f"({flat['last_half']['from_s']}-{flat['last_half']['to_s']} s, "
               f"{flat['last_half']['quests_ended']} quests ended in it):")
    for name, (what, unit) in FIGURES.items():
        row = flat[name]
        out.append(f"  {what:34}{row['start']!s:>9} →{row['end']!s:>9} {unit:5}"
                   f"{row['last_half_per_minute']:+9.3f} a minute, "
                   f"{'flat' if row['flat'] else 'NOT FLAT'} (allowed "
                   f"{row['allowed']:g} over the half, grew {row['last_half_growth']:g})")
    end, repos = summary["at_end"], summary["repository_keys"]
    done = "compacted and exported" if summary["export_after_s"] > 0 else "compacted"
    compacted = (f"every ended quest {done} {end['compacted_within_s']} s after the last "
                 "closed" if end["compacted_within_s"] is not None
                 else f"not every ended quest {done}")
    out.append(f"at the end ({compacted}): Redis used_memory {end['redis_used_mb']} MB, "
               f"{end['redis_lasting_keys']} keys without an expiry, of which "
               f"{repos['keys']} are the {repos['repositories']} repositories' "
               f"({repos['keys_per_repository']} keys, {repos['bytes_per_repository']} bytes "
               "each)")
    lag = summary["backlog"]
    out.append("quests waiting for compaction over the steady part (first half, second half, "
               f"most): {lag['due']['first_half']:g}, {lag['due']['second_half']:g}, "
               f"{lag['due']['most']}; for export: {lag['exporting']['first_half']:g}, "
               f"{lag['exporting']['second_half']:g}, {lag['exporting']['most']}")
    marks = summary["delivery_markers"]
    out.append(f"the deliveries' seen markers (each expiring after four days; not judged): "
               f"{marks['keys']} keys, {marks['bytes'] / 2**20:.2f} MB by MEMORY USAGE, "
               f"{marks['cost_bytes'] / 2**20:.2f} MB given back when deleted at the end "
               f"({marks['cost_per_marker']} bytes each), "
               f"{marks['keys_per_quest']} keys and {marks['bytes_per_quest']} bytes a quest")
    if summary["export_after_s"] > 0:
        out.append(f"exported to files: {end['exported_files']} records, "
                   f"{end['exported_bytes'] / max(end['exported_files'], 1):.0f} bytes each")
    census = summary["census"]
    if census is not None:
        out.append(f"Redis's keys by family over the steady part ({census['from_s']}-"
                   f"{census['to_s']} s, {census['quests_ended']} quests ended): used_memory "
                   f"{census['used_memory_per_ended_quest']} bytes a quest ended, of which the "
                   f"keys' own {census['keys_bytes_per_ended_quest']} and "
                   f"{census['unaccounted_per_ended_quest']} in no key (tables, expiries); "
                   "the families that grew most (keys start → end, a quest ended: keys, bytes):")
        out += [f"  {name:28}{row['keys'][0]:>7} →{row['keys'][1]:>7}"
                f"{row['keys_per_ended_quest']!s:>8}{row['bytes_per_ended_quest']!s:>9}"
                for name, row in list(census["families"].items())[:12]]
    closed = max(summary["closed"], 1)
    out.append("Redis at the end, a closed quest's share of each kind of key "
               "(keys, bytes, share of the keys expiring):")
    out += [f"  {name:28}{row['keys'] / closed:8.1f}{row['bytes'] / closed:10.0f}"
            f"{row['expiring'] / row['keys']:8.0%}"
            for name, row in summary["keys_at_end"].items()]
    return out


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    try:
        summary, lines = asyncio.run(until_signalled(lambda: run(args)))
    except asyncio.CancelledError:
        print("soak: stopped by a signal; every process it started was stopped", file=sys.stderr)
        return 130
    for line in readable(summary):
        print(line)
    for line in lines:
        print(f"- {line}")
    print(json.dumps(summary, sort_keys=True))
    return 0 if summary["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
