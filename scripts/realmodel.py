"""The demo's story against a real model on a real OpenAI-compatible server, and what it cost.

``scripts/realmodel`` installs the server and the model and starts the server; this runs the
story's first step — the ``tests`` check fails on main, a quest is made and the model agent
researches it — with questbot's real web process and worker, a real Redis and the fake
GitHub, the endpoint taken from the ``QUESTBOT_MODEL*`` settings exactly as the worker takes
them (after ``python -m bot model check`` says what questbot will send it). Between questbot
and the server a counting proxy notes every model request: its stage (from the
``stage: NAME;`` line questbot's first message carries), status, seconds and the tokens the
server reported.

A small model does not fix the bug. What this holds questbot to is how it fails: the quest
must park (or wait for a person) with a reason a person reads, the tokens questbot recorded
must be the tokens the server reported, and nothing may be left running. It prints, per
stage, the requests, tokens (the server's and questbot's), seconds and how the stage ended,
then one JSON line, and exits 1 when one of those does not hold.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import sys
import time
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from aiohttp import ClientSession, ClientTimeout, web

from bot.agent.model.endpoint import endpoint_from
from bot.core import State
from bot.core.events.agent_work import AgentHalted
from bot.core.events.bookkeeping import UsageRecorded
from bot.settings.process.model import ModelConfig
from questbot_testing.redis_server import RedisServer
from questbot_testing.scenario import REPO, setup_repository
from questbot_testing.stack import Stack

STAGE = re.compile(r"stage: (\w+);")
ACTIVE = {State.SENSED, State.TRIAGED, State.RESEARCHING, State.REPRODUCING, State.PATCHING}
"""States in which questbot (not a person) owes the next step."""


@dataclass
class Seen:
    """One model request as the proxy saw it."""

    stage: str
    status: int
    seconds: float
    started: float
    tokens: int


@dataclass
class Proxy:
    """Forwards questbot's model requests to the server and notes each one."""

    upstream: str
    seen: list[Seen] = field(default_factory=list)
    url: str = ""
    _runner: web.AppRunner | None = None

    async def start(self) -> Proxy:
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_route("*", "/{tail:.*}", self._forward)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        self.url = f"http://127.0.0.1:{port}"
        return self

    async def close(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()

    async def _forward(self, request: web.Request) -> web.StreamResponse:
        body = await request.read()
        stage = "other"
        try:
            sent = json.loads(body) if body else {}
            first = next((m.get("content") for m in sent.get("messages", [])
                          if m.get("role") == "user"), "")
            found = STAGE.search(first if isinstance(first, str) else json.dumps(first))
            stage = found[1] if found else "probe"  # model check's and the worker's questions
        except (ValueError, AttributeError):
            pass
        started = time.perf_counter()
        headers = {k: v for k, v in request.headers.items()
                   if k.lower() not in ("host", "content-length")}
        async with ClientSession(timeout=ClientTimeout(total=None)) as session, \
                session.request(request.method, self.upstream + request.path_qs, data=body,
                                headers=headers) as answer:
            data = await answer.read()
            status = answer.status
            kind = answer.headers.get("Content-Type", "application/json")
        tokens = 0
        if request.method == "POST":
            try:
                tokens = int((json.loads(data).get("usage") or {}).get("total_tokens") or 0)
            except (ValueError, AttributeError, TypeError):
                tokens = 0
            self.seen.append(Seen(stage, status, time.perf_counter() - started, started,
                                  tokens))
        return web.Response(body=data, status=status, content_type=kind.split(";")[0])


async def model_check(env: dict[str, str]) -> str:
    """``python -m bot model check``'s words on the endpoint, as an operator runs it (a child
    process, awaited: the proxy it talks through runs in this event loop)."""
    child = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot", "model", "check", env=env,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT)
    out, _ = await asyncio.wait_for(child.communicate(), 600)
    return out.decode(errors="replace").strip()


async def run(upstream: str, timeout: float) -> int:
    proxy = await Proxy(upstream).start()
    env = dict(os.environ) | {"QUESTBOT_MODEL_URL": f"{proxy.url}/v1"}
    print(f"questbot model check (through the counting proxy to {upstream}):")
    print("  " + (await model_check(env)).replace("\n", "\n  "))
    checked = len(proxy.seen)
    config = ModelConfig.model_validate(env)
    endpoint = endpoint_from(config)
    if endpoint is None:
        print("realmodel: QUESTBOT_MODEL is not set", file=sys.stderr)
        return 2
    redis = RedisServer(appendonly=False)
    redis.start()
    stack = await Stack(redis.url, model=endpoint, probe_model=config.model_probe).start()
    started = time.perf_counter()
    failures: list[str] = []
    try:
        main = await setup_repository(stack)
        await stack.fake.fail_check(REPO, main, name="tests")
        deadline = time.monotonic() + timeout
        quest = None
        while time.monotonic() < deadline:
            await asyncio.wait_for(stack.settle(), timeout=max(1, deadline - time.monotonic()))
            quests = await stack.quests(REPO)
            quest = quests[0] if quests else None
            if quest is not None and quest.state not in ACTIVE:
                break
            await asyncio.sleep(1)
        total = time.perf_counter() - started
        if quest is None:
            print("✗ the failing check made no quest", file=sys.stderr)
            return 1
        journal = await stack.runtime.worker.journal.events(quest.id)
        report(proxy.seen[checked:], journal, quest, total, failures)
        comments = [c.body for c in stack.fake.repo(REPO).comments.values()
                    if "questbot:status" in c.body]
        if comments:
            print("\nthe status comment, as a maintainer reads it:\n")
            print("  " + comments[-1].strip().replace("\n", "\n  "))
    finally:
        await stack.stop()
        await proxy.close()
        redis.cleanup()
    for failure in failures:
        print(f"✗ {failure}", file=sys.stderr)
    return 1 if failures else 0


def report(seen: list[Seen], journal: list[Any], quest: Any, total: float,
           failures: list[str]) -> None:
    by_stage: dict[str, list[Seen]] = defaultdict(list)
    for s in seen:
        by_stage[s.stage].append(s)
    recorded: dict[str, int] = defaultdict(int)
    ended: dict[str, str] = {}
    for event in journal:
        if isinstance(event, UsageRecorded):
            recorded[event.stage or "research"] += event.tokens
        elif isinstance(event, AgentHalted):
            ended[event.stage] = f"{event.outcome}: {event.reason}"
    print(f"\nper stage ({len(seen)} model requests in {total:.1f}s):")
    rows = []
    for stage in sorted(set(by_stage) | set(recorded)):
        calls = by_stage.get(stage, [])
        statuses = sorted({c.status for c in calls})
        seconds = (max(c.started + c.seconds for c in calls) - min(c.started for c in calls)
                   if calls else 0.0)
        server_tokens = sum(c.tokens for c in calls)
        how = ended.get(stage, "answered" if stage in recorded else "—")
        rows.append({"stage": stage, "requests": len(calls), "statuses": statuses,
                     "server_tokens": server_tokens, "questbot_tokens": recorded.get(stage, 0),
                     "seconds": round(seconds, 1), "ended": how})
        print(f"  {stage:<10} {len(calls):>3} requests {statuses}  {server_tokens:>6} tokens "
              f"by the server, {recorded.get(stage, 0):>6} recorded by questbot  "
              f"{seconds:6.1f}s  {how}")
    park = quest.park_reason
    print(f"\nthe quest: {quest.state.value}" + (f" — {park}" if park else ""))
    served = sum(r["server_tokens"] for r in rows if r["stage"] != "probe")
    kept = quest.usage_tokens
    if quest.state in ACTIVE:
        failures.append(f"the quest is still {quest.state.value} after the time allowed")
    if quest.state is State.PARKED and not park:
        failures.append("the quest parked with no reason")
    if served != kept:
        failures.append(f"the server reported {served} tokens for the quest's stages and the "
                        f"quest recorded {kept}")
    print(json.dumps({"seconds": round(total, 1), "requests": len(seen),
                      "state": quest.state.value, "park_reason": str(park) if park else None,
                      "server_tokens": served, "quest_tokens": kept, "stages": rows}))


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="scripts/realmodel.py", description=__doc__)
    parser.add_argument("--upstream", required=True,
                        help="the real server's base, e.g. http://127.0.0.1:8000")
    parser.add_argument("--timeout", type=float, default=1800,
                        help="seconds the story may take before it is called stuck")
    return parser.parse_args(argv)


if __name__ == "__main__":
    options = parse()
    sys.exit(asyncio.run(run(options.upstream.rstrip("/"), options.timeout)))
