"""questbot's command line: ``python -m bot replay|serve|worker``."""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

from bot.config import Config, ConfigError, load_config
from bot.core import Policy
from bot.tools.replay import (
    JournalFileError,
    read_journal,
    read_policy,
    replay,
    result_json,
    result_text,
)


def _replay(args: argparse.Namespace) -> int:
    """A file replays under ``--policy``; a stored quest under the policy recorded with each
    event, ``--policy`` standing in for entries recorded without one."""
    policies: dict[str, Policy] | None = None
    uses: Counter[str | None] | None = None
    try:
        policy = read_policy(args.policy)
        if args.redis:
            import asyncio

            from bot.journal.errors import CorruptJournal
            from bot.journal.recovery import replay_recorded

            try:
                rebuilt = asyncio.run(replay_recorded(args.redis, args.journal, policy))
            except CorruptJournal as exc:
                print(f"replay: {exc}", file=sys.stderr)
                return 2
            result = rebuilt.result
            if rebuilt.recorded is not None:
                policies, uses = rebuilt.recorded.stored, rebuilt.recorded.uses()
        else:
            result = replay(read_journal(Path(args.journal)), policy)
    except (JournalFileError, OSError) as exc:
        print(f"replay: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(result_json(result, policies=policies, uses=uses), indent=2,
                         sort_keys=True))
    else:
        print(result_text(result, uses=uses))
    return 1 if result.invalid is not None else 0


def _config() -> Config:
    try:
        return load_config()
    except ConfigError as exc:
        print(f"questbot: {exc}", file=sys.stderr)
        raise SystemExit(2) from None


def _serve(_args: argparse.Namespace) -> int:
    from bot.web.app import run_web

    run_web(_config())
    return 0


def _worker(_args: argparse.Namespace) -> int:
    from bot.worker.assembly import run_worker

    run_worker(_config())
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m bot", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    rp = sub.add_parser("replay", help="fold a quest's journal and print what it decided")
    rp.add_argument("journal", help="an events .jsonl file, or with --redis a quest id")
    rp.add_argument("--policy", type=Path, help="a policy JSON file (default: the default "
                    "policy); with --redis, only for entries recorded without one")
    rp.add_argument("--redis", metavar="URL", help="read the quest's journal from this Redis, "
                    "each event replayed under the policy recorded with it")
    rp.add_argument("--json", action="store_true", help="print the result as JSON")
    rp.set_defaults(func=_replay)
    sub.add_parser("serve", help="the web process: POST /webhook, /healthz, /metrics"
                   ).set_defaults(func=_serve)
    sub.add_parser("worker", help="the worker: deliveries, effects, timers, GitHub views"
                   ).set_defaults(func=_worker)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return int(args.func(args))


if __name__ == "__main__":
    sys.exit(main())
