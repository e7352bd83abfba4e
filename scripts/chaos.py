"""questbot under faults: the whole stack as separate processes, killed and restarted while it
drives quests from a failing check to closed, then judged from what GitHub recorded.

The stack, on loopback: two web processes (``python -m bot serve``), three workers
(``tests/chaos/worker.py``: ``python -m bot worker`` with the demo's scripted agent and a fast
clock), a ``redis-server`` with ``--appendonly yes --appendfsync always`` in a temporary
directory, and the fake GitHub (``python -m questbot_testing.fakegithub``) sending its own webhooks,
asynchronously, to either web process. ``--quests`` repositories each hold the demo's sample;
each gets a failing ``tests`` check and a maintainer's ``/approve A``, ``B``, ``C``
(``tests/chaos/story.py``).

The faults, unless ``--no-faults``: ``kill -9`` of a random worker (four times in five) or web
process every ``--kill-interval`` seconds or so, each respawned at once as a supervisor would, until
``--kills`` kills; Redis killed ``--redis-restarts`` times and restarted on its AOF (every other
time at once, the others after 0.5-2 s away); every webhook sent two or three times, one in five
held back so later ones overtake it; and the fake answering about ``--fault-rate`` of API requests
with a 502, a timeout (the write done, the answer a 502 after ``--fault-hold`` s), a secondary-limit
403 or a 429 (``questbot_testing/fakegithub/faults.py``). Failed webhook deliveries are redelivered,
as the redelivery job GitHub documents would; GitHub itself never does. Onlookers comment without
commands about every ``--chatter`` seconds: ordinary webhook traffic, which the web processes must
store through every restart.

The verdict (``tests/chaos/verdict.py``) comes from the fake's records and Redis: every quest
closed and merged once at its approved head; every write once; no orphaned check run; no
acknowledged delivery lost; no 5xx of questbot's own while Redis was up; no process exiting on
its own. The problems are printed with their evidence; the last line is JSON; the exit status
is 1 if anything was wrong.

The agent is the demo's scripted one unless ``--agent model``: then every worker runs the model
agent against one recorded model server (``questbot_testing/modelserver``, the demo's
conversations), its proofs and tool commands in the bubblewrap sandbox, so a worker killed
mid-conversation must resume or re-run the stage without pushing twice (the verdict counts every
push).

    scripts/chaos.py --no-faults            # a clean run: tells harness bugs from bot bugs
    scripts/chaos.py                        # about a minute: 6 quests, 20 kills, 2 restarts
    scripts/chaos.py --kills 1000 --quests 60 --parallel 6 --timeout 1800   # the long run
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import random
import shutil
import signal
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp

from bot.runner.inbound import Inbound
from questbot_testing.chaos.processes import ClusterRedis, Proc, Redis, Supervisor, python_env
from questbot_testing.chaos.signals import until_signalled
from questbot_testing.chaos.story import Fake, QuestRun, Story, reader_client
from questbot_testing.chaos.verdict import diagnose, judge
from questbot_testing.redis_server import free_port

ROOT = Path(__file__).resolve().parent.parent

SECRET = "chaos-webhook-secret"
DROPPED = ("cannot be handled and is dropped", "moved to the dead letters")
"""What ``bot.worker.process`` logs when it gives up on a stored delivery."""
APP_ID = "4242"


@dataclass
class Chaos:
    """What the fault injector did, for the report."""

    kills: int = 0
    web_kills: int = 0
    redis_restarts: int = 0
    chatter: int = 0
    health: list[tuple[float, float, str, int]] = field(default_factory=list)
    """Each ``/healthz`` probe: sent, answered, web process, status (0: no answer)."""


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quests", type=int, default=6, help="quests in all (one per repository)")
    p.add_argument("--parallel", type=int, help="quests in flight at once (default: all)")
    p.add_argument("--kills", type=int, default=20, help="kill -9s of web and worker processes")
    p.add_argument("--kill-interval", type=float, default=1.0, metavar="S",
                   help="mean seconds between kills")
    p.add_argument("--redis-restarts", type=int, help="default: max(2, kills / 50)")
    p.add_argument("--fault-rate", type=float, default=0.03,
                   help="share of GitHub API requests answered with a fault")
    p.add_argument("--fault-hold", type=float, default=3.0, metavar="S",
                   help="how long a timeout fault holds its answer (GitHub: about 10 s)")
    p.add_argument("--speed", type=float, default=30.0,
                   help="how much faster the workers' clock runs (the watch window is 1 min)")
    p.add_argument("--chatter", type=float, default=1.0, metavar="S",
                   help="mean seconds between comments without a command on quest PRs")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--no-faults", action="store_true", help="a clean run: no faults at all")
    p.add_argument("--timeout", type=float, default=150.0, metavar="S",
                   help="give up on quests that have not closed by then")
    p.add_argument("--cluster", action="store_true",
                   help="a Redis Cluster (3 masters, a replica each); each Redis restart "
                   "becomes a master killed and its replica promoted")
    p.add_argument("--keep", action="store_true", help="keep the run's directory and logs")
    p.add_argument("--agent", choices=("scripted", "model"), default="scripted",
                   help="the demo's scripted agent, or the model agent on the recorded server")
    args = p.parse_args(argv)
    if args.redis_restarts is None:
        args.redis_restarts = max(2, args.kills // 50)
    if args.no_faults:
        args.kills = args.redis_restarts = 0
    return args


def fake_argv(args: argparse.Namespace, port: int, key: Path, hooks: list[str]) -> list[str]:
    argv = [sys.executable, "-m", "questbot_testing.fakegithub", "--port", str(port), "--control",
            "--key-out", str(key), "--webhook-secret", SECRET, "--app-id", APP_ID,
            "--async-webhooks", "--redeliver-failed", "--seed", str(args.seed)]
    for url in hooks:
        argv += ["--webhook-url", url]
    if not args.no_faults:
        argv += ["--copies", "2-3", "--reorder", "0.2", "--faults", str(args.fault_rate),
                 "--fault-hold", str(args.fault_hold)]
    return argv


async def wait_http(url: str, seconds: float, *, ok: bool = False) -> None:
    deadline = time.time() + seconds
    async with aiohttp.ClientSession() as session:
        while time.time() < deadline:
            with contextlib.suppress(aiohttp.ClientError, OSError, TimeoutError):
                async with session.get(url, timeout=aiohttp.ClientTimeout(total=2)) as r:
                    if not ok or r.status == 200:
                        return
            await asyncio.sleep(0.1)
    raise RuntimeError(f"{url} did not answer within {seconds} s")


async def inject(args: argparse.Namespace, rng: random.Random, webs: list[Proc],
                 workers: list[Proc], redis: Redis | ClusterRedis, chaos: Chaos) -> None:
    """Kill processes (and Redis, spread evenly over the kills) until the budget is spent."""
    restart_at = {round((n + 1) * args.kills / (args.redis_restarts + 1))
                  for n in range(args.redis_restarts)}
    while chaos.kills < args.kills:
        await asyncio.sleep(rng.uniform(0.5, 1.5) * args.kill_interval)
        if chaos.kills in restart_at:
            restart_at.discard(chaos.kills)
            # Every other restart is at once, as a supervisor restarts a crashed Redis: then no
            # request meets Redis away, and the first after it meets a closed connection.
            quick = chaos.redis_restarts % 2 == 0
            away = 0.05 if quick else rng.uniform(0.5, 2.0)
            if isinstance(redis, ClusterRedis):  # a master of a random slot fails over
                await redis.crash(away, key=f"q:{{chaos-{rng.randrange(10_000)}}}:snap")
            else:
                await redis.crash(away)
            chaos.redis_restarts += 1
        web = rng.random() < 0.2
        if rng.choice(webs if web else workers).kill():
            chaos.kills += 1
            chaos.web_kills += web


async def probe(webs: dict[str, str], chaos: Chaos, stop: asyncio.Event) -> None:
    """``/healthz`` of the given web processes every half second (status 0: no answer)."""
    async with aiohttp.ClientSession() as session:
        while not stop.is_set():
            for name, url in webs.items():
                status, sent = 0, time.time()
                with contextlib.suppress(aiohttp.ClientError, OSError, TimeoutError):
                    async with session.get(url, timeout=aiohttp.ClientTimeout(total=3)) as r:
                        status = r.status
                chaos.health.append((sent, time.time(), name, status))
            await asyncio.sleep(0.5)


async def drive_all(story: Story, repos: list[str], parallel: int) -> list[QuestRun]:
    gate = asyncio.Semaphore(parallel)

    async def one(n: int, repo: str) -> QuestRun:
        await asyncio.sleep(0.3 * min(n, parallel))
        async with gate:
            return await story.drive(repo)

    return list(await asyncio.gather(*(one(n, r) for n, r in enumerate(repos))))


async def settle(fake: Fake, reader: Any, seconds: float) -> dict[str, Any]:
    """Let the last webhooks, deliveries and projections land: GitHub's view follows the
    journal. A delivery a killed worker held is taken over after the claim idle time (12 s),
    so ``seconds`` must exceed it for "every delivery handled" to be judged fairly."""
    deadline = time.time() + seconds
    while True:
        state = await fake.state()
        busy = state["webhooks"]["in_flight"] or any(
            r["app_slug"] == "questbot" and r["status"] != "completed"
            for repo in state["repositories"].values() for r in repo["check_runs"])
        busy = busy or bool(await Inbound(reader).backlog())
        if not busy or time.time() >= deadline:
            return state
        await asyncio.sleep(0.5)


def health_after_restarts(chaos: Chaos, redis: Redis | ClusterRedis,
                          t0: float) -> list[str]:
    """``/healthz`` probes answered 503 although Redis was up from sending to answer."""
    return [f"{name} /healthz answered 503 at +{sent - t0:.1f} s, redis up from probe to answer"
            for sent, answered, name, status in chaos.health
            if status == 503 and not redis.was_down(sent, answered)]


async def model_agent(args: argparse.Namespace) -> tuple[Any, dict[str, str]]:
    """With ``--agent model``: the recorded model server (in this process: it is stateless, so
    the workers' kills do not touch it) and the settings that point the workers at it."""
    if args.agent != "model":
        return None, {"QUESTBOT_CHAOS_AGENT": "scripted"}
    from questbot_testing.modelserver.demo import demo_model

    server, endpoint = await demo_model()
    return server, {"QUESTBOT_CHAOS_AGENT": "model", "QUESTBOT_MODEL": endpoint.model,
                    "QUESTBOT_MODEL_PROTOCOL": endpoint.wire.value,
                    "QUESTBOT_MODEL_URL": endpoint.base_url,
                    "QUESTBOT_MODEL_API_KEY": (endpoint.api_key.get_secret_value()
                                               if endpoint.api_key else "")}


async def run(args: argparse.Namespace) -> tuple[dict[str, Any], list[str]]:
    started = time.time()
    rng = random.Random(args.seed)
    workdir = Path(tempfile.mkdtemp(prefix="questbot-chaos-"))
    redis: Redis | ClusterRedis = (ClusterRedis if args.cluster else Redis).start(
        workdir / "redis")
    key = workdir / "app.pem"
    fake_port, web_ports = free_port(), [free_port(), free_port()]
    fake_url = f"http://127.0.0.1:{fake_port}"
    hooks = [f"http://127.0.0.1:{p}/webhook" for p in web_ports]
    repos = [f"chaos{n + 1}/sample" for n in range(args.quests)]
    env = python_env(ROOT, GITHUB_APP_ID=APP_ID, GITHUB_PRIVATE_KEY_PATH=str(key),
                     GITHUB_WEBHOOK_SECRET=SECRET, REDIS_URL=redis.url,
                     GITHUB_API_URL=fake_url)
    model_server, model_env = await model_agent(args)
    fake_proc = Proc("fake", "fake", fake_argv(args, fake_port, key, hooks),
                     python_env(ROOT), workdir / "fake.log")
    webs = [Proc(f"web-{n + 1}", "web", [sys.executable, "-m", "bot", "serve"],
                 {**env, "PORT": str(port)}, workdir / f"web-{n + 1}.log")
            for n, port in enumerate(web_ports)]
    workers = [Proc(f"worker-{n + 1}", "worker",
                    [sys.executable, "-m", "questbot_testing.chaos.worker"],
                    {**env, **model_env, "QUESTBOT_CHAOS_REPOS": ",".join(repos),
                     "QUESTBOT_CHAOS_EPOCH": str(started),
                     "QUESTBOT_CHAOS_SPEED": str(args.speed),
                     "QUESTBOT_CHAOS_CONSUMER": f"worker-{n + 1}"}, workdir / f"worker-{n + 1}.log")
               for n in range(3)]
    supervisor = Supervisor([fake_proc])
    supervisor.start()
    watching = asyncio.create_task(supervisor.watch())
    chaos, stop = Chaos(), asyncio.Event()
    fake = Fake(fake_url)
    reader = reader_client(redis.url)
    story = Story(fake, reader, started + args.timeout)
    notes: list[str] = [f"run directory {workdir}"]
    try:
        await wait_http(f"{fake_url}/_fake/control/state", 20)
        for repo in repos:
            await story.setup(repo)
        supervisor.procs += [*webs, *workers]
        for proc in (*webs, *workers):
            proc.spawn()
        for port in web_ports:
            await wait_http(f"http://127.0.0.1:{port}/healthz", 30, ok=True)
        # Only web-1 is probed, as a load balancer would: every probe of a process heals the
        # pooled connection it uses, and web-2 must show what a delivery meets unprobed.
        probing = asyncio.create_task(probe(
            {webs[0].name: f"http://127.0.0.1:{web_ports[0]}/healthz"}, chaos, stop))
        injecting = asyncio.create_task(inject(args, rng, webs, workers, redis, chaos))
        chatting = asyncio.create_task(story.chatter(stop, random.Random(args.seed + 1),
                                                     args.chatter))
        runs = await drive_all(story, repos, args.parallel or args.quests)
        injecting.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await injecting
        await redis.bring_back()
        state = await settle(fake, reader, 25.0)
        (workdir / "github.json").write_text(json.dumps(state))
        verdict = await judge(state, runs, story.bases, reader, redis.outages, started)
        if any(r.state != "closed" for r in runs):
            for worker in workers:  # where each task waits, into the logs (tests/chaos/worker.py)
                worker.signal(signal.SIGUSR1)
            await asyncio.sleep(1.0)
        owners = {runner: (w, spawn) for w in workers
                  for runner, spawn in w.incarnations("effect runner ").items()}
        for run_ in runs:
            if run_.state != "closed":
                found = await diagnose(reader, run_)
                for holder in [found.get("lease") or ""] + [
                        b["consumer"] for b in found.get("doorbells_pending", [])]:
                    runner = holder.split(":")[0]
                    if runner in owners:
                        w, spawn = owners[runner]
                        found.setdefault("holders", {})[runner] = w.fate(spawn, started)
                notes.append(f"quest {run_.quest_id} ({run_.repo}) stopped at {run_.state}: "
                             f"{json.dumps(found)}")
        stop.set()
        await probing
        chaos.chatter = await chatting
    finally:
        supervisor.stop()
        watching.cancel()
        others = asyncio.all_tasks() - {asyncio.current_task()}  # cut short: nothing may go on
        for task in others:
            task.cancel()
        await asyncio.gather(*others, return_exceptions=True)
        await fake.close()
        with contextlib.suppress(Exception):
            await reader.aclose()
        redis.stop()
        if model_server is not None:
            await model_server.close()
    crashes = [(p, e) for p in supervisor.procs for e in p.crashes()]
    problems = list(verdict.problems)
    if model_server is not None:
        problems += [f"the model server refused a request: {e}" for e in model_server.errors]
    dropped = [line for w in workers for line in w.lines_with(DROPPED)]
    problems += [f"a worker dropped an acknowledged delivery: {line[:300]}" for line in dropped]
    problems += health_after_restarts(chaos, redis, started)
    for proc, exit_ in crashes:
        since = [exit_.at - o.down for o in redis.outages if o.down <= exit_.at]
        when = f"{min(since):.1f} s after redis went away" if since else "redis up"
        problems.append(f"{proc.name} exited {exit_.returncode} on its own at "
                        f"+{exit_.at - started:.1f} s ({when}): {exit_.cause()}")
    faults = [f["kind"] for f in state["faults"]]
    attempts = state["webhooks"]["attempts"]
    summary = {
        "quests": len(runs), "quests_ok": verdict.quests_ok, "kills": chaos.kills,
        "web_kills": chaos.web_kills, "redis_restarts": chaos.redis_restarts,
        "cluster": args.cluster,
        "master_failovers": len(redis.failovers) if isinstance(redis, ClusterRedis) else 0,
        "redis_away_s": [round((o.up or o.down) - o.down, 2) for o in redis.outages],
        "duplicate_writes": verdict.duplicate_writes,
        "duplicates": dict(verdict.duplicates), "lost_deliveries": verdict.lost_deliveries,
        "unhandled_deliveries": verdict.unhandled_deliveries,
        "dropped_deliveries": len(dropped),
        "orphaned_check_runs": verdict.orphaned_check_runs, "own_5xx": verdict.own_5xx,
        "healthz_503_with_redis_up": len(health_after_restarts(chaos, redis, started)),
        "crashes": {kind: sum(1 for p, _ in crashes if p.kind == kind)
                    for kind in ("web", "worker", "fake")},
        "violations": verdict.violations,
        "api_requests": len(state["requests"]),
        "api_faults": {k: faults.count(k) for k in sorted(set(faults))},
        "webhooks": len(state["webhooks"]["submitted"]), "webhook_attempts": len(attempts),
        "chatter_comments": chaos.chatter,
        "quest_states": {r.repo: r.state for r in runs}, "seed": args.seed,
        "faults": not args.no_faults, "agent": args.agent,
        "seconds": round(time.time() - started, 1),
        "problems": len(problems),
    }
    if model_server is not None:
        # A stage's conversation starts at turn 1; each quest runs three (research, reproduce,
        # patch), so any turn 1 beyond those is a stage run again after its worker was killed.
        starts = sum(1 for s in model_server.served if s.turn == 1)
        summary |= {"model_requests": len(model_server.served),
                    "stage_reruns": starts - 3 * len(runs)}
    summary["ok"] = (summary["quests_ok"] == summary["quests"] and not problems)
    if summary["ok"] and not args.keep:
        shutil.rmtree(workdir, ignore_errors=True)
        notes = []
    return summary, problems + notes


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    try:
        summary, lines = asyncio.run(until_signalled(lambda: run(args)))
    except asyncio.CancelledError:
        print("chaos: stopped by a signal; every process it started was stopped", file=sys.stderr)
        return 130
    for line in lines:
        print(f"- {line}")
    print(json.dumps(summary, sort_keys=True))
    return 0 if summary["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
