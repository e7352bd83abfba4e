"""Run the fake GitHub on its own: ``python -m tests.fakegithub --port 8787 --repo acme/widgets``.

Prints the URL, App id and installation ids, and writes the App's private key where the bot
can read it, so a demo can run the real bot against the fake from another process.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
from pathlib import Path

from tests.fakegithub.server import FakeGitHub


async def serve(args: argparse.Namespace) -> None:
    async with FakeGitHub(
        app_id=args.app_id,
        port=args.port,
        webhook_url=args.webhook_url,
        webhook_secret=args.webhook_secret,
    ) as fake:
        for name in args.repo:
            repo = fake.create_repository(name, {"README.md": f"# {name}\n"})
            print(f"repository {name}: installation {repo.installation_id}", flush=True)
        if args.key_out:
            Path(args.key_out).write_text(fake.keys.private_pem)
        print(f"fake GitHub at {fake.url} (app id {fake.world.app_id})", flush=True)
        await asyncio.Event().wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--port", type=int, default=8787)
    parser.add_argument("--app-id", type=int, default=4242)
    parser.add_argument("--repo", action="append", default=[], help="owner/name, repeatable")
    parser.add_argument("--webhook-url")
    parser.add_argument("--webhook-secret", default="webhook-secret")
    parser.add_argument("--key-out", help="write the App private key (PEM) here")
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(serve(parser.parse_args()))


if __name__ == "__main__":
    main()
