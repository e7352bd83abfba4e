"""Run the fake GitHub on its own: ``python -m questbot_testing.fakegithub --port 8787 --repo
acme/widgets``.

Prints the URL, App id and installation ids, and writes the App's private key where the bot
can read it, so a demo can run the real bot against the fake from another process.

For a chaos run (``scripts/chaos.py``) it also sends its webhooks as GitHub does — from a
queue, to several receivers, some twice or out of order, failed ones redelivered — injects
GitHub's own errors into some API answers, and serves a control surface for the harness:

    python -m questbot_testing.fakegithub --port 8787 --control --key-out app.pem \\
        --webhook-url http://127.0.0.1:8081/webhook --webhook-url http://127.0.0.1:8082/webhook \\
        --copies 2-3 --reorder 0.2 --redeliver-failed --faults 0.05 --seed 7

Everything beyond the first three options is off by default.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
from pathlib import Path

from questbot_testing.fakegithub.control import control
from questbot_testing.fakegithub.dispatch import Dispatcher
from questbot_testing.fakegithub.faults import KINDS, Faults
from questbot_testing.fakegithub.server import FakeGitHub


async def serve(args: argparse.Namespace) -> None:
    urls: list[str] = args.webhook_url or []
    faults = Faults(rate=args.faults, kinds=tuple(args.fault_kinds.split(",")), seed=args.seed,
                    hold_s=args.fault_hold, retry_after_s=args.fault_retry_after)
    async with FakeGitHub(
        app_id=args.app_id,
        port=args.port,
        webhook_url=urls[0] if urls else None,
        webhook_secret=args.webhook_secret,
        faults=faults,
    ) as fake:
        queued = (len(urls) > 1 or args.copies != (1, 1) or args.reorder > 0
                  or args.redeliver_failed or args.async_webhooks)
        if urls and queued:
            fake.dispatcher = Dispatcher(urls, copies=args.copies, reorder=args.reorder,
                                         redeliver_failed=args.redeliver_failed,
                                         seed=None if args.seed is None else args.seed + 1)
        if args.control:
            fake.control = control(fake)
        for name in args.repo:
            repo = fake.create_repository(name, {"README.md": f"# {name}\n"})
            print(f"repository {name}: installation {repo.installation_id}", flush=True)
        if args.key_out:
            Path(args.key_out).write_text(fake.keys.private_pem)
        print(f"fake GitHub at {fake.url} (app id {fake.world.app_id})", flush=True)
        try:
            await asyncio.Event().wait()
        finally:
            if fake.dispatcher is not None:
                await fake.dispatcher.close()


def _copies(text: str) -> tuple[int, int]:
    lo, _, hi = text.partition("-")
    try:
        pair = (int(lo), int(hi or lo))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not N or LO-HI") from None
    if not 1 <= pair[0] <= pair[1]:
        raise argparse.ArgumentTypeError(f"{text!r}: need 1 <= LO <= HI")
    return pair


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--port", type=int, default=8787)
    parser.add_argument("--app-id", type=int, default=4242)
    parser.add_argument("--repo", action="append", default=[], help="owner/name, repeatable")
    parser.add_argument("--webhook-url", action="append",
                        help="where to send webhooks; repeat it for several receivers")
    parser.add_argument("--webhook-secret", default="fake-github-webhook-secret")
    parser.add_argument("--key-out", help="write the App private key (PEM) here")
    parser.add_argument("--control", action="store_true",
                        help="serve /_fake/control/ for a harness (fakegithub.control)")
    hooks = parser.add_argument_group("webhooks sent as GitHub sends them")
    hooks.add_argument("--async-webhooks", action="store_true",
                       help="send from a queue rather than inside the action that caused them")
    hooks.add_argument("--copies", type=_copies, default=(1, 1), metavar="LO-HI",
                       help="send each delivery LO to HI times (same GUID)")
    hooks.add_argument("--reorder", type=float, default=0.0, metavar="P",
                       help="hold back this share of deliveries 0.2-2 s")
    hooks.add_argument("--redeliver-failed", action="store_true",
                       help="redeliver a delivery until a receiver answers 2xx, as the "
                       "redelivery job GitHub documents would")
    errors = parser.add_argument_group("GitHub's own errors (questbot_testing.fakegithub.faults)")
    errors.add_argument("--faults", type=float, default=0.0, metavar="RATE",
                        help="share of API requests that get a fault (default 0: none)")
    errors.add_argument("--fault-kinds", default=",".join(KINDS),
                        help=f"comma-separated, of {', '.join(KINDS)}")
    errors.add_argument("--fault-hold", type=float, default=10.0, metavar="S",
                        help="seconds a timeout holds its answer (GitHub: about 10)")
    errors.add_argument("--fault-retry-after", type=int, default=1, metavar="S",
                        help="the retry-after of rate-limit faults")
    parser.add_argument("--seed", type=int, help="seed for faults, copies and reordering")
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(serve(parser.parse_args()))


if __name__ == "__main__":
    main()
