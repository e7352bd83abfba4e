"""questbot's command line: ``python -m bot replay|proof|serve|worker``."""

from __future__ import annotations

import argparse
import json
import os
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


def _proof(args: argparse.Namespace) -> int:
    """0: every check passed; 1: one failed; 2: they could not be run."""
    from bot.agent import sandbox
    from bot.config import load_sandbox_config
    from bot.errors import QuestbotError
    from bot.tools.proof import passed, proof_json, proof_text, prove_checkout

    try:
        config = load_sandbox_config()
    except ConfigError as exc:
        print(f"proof: {exc}", file=sys.stderr)
        return 2
    key = os.environ.get("GITHUB_PRIVATE_KEY_PATH")
    policy = config.sandbox_policy((Path(key).resolve(),) if key else ())
    with sandbox.using(policy):
        found = sandbox.status(policy)
        if not found.usable:
            print(f"proof: the sandbox is unavailable, so no check was run: {found.detail}; "
                  "or set QUESTBOT_SANDBOX=unsafe-off, knowing it is unsafe", file=sys.stderr)
            return 2
        if not found.confined:
            print("proof: QUESTBOT_SANDBOX=unsafe-off: the checks run UNCONFINED, with your "
                  "files, environment and network", file=sys.stderr)
        try:
            proof = prove_checkout(args.checkout, commands=args.command or (), head=args.head,
                                   base=args.base, reproduction=args.reproduction,
                                   timeout_seconds=args.timeout)
        except QuestbotError as exc:
            print(f"proof: {exc}", file=sys.stderr)
            return 2
    if args.json:
        print(json.dumps(proof_json(proof), indent=2, sort_keys=True))
    else:
        print(proof_text(proof))
    return 0 if passed(proof) else 1


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
    pf = sub.add_parser("proof", help="run a repository's checks in the sandbox, as a quest's "
                        "proof does, and print the bundle (exit 0 passed, 1 failed, 2 not run)")
    pf.add_argument("--checkout", type=Path, required=True, metavar="DIR",
                    help="a git working tree (its committed HEAD is proved) or a directory")
    pf.add_argument("--command", action="append", metavar="CMD", help="a check, split into "
                    "arguments like a shell would, run without one; repeatable (default: "
                    "proof.commands of .github/questbot.yml)")
    pf.add_argument("--head", default="HEAD", help="the commit to prove (default HEAD)")
    pf.add_argument("--base", help="the commit a --reproduction must fail on")
    pf.add_argument("--reproduction", metavar="CMD", help="a reproduction: must fail at "
                    "--base and pass at --head")
    pf.add_argument("--timeout", type=float, default=600.0, metavar="SECONDS",
                    help="per command (default 600); a command that runs longer fails with 124")
    pf.add_argument("--json", action="store_true", help="print the result as JSON")
    pf.set_defaults(func=_proof)
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
