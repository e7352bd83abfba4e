"""questbot end to end on your machine: a failing check becomes a quest, a maintainer approves
it at A, B and C, it lands pinned to the approved SHA, is watched, closes — and a regression
reopens it at revision 2.

Runs the real web process and worker against a real Redis (``REDIS_URL``, or a redis-server of its
own) and a local fake GitHub holding a sample repository with a real bug and the test that catches
it; the agent is the model agent, talking OpenAI chat completions to a local model server that
answers from recorded conversations (``questbot_testing/modelserver``; ``--scripted`` runs the
scripted test agent instead), and the proof runs the sample's own tests. Prints a timeline, the
tokens and cost of each agent stage and the budget left, and exits non-zero if any step did not
happen.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
from collections.abc import Sequence

from bot.agent import sandbox
from bot.core import Event, Quest
from bot.core.rules.budget import allowance
from bot.settings.repository.schema import parse_settings
from bot.words.spend import budget_line
from questbot_testing import playground
from questbot_testing.modelserver.demo import demo_model, spent_by_stage
from questbot_testing.redis_server import RedisServer
from questbot_testing.sample import sample_spec
from questbot_testing.scenario import (
    MAINTAINER,
    READER,
    REPO,
    SETTINGS,
    Line,
    StepFailed,
    Story,
    main_line,
    regression,
)
from questbot_testing.stack import Stack


def show(line: Line) -> None:
    print(f"\n● {line.state} (revision {line.revision})  — {line.seen}  [{line.seconds:.2f}s]")
    for call in line.github:
        print(f"    GitHub: {call}")


async def run(scripted: bool, keep: bool = False) -> int:
    server = None
    url = os.environ.get("REDIS_URL")
    if not url:
        server = RedisServer(appendonly=False)
        server.start()
        url = server.url
    model_server, endpoint = (None, None) if scripted else await demo_model()
    specs = {REPO: sample_spec()} if scripted else None
    stack = await Stack(url, scripted_specs=specs, model=endpoint).start()
    story = Story(stack, say=show)
    to_closed = 0
    closed: dict[str, float] = {}
    started = time.perf_counter()
    try:
        print(f"questbot demo — fake GitHub at {stack.fake.url}, Redis at {url}")
        print("agent: the scripted test agent" if endpoint is None else
              f"agent: the model agent, {endpoint.model} over OpenAI chat completions at "
              f"{endpoint.base_url} (recorded conversations)")
        print(f"repository {REPO}: pager.py drops a partial last page; tests/test_pager.py "
              "catches it")
        await main_line(story)
        first_sign = story.first_sign_seconds()
        to_closed = len(stack.fake.requests)
        spent = dict(stack.runtime.worker.timings.seconds)
        closed = {"seconds": time.perf_counter() - started,
                  "agent_seconds": spent.get("start_agent", 0.0),
                  "proof_seconds": spent.get("run_proof", 0.0),
                  "paced_seconds": stack.runtime.clients.limits.held}
        closed["own_seconds"] = (closed["seconds"] - closed["agent_seconds"]
                                 - closed["proof_seconds"] - closed["paced_seconds"])
        await regression(story)
        stack.fake.assert_clean()
        if model_server is not None:
            model_server.assert_clean()
        journal = await stack.runtime.worker.journal.events(story.quest_id)
        quest = await stack.quest(story.quest_id)
        total = time.perf_counter() - started
        summary(stack, story, journal, quest, closed, to_closed, total, endpoint is None,
                first_sign)
        if keep:
            await playground.keep(stack, url, repo=REPO, maintainer=MAINTAINER, reader=READER,
                                  after_demo=True)
    except (StepFailed, AssertionError) as exc:
        print(f"\n✗ the demo stopped: {exc}", file=sys.stderr)
        return 1
    finally:
        await stack.stop()
        if model_server is not None:
            await model_server.close()
        if server is not None:
            server.cleanup()
    return 0


def summary(stack: Stack, story: Story, journal: Sequence[Event], quest: Quest,
            closed: dict[str, float], to_closed: int, total: float, scripted: bool,
            first_sign: float | None = None) -> None:
    """What the demo did, in time, requests and tokens, and its JSON line. ``first_sign``:
    seconds from the failing check's webhook to questbot's first write to GitHub."""
    requests = len(stack.fake.requests)
    spent = stack.runtime.worker.timings.seconds
    agent = spent.get("start_agent", 0.0)
    proof = spent.get("run_proof", 0.0)
    paced = stack.runtime.clients.limits.held
    own = total - agent - proof - paced
    writes = sum(1 for e in stack.fake.requests if e.method != "GET")
    # nothing of the repository runs unless it can be confined (or an operator opted out)
    sandboxed = sandbox.status().confined
    print(f"\n✓ a failing check went to closed through A, B and C, and a regression reopened "
          f"it at revision 2, in {total:.1f}s with {requests} GitHub requests ({writes} writes).")
    print(f"  time: agent runs {agent:.2f}s, proof runs {proof:.2f}s, pacing writes under "
          f"GitHub's secondary limit {paced:.2f}s, questbot and the fake GitHub {own:.2f}s")
    if first_sign is not None:
        print(f"  the first sign on GitHub came {first_sign:.2f}s after the failing check's "
              "webhook")
    print(f"  from the failing check to closed: {closed['seconds']:.2f}s (agent "
          f"{closed['agent_seconds']:.2f}s, proof {closed['proof_seconds']:.2f}s, pacing "
          f"{closed['paced_seconds']:.2f}s, questbot and the fake GitHub "
          f"{closed['own_seconds']:.2f}s) and {to_closed} GitHub requests")
    stages = spent_by_stage(journal)
    tokens = sum(s.tokens for s in stages)
    cents = sum(s.cost_cents for s in stages)
    print("  agent stages (usage receipts; cents round up):")
    for s in stages:
        print(f"    {s.stage:<10} {s.tokens:>6} tokens  ${s.cost_cents / 100:.2f}")
    print(f"    {'total':<10} {tokens:>6} tokens  ${cents / 100:.2f}")
    policy = parse_settings(SETTINGS).to_policy()  # the sample's budget: the default
    cap_cents, cap_tokens = allowance(quest, policy)
    assert cap_cents is not None and cap_tokens is not None  # the settings always give both
    left_cents = max(0, cap_cents - quest.usage_cost_cents)
    left_tokens = max(0, cap_tokens - quest.usage_tokens)
    print(f"  {budget_line(quest, policy.budget_cents, policy.budget_tokens)}")
    where = "in the bubblewrap sandbox" if sandboxed else "UNCONFINED (QUESTBOT_SANDBOX=unsafe-off)"
    print(f"  the sample's tests and the reproduction ran {where}")
    print(json.dumps({"first_sign_seconds": None if first_sign is None else round(first_sign, 2),
                      "to_closed": {k: round(v, 2) for k, v in closed.items()},
                      "requests_to_closed": to_closed, "seconds": round(total, 2),
                      "agent_seconds": round(agent, 2),
                      "proof_seconds": round(proof, 2), "paced_seconds": round(paced, 2),
                      "own_seconds": round(own, 2), "github_requests": requests,
                      "github_writes": writes, "steps": len(story.lines),
                      "sandboxed": sandboxed,
                      "agent": "scripted" if scripted else "model",
                      "model_tokens": tokens, "model_cost_usd": round(cents / 100, 2),
                      "budget_left_usd": round(left_cents / 100, 2),
                      "budget_left_tokens": left_tokens}))


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="scripts/demo", formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Walk one quest end to end on a local fake GitHub: a failing check "
        "becomes a quest, a maintainer approves it at A, B and C, it lands pinned to the "
        "approved commit, is watched and closes — and a regression reopens it at revision 2. "
        "questbot's real web process and worker run against a real Redis (REDIS_URL, or a "
        "redis-server of its own); the agent talks to a local model server answering from "
        "recorded conversations. Exits non-zero if a step did not happen.")
    parser.add_argument("--scripted", action="store_true",
                        help="the scripted test agent instead of the model agent")
    parser.add_argument("--keep", action="store_true",
                        help="afterwards, keep everything running until Ctrl-C and say how to "
                        "try it by hand (as scripts/try does)")
    return parser.parse_args(argv)


if __name__ == "__main__":
    options = parse()
    sys.exit(asyncio.run(run(scripted=options.scripted, keep=options.keep)))
