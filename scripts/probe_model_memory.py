"""A process's memory over many model conversations, each on a provider of its own (as
``Steady`` builds one per conversation, ``bot.agent.model.steady``) or on one shared: the
next suspect for the workers' growth the soak measures (``docs/performance.md``, the soak).

A stub OpenAI endpoint on loopback answers every request with ~6 KB of text; each
conversation is one pydantic-ai ``Agent.run`` of a ~18 KB prompt. The RSS is printed every 50.

    .venv/bin/python scripts/probe_model_memory.py            # a provider per conversation
    .venv/bin/python scripts/probe_model_memory.py --shared   # one provider for all
"""

from __future__ import annotations

import argparse
import asyncio
import os
from pathlib import Path

from aiohttp import web
from pydantic_ai import Agent
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider


def rss_mb() -> int:
    for line in Path(f"/proc/{os.getpid()}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) // 1024
    return 0


async def completions(request: web.Request) -> web.Response:
    body = await request.json()
    return web.json_response({
        "id": "probe", "object": "chat.completion", "created": 1, "model": body["model"],
        "choices": [{"index": 0, "finish_reason": "stop",
                     "message": {"role": "assistant", "content": "ok " * 2000}}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20}})


async def probe(conversations: int, shared: bool) -> list[tuple[int, int]]:
    app = web.Application()
    app.router.add_post("/v1/chat/completions", completions)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    url = f"http://127.0.0.1:{port}/v1"
    one = OpenAIProvider(base_url=url, api_key="probe") if shared else None
    seen = [(0, rss_mb())]
    try:
        for n in range(1, conversations + 1):
            provider = one or OpenAIProvider(base_url=url, api_key="probe")
            agent = Agent(OpenAIChatModel("gpt-4.1-mini", provider=provider))
            if one is not None:
                await agent.run("hello " * 3000)
            else:
                async with provider:
                    await agent.run("hello " * 3000)
            if n % 50 == 0:
                seen.append((n, rss_mb()))
                print(n, seen[-1][1], "MB", flush=True)
    finally:
        await runner.cleanup()
    return seen


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--conversations", type=int, default=300)
    p.add_argument("--shared", action="store_true", help="one provider for every conversation")
    args = p.parse_args()
    asyncio.run(probe(args.conversations, args.shared))


if __name__ == "__main__":
    main()
