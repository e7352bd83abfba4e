"""questbot's command line: ``python -m bot replay|status|proof|serve|worker|register|receive``,
``review``, ``lessons``, ``model``, ``transcript`` and ``abandon``."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections import Counter
from pathlib import Path

from bot.control_chars import say
from bot.core import Policy
from bot.settings.process import Config, load_config, read_by
from bot.settings.process.environment import redis_url
from bot.settings.process.names import reads
from bot.settings.process.problems import ConfigError
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
                say(f"replay: {exc}", err=True)
                return 2
            result = rebuilt.result
            if rebuilt.recorded is not None:
                policies, uses = rebuilt.recorded.stored, rebuilt.recorded.uses()
        else:
            result = replay(read_journal(Path(args.journal)), policy)
    except (JournalFileError, OSError) as exc:
        say(f"replay: {exc}", err=True)
        return 2
    if args.json:
        say(json.dumps(result_json(result, policies=policies, uses=uses), indent=2,
                       sort_keys=True))
    else:
        say(result_text(result, uses=uses))
    return 1 if result.invalid is not None else 0


def _repo_status(args: argparse.Namespace, policy: Policy) -> int:
    """Every live quest of ``--repo``, a line each (or JSON)."""
    import asyncio

    from bot.tools.quests import listed_at, listed_text

    if args.quest or args.journal is not None:
        say("status: --repo lists a repository's quests; name no quest or journal with it",
            err=True)
        return 2
    import redis

    url = args.redis or redis_url()
    try:
        listed = asyncio.run(listed_at(url, args.repo, policy))
    except (OSError, redis.RedisError) as exc:
        say(f"status: could not read {args.repo}'s quests from Redis: {exc}", err=True)
        return 2
    say(json.dumps(listed.model_dump(mode="json"), indent=2, sort_keys=True) if args.json
        else listed_text(listed))
    return 0


def _status(args: argparse.Namespace) -> int:
    """A quest's gates, allowed actions and next action: 0, or 2 when it cannot be read."""
    from bot.tools.status import of_result, status_text

    try:
        policy = read_policy(args.policy)
        if args.repo is not None:
            return _repo_status(args, policy)
        if args.journal is not None:
            result = replay(read_journal(args.journal), policy)
        else:
            import asyncio

            from bot.journal.errors import CorruptJournal
            from bot.journal.recovery import replay_recorded

            url = args.redis or redis_url()
            if not args.quest:
                say("status: name a quest id, or --journal FILE, or --repo OWNER/NAME for "
                    "every live quest of a repository", err=True)
                return 2
            try:
                rebuilt = asyncio.run(replay_recorded(url, args.quest, policy))
            except CorruptJournal as exc:
                say(f"status: {exc}", err=True)
                return 2
            result = rebuilt.result
            recorded = rebuilt.recorded
            if recorded is not None and recorded.digests and recorded.digests[-1]:
                policy = recorded.stored[recorded.digests[-1]]  # the quest's own, latest
    except (JournalFileError, OSError) as exc:
        say(f"status: {exc}", err=True)
        return 2
    status = of_result(result, policy)
    if status is None:
        say(f"status: no quest {args.quest or args.journal} (its journal is empty)",
            err=True)
        return 2
    say(json.dumps(status.as_json(), indent=2, sort_keys=True) if args.json
        else status_text(status))
    return 0


def _proof(args: argparse.Namespace) -> int:
    """0: every check passed; 1: one failed; 2: they could not be run."""
    from bot.agent import sandbox
    from bot.errors import QuestbotError
    from bot.settings.process.sandbox import load_sandbox_config
    from bot.tools.proof import passed, proof_json, proof_text, prove_checkout

    try:
        config = load_sandbox_config()
    except ConfigError as exc:
        say(f"proof: {exc}", err=True)
        return 2
    key = os.environ.get("GITHUB_PRIVATE_KEY_PATH")
    policy = config.sandbox_policy((Path(key).resolve(),) if key else ())
    with sandbox.using(policy):
        found = sandbox.status(policy)
        if not found.usable:
            say(f"proof: the sandbox is unavailable, so no check was run: {found.detail}; "
                "or set QUESTBOT_SANDBOX=unsafe-off, knowing it is unsafe", err=True)
            return 2
        if not found.confined:
            say("proof: QUESTBOT_SANDBOX=unsafe-off: the checks run UNCONFINED, with your "
                "files, environment and network", err=True)
        try:
            proof = prove_checkout(args.checkout, commands=args.command or (), head=args.head,
                                   base=args.base, reproduction=args.reproduction,
                                   timeout_seconds=args.timeout)
        except QuestbotError as exc:
            say(f"proof: {exc}", err=True)
            return 2
    if args.json:
        say(json.dumps(proof_json(proof), indent=2, sort_keys=True))
    else:
        say(proof_text(proof))
    return 0 if passed(proof) else 1


def _config() -> Config:
    """The process's settings, checked whole; a variable that looks meant for questbot and
    that no setting reads is named at start, with the setting it was probably meant to be."""
    try:
        config = load_config()
    except ConfigError as exc:
        say(f"questbot: {exc}", err=True)
        raise SystemExit(2) from None
    for warning in config.warnings:
        say(f"questbot: warning: {warning}", err=True)
    return config


def _settings_help(process: str, what: str) -> str:
    """A process's ``--help``: what it is, and the settings it reads, by name."""
    import textwrap

    names = ", ".join(sorted(read_by(process)))
    return "\n\n".join([
        textwrap.fill(what, width=78),
        textwrap.fill(f"Settings it reads: {names}.", width=78),
        textwrap.fill("From the environment over ./.env (or the file QUESTBOT_ENV_FILE names); "
                      "a variable in the environment wins. Every setting is checked at start "
                      "(the other process's too, so one set of settings serves both), each "
                      "problem listed with its fix, and a QUESTBOT_ variable no setting "
                      "reads is named with the nearest setting. The README's table under "
                      "\"Setting up\" says what each one does.", width=78)])


def _serve(_args: argparse.Namespace) -> int:
    from bot.web.app import run_web

    run_web(_config())
    return 0


def _worker(_args: argparse.Namespace) -> int:
    from bot.worker.assembly import run_worker

    run_worker(_config())
    return 0


def _register(args: argparse.Namespace) -> int:
    import asyncio

    from bot.errors import ConfigurationError
    from bot.register.options import register_options
    from bot.register.page import register

    try:
        options = register_options(
            webhook_url=args.webhook_url, name=args.name, org=args.org, host=args.host,
            port=args.port, manifest=args.manifest, env_file=args.env_file,
            key_dir=args.key_dir)
        asyncio.run(register(options, open_browser=not args.no_browser))
    except ConfigurationError as exc:
        say(f"register: {exc}", err=True)
        return 2
    except KeyboardInterrupt:
        say("register: stopped; nothing was saved", err=True)
        return 1
    return 0


def _receive(args: argparse.Namespace) -> int:
    import logging

    from bot.observe.logs import TerminalFormatter
    from bot.tools.receive import receive

    # the worker's warnings (GitHub or Redis not answering yet) are what a person waits on
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(TerminalFormatter("receive: %(message)s"))
    logging.basicConfig(level=logging.WARNING, handlers=[handler])
    return receive(args.event, args.fixture, url=args.url, local=args.local,
                   delivery_id=args.delivery_id, patience=args.wait,
                   warn=lambda line: say(line, err=True))


def _check_config(args: argparse.Namespace) -> int:
    from bot.settings.repository.json_schema import settings_schema_text
    from bot.settings.repository.schema import SettingsError, parse_settings

    if args.schema:
        sys.stdout.write(settings_schema_text())
        return 0
    path: Path = args.file
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        print(f"cannot read {path}: {getattr(exc, 'strerror', None) or exc}", file=sys.stderr)
        return 2
    try:
        settings = parse_settings(text)
    except SettingsError as exc:
        count = len(exc.problems)
        print(f"{path}: {count} problem{'s' if count != 1 else ''}; questbot would keep its "
              "last good settings until the file is fixed:")
        for problem in exc.problems:
            where = f"line {problem.line}: " if problem.line else ""
            print(f"  {where}{problem.message}")
        return 1
    changed = sorted(settings.model_dump(exclude_defaults=True))
    print(f"{path} is good: "
          + (f"it sets {', '.join(changed)}; everything else is the default"
             if changed else "every setting is the default"))
    return 0


def version() -> str:
    """The installed distribution's version (``pyproject.toml``); a checkout that was never
    installed says so rather than guess."""
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as installed

    try:
        return installed("questbot")
    except PackageNotFoundError:
        return "unknown (not installed: run scripts/setup)"


def _prog() -> str:
    """What the person typed: the ``questbot`` console script, or ``python -m bot``."""
    return "questbot" if Path(sys.argv[0]).name == "questbot" else "python -m bot"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=_prog(), description="questbot: quests from failing checks, driven by people at "
        "three checkpoints. The web process and the worker, and the tools to replay, inspect "
        "and try a quest.")
    parser.add_argument("--version", action="version", version=f"questbot {version()}")
    sub = parser.add_subparsers(dest="command", required=True)
    rp = sub.add_parser("replay", help="fold a quest's journal and print what it decided")
    rp.add_argument("journal", help="an events .jsonl file, or with --redis a quest id")
    rp.add_argument("--policy", type=Path, help="a policy JSON file (default: the default "
                    "policy); with --redis, only for entries recorded without one")
    rp.add_argument("--redis", metavar="URL", help="read the quest's journal from this Redis, "
                    "each event replayed under the policy recorded with it")
    rp.add_argument("--json", action="store_true", help="print the result as JSON")
    rp.set_defaults(func=_replay)
    st = sub.add_parser("status", help="a quest's state, gates, what each role may do now and "
                        "the next action",
                        epilog=reads("REDIS_URL (unless --redis or --journal is given)"))
    st.add_argument("quest", nargs="?", help="the quest id, read from Redis")
    st.add_argument("--journal", type=Path, help="read an events .jsonl file instead")
    st.add_argument("--repo", metavar="OWNER/NAME", help="list every live quest of this "
                    "repository instead, a line each: its state and the next action")
    st.add_argument("--redis", metavar="URL", help="the Redis (default: $REDIS_URL)")
    st.add_argument("--policy", type=Path, help="a policy JSON file (default: the quest's "
                    "recorded policy, else the default policy)")
    st.add_argument("--json", action="store_true", help="print it as JSON")
    st.set_defaults(func=_status)
    pf = sub.add_parser("proof", epilog=reads(
        "QUESTBOT_SANDBOX", "QUESTBOT_SANDBOX_READONLY", "QUESTBOT_SANDBOX_MEMORY_MB",
        "QUESTBOT_SANDBOX_PROCESSES", "GITHUB_PRIVATE_KEY_PATH (kept out of the sandbox)",
        where="the environment"), help="run a repository's checks in the sandbox, as a quest's "
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
    sub.add_parser("serve", help="the web process: POST /webhook, /healthz, /metrics",
                   formatter_class=argparse.RawDescriptionHelpFormatter,
                   description=_settings_help("serve", "The web process: checks each webhook's "
                                              "signature, keeps it in Redis and answers "
                                              "GitHub; /healthz and /metrics beside.")
                   ).set_defaults(func=_serve)
    sub.add_parser("worker", help="the worker: deliveries, effects, timers, GitHub views",
                   formatter_class=argparse.RawDescriptionHelpFormatter,
                   description=_settings_help("worker", "The worker: turns the stored "
                                              "deliveries into quests, runs the agent, the "
                                              "proofs and every write to GitHub; /metrics and "
                                              "/healthz on QUESTBOT_METRICS_PORT.")
                   ).set_defaults(func=_worker)
    rg = sub.add_parser("register", epilog=reads(
        "GITHUB_URL or GITHUB_API_URL (GitHub Enterprise Server)") + " It writes GITHUB_APP_ID, "
        "GITHUB_APP_SLUG, GITHUB_WEBHOOK_SECRET and GITHUB_PRIVATE_KEY_PATH to the .env file.",
                        help="make questbot's GitHub App from app.yml (the manifest "
                        "flow) and save its credentials in .env")
    rg.add_argument("--webhook-url", help="where GitHub sends webhooks: https://HOST/webhook "
                    "(default: app.yml's)")
    rg.add_argument("--org", help="make the App for this organization instead of your account")
    rg.add_argument("--name", help="the App's name (default: app.yml's; GitHub's are unique)")
    rg.add_argument("--host", default="127.0.0.1", help="the local page's address")
    rg.add_argument("--port", default="3000", help="the local page's port (default 3000)")
    rg.add_argument("--manifest", type=Path, default=Path("app.yml"), help="the App manifest")
    rg.add_argument("--env-file", type=Path, default=Path(".env"), help="where the settings go")
    rg.add_argument("--key-dir", type=Path, default=Path("."), help="where the key file goes")
    rg.add_argument("--no-browser", action="store_true", help="print the page's address only")
    rg.set_defaults(func=_register)
    rc = sub.add_parser("receive", help="sign a webhook payload file and send it to the web "
                        "process (or with --local, to intake here)",
                        epilog=reads("GITHUB_WEBHOOK_SECRET", "PORT (for the default --url)")
                        + " With --local, every setting the worker reads (python -m bot "
                        "worker --help).")
    rc.add_argument("event", help="the X-GitHub-Event name, e.g. issue_comment")
    rc.add_argument("fixture", type=Path, help="a webhook payload JSON file")
    rc.add_argument("--url", help="the web process's webhook URL (default: "
                    "http://127.0.0.1:$PORT/webhook)")
    rc.add_argument("--local", action="store_true", help="hand it to the worker's intake in "
                    "this process instead (needs the worker's settings)")
    rc.add_argument("--delivery-id", help="the X-GitHub-Delivery GUID (default: a new one)")
    rc.add_argument("--wait", type=float, metavar="SECONDS",
                    help="with --local, how long to wait for GitHub to say who the App is "
                    "(default 20)")
    rc.set_defaults(func=_receive)
    cc = sub.add_parser("check-config", help="check a .github/questbot.yml as questbot reads "
                        "it, running nothing (exit 0 good, 1 problems, 2 unreadable)")
    cc.add_argument("file", type=Path, nargs="?", default=Path(".github/questbot.yml"),
                    help="the file (default: .github/questbot.yml)")
    cc.add_argument("--schema", action="store_true", help="print the file's JSON Schema "
                    "instead (docs/questbot.schema.json), for editors")
    cc.set_defaults(func=_check_config)
    from bot.tools.review import add_parser as add_review_parser

    add_review_parser(sub)
    from bot.tools.lessons import add_parser as add_lessons_parser

    add_lessons_parser(sub)
    from bot.tools.model_check import add_parser as add_model_parser

    add_model_parser(sub)
    from bot.tools.transcript import add_parser as add_transcript_parser

    add_transcript_parser(sub)
    from bot.tools.abandon import add_parser as add_abandon_parser

    add_abandon_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the command; a Redis that does not answer is one line (exit 2), a reader that
    stops reading (``| head``) a quiet end (``bot.tools.reach``)."""
    import redis

    from bot.tools.reach import quiet_on_closed_pipe, unreachable_redis

    args = build_parser().parse_args(argv)
    try:
        code = int(args.func(args))
        sys.stdout.flush()  # a closed pipe shows here, not in the interpreter's last flush
    except BrokenPipeError:
        return quiet_on_closed_pipe()
    except (redis.ConnectionError, redis.TimeoutError, ConnectionError) as exc:
        url = getattr(args, "redis", None) or redis_url()
        command = " ".join(filter(None, (args.command, getattr(args, "review_action", None))))
        say(unreachable_redis(command, url, exc), err=True)
        return 2
    return code


if __name__ == "__main__":
    sys.exit(main())
