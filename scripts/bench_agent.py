"""The bug set, measured: how far an agent's model takes each bug from its failing check, and what
it cost (issue 25, item 9).

    .venv/bin/python scripts/bench_agent.py                              # the recorded model
    .venv/bin/python scripts/bench_agent.py --bugs off-by-one,flaky-order   # a few, quickly
    OPENAI_API_KEY=… .venv/bin/python scripts/bench_agent.py --url https://api.openai.com/v1 \\
        --model gpt-4.1-mini --api-key-env OPENAI_API_KEY
    .venv/bin/python scripts/bench_agent.py --url http://127.0.0.1:8000/v1 --model qwen2.5-coder \\
        --prices 0,0                                                     # a local server
    ANTHROPIC_API_KEY=… .venv/bin/python scripts/bench_agent.py --protocol anthropic \\
        --url https://api.anthropic.com --model claude-sonnet-4-5 --api-key-env ANTHROPIC_API_KEY

Each bug of ``questbot_testing.bugs`` — a sample repository with a real bug of its own kind —
gets its own repository on the fake GitHub, its check runs for real in the sandbox and fails,
and questbot (its real web process and worker, a real Redis: its own redis-server unless
REDIS_URL is set) makes a quest of it; a scripted maintainer approves checkpoints A, B and C,
and the watch window is waited out (``questbot_testing.bugs.bench``). All bugs run at once on
one stack, as one worker serves many repositories (``--serial``: one at a time).

Without ``--url`` the model is the local model server answering from a careful model's
recorded conversations: a regression test of questbot, in the suite
(``tests/e2e/test_bug_set.py``, ``tests/test_benchmarks.py``), and the exit status is 1 when a
bug ends anywhere but where a maintainer expects. With ``--url`` it is a real endpoint, asked
what it can do first as the worker asks it, and the figures are how a maintainer picks a model:
per bug ``fixed`` (proven, merged at the approved head, watched), ``flaky`` (no agent run),
``parked`` (and why, as GitHub shows it) or ``failed``; tokens and cost from the quest's usage
receipts; the agent's seconds. The key is read from the environment
variable ``--api-key-env`` names, never from the command line.

The last line is a JSON object: ``bugs`` (one object per bug: ``bug``, ``kind``, ``expected``,
``ending``, ``as_expected``, ``why``, ``tokens``, ``cost_usd``, ``stages`` (tokens per
stage), ``seconds`` (the agent's, stage by stage from the quest's journal: ``timing``, with
questbot's proof and landing), ``wall_seconds`` (from the failing check to the ending, shared
with the other bugs), ``github_requests``, ``pull``, ``merged``, …) and ``totals`` (how many
ended each way, ``as_expected``, ``tokens``, ``cost_usd``, ``github_requests``,
``agent_seconds``, ``seconds`` of the whole run), with ``model``, ``protocol`` and
``endpoint``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
from typing import Any

import redis.asyncio

from bot.agent.model import ModelEndpoint, Wire
from questbot_testing.bugs import BUGS, BY_NAME, Bug
from questbot_testing.bugs.bench import (
    RECORDED_MODEL,
    BugRun,
    endpoint,
    recorded_model,
    run_bugs,
    totals,
)
from questbot_testing.modelserver.server import ModelServer
from questbot_testing.redis_server import RedisServer
from questbot_testing.stack import Stack, virtual_pacing


def show(run: BugRun) -> None:
    mark = "✓" if run.as_expected else "✗"
    print(f"{mark} {run.bug:<15} {run.ending:<7} {run.tokens:>7} tokens ${run.cost_usd:.2f} "
          f"agent {run.seconds:5.1f}s (of {run.wall_seconds:5.1f}s)  ({run.kind}; expected "
          f"{run.expected})")
    print(f"    {run.why}")


async def bench(args: argparse.Namespace, bugs: list[Bug]) -> tuple[dict[str, Any], bool]:
    server = None
    url = os.environ.get("REDIS_URL")
    if not url:
        server = RedisServer(appendonly=False)
        server.start()
        url = server.url
    model_server: ModelServer | None = None
    protocol = Wire(args.protocol)
    if args.url is None:
        model_server, model = await recorded_model(protocol, bugs)
        if args.model:
            model = model.model_copy(update={"model": args.model})
    else:
        model = _real(args, protocol)
    try:
        async with redis.asyncio.Redis.from_url(url) as client:
            await client.flushdb()  # a fresh install: no earlier run's quests
        limits, pace_time = virtual_pacing()
        stack = await Stack(url, model=model, limits=limits, pace_time=pace_time,
                            probe_model=args.url is not None).start()
        try:
            started = time.perf_counter()
            runs = await run_bugs(stack, bugs, serial=args.serial, timeout=args.timeout,
                                  say=(lambda line: print(f"  {line}")) if args.verbose
                                  else (lambda line: None))
            seconds = time.perf_counter() - started
            stack.fake.assert_clean()
        finally:
            await stack.stop()
    finally:
        if model_server is not None:
            await model_server.close()
        if server is not None:
            server.cleanup()
    print(f"\n{len(bugs)} bugs, model {model.model} over {protocol.value} at "
          f"{'the recorded model server' if model_server else model.base_url}:")
    for run in runs:
        show(run)
    figures = {"bugs": [run.figures() for run in runs], "totals": totals(runs, seconds),
               "model": model.model, "protocol": protocol.value,
               "endpoint": "recorded" if model_server else model.base_url}
    clean = True
    if model_server is not None:
        clean = all(run.as_expected for run in runs) and not model_server.errors
        for error in model_server.errors:
            print(f"  the recorded model server met an unexpected request: {error}")
    return figures, clean


def _real(args: argparse.Namespace, protocol: Wire) -> ModelEndpoint:
    key = None
    if args.api_key_env:
        key = os.environ.get(args.api_key_env)
        if not key:
            raise SystemExit(f"--api-key-env {args.api_key_env}: that variable is not set")
    prices = None
    if args.prices:
        try:
            given, taken = (float(p) for p in args.prices.split(","))
        except ValueError:
            raise SystemExit(f"--prices {args.prices!r}: give INPUT,OUTPUT in USD per "
                             "million tokens, e.g. 0,0 for a local model") from None
        prices = (given, taken)
    if not args.model:
        raise SystemExit("--url needs --model: the model to ask at that endpoint")
    return endpoint(args.url, args.model, key, protocol, prices)


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--url", help="a real model endpoint (https://…/v1 for openai, the "
                        "host for anthropic); default: the recorded model server")
    parser.add_argument("--model", help=f"the model to ask (default with the recorded server: "
                        f"{RECORDED_MODEL}, whose prices its receipts use)")
    parser.add_argument("--api-key-env", metavar="NAME",
                        help="the environment variable holding the endpoint's key")
    parser.add_argument("--protocol", choices=[w.value for w in Wire], default="openai",
                        help="the endpoint's protocol (default openai)")
    parser.add_argument("--prices", metavar="INPUT,OUTPUT",
                        help="USD per million input and output tokens (0,0 for a local "
                        "model); default the known price tables")
    parser.add_argument("--bugs", help="a comma-separated subset: "
                        + ", ".join(bug.name for bug in BUGS))
    parser.add_argument("--serial", action="store_true",
                        help="one bug at a time, for seconds of its own (default: all at once)")
    parser.add_argument("--timeout", type=float, default=1800.0,
                        help="seconds a run may take before its open bugs count as failed "
                        "(each bug's with --serial; default 1800)")
    parser.add_argument("--verbose", action="store_true", help="say each step as it happens")
    return parser.parse_args(argv)


def main() -> int:
    args = parse()
    names = [n.strip() for n in args.bugs.split(",")] if args.bugs else [b.name for b in BUGS]
    unknown = [n for n in names if n not in BY_NAME]
    if unknown:
        raise SystemExit(f"--bugs: no bug named {', '.join(unknown)} (there are "
                         f"{', '.join(BY_NAME)})")
    figures, clean = asyncio.run(bench(args, [BY_NAME[n] for n in names]))
    t = figures["totals"]
    print(f"\n{t['fixed']} fixed and proven, {t['flaky']} flaky, {t['parked']} parked, "
          f"{t['failed']} failed; {t['as_expected']} of {t['bugs']} where a maintainer expects; "
          f"{t['tokens']} tokens, ${t['cost_usd']:.2f}, {t['seconds']:.1f}s")
    print(json.dumps(figures))
    return 0 if clean else 1


if __name__ == "__main__":
    sys.exit(main())
