"""Try questbot by hand, without GitHub: the whole stack on loopback, until Ctrl-C.

``start`` runs what ``scripts/demo`` runs — a Redis, the fake GitHub holding the demo's sample
repository (a pager that loses its last partial page, and the test that catches it), questbot's
real web process and worker, and the local model server answering from recorded conversations —
and then, instead of telling a story, keeps it all running and says where to look. From a
second terminal a person plays the other side:

    python -m questbot_testing.playground fail                  # the `tests` check fails on main
    python -m questbot_testing.playground show                  # what questbot wrote, and where
    python -m questbot_testing.playground comment 2 "/approve A"   # as the maintainer, maya
    questbot status --repo octo/sample                          # with the REDIS_URL it printed

Every command finds the running stack through ``.cache/playground.json`` (or the file
``QUESTBOT_PLAYGROUND`` names), which ``start`` writes and removes. The commands drive the fake
GitHub the way people drive GitHub — a check fails, someone comments — and the fake sends
questbot the webhooks GitHub would.
``scripts/demo --keep`` leaves the finished demo running the same way.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import signal
import sys
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from bot.control_chars import for_terminal
from questbot_testing import PROJECT
from questbot_testing.fakegithub.control import PREFIX, control
from questbot_testing.fakegithub.webhooks import build_payload, load_example
from questbot_testing.stack import SECRET, Stack

STATE = Path(os.environ.get("QUESTBOT_PLAYGROUND") or PROJECT / ".cache" / "playground.json")
"""Where a running playground says where it is (removed when it stops);
``QUESTBOT_PLAYGROUND`` moves it, so two can run side by side."""

WATCH_MINUTES = 2
"""The watch window by hand: two minutes rather than an hour, so a quest closes while you
look (``scripts/demo`` moves its clock instead)."""


@dataclass(frozen=True)
class Where:
    """Everything a second terminal needs to reach the running stack."""

    fake_url: str
    webhook_url: str
    webhook_secret: str
    redis_url: str
    repo: str
    maintainer: str
    reader: str
    installation_id: int
    pid: int

    @classmethod
    def read(cls) -> Where:
        try:
            data = json.loads(STATE.read_text())
        except FileNotFoundError:
            raise SystemExit("no playground is running: start one with scripts/try "
                             "(or scripts/demo --keep)") from None
        return cls(**data)


def guide(where: Where, *, after_demo: bool) -> str:
    """What to do next, in the words of someone trying questbot for the first time."""
    play = "python -m questbot_testing.playground"
    start = ("the demo's quest has closed; `fail` breaks main again" if after_demo else
             "`fail` makes the `tests` check fail on main, and a quest starts")
    return f"""
questbot is running against a fake GitHub, with nothing of yours involved:
  fake GitHub    {where.fake_url}   (repository {where.repo}, the App installed)
  web process    {where.webhook_url}
  Redis          {where.redis_url}
  people         {where.maintainer} may write to {where.repo} and decides checkpoints;
                 {where.reader} may only read

From another terminal in this folder ({start}):
  .venv/bin/{play} fail
  .venv/bin/{play} show             # issues, pull requests, checks
  .venv/bin/{play} show N           # one of them, every comment in full
  .venv/bin/{play} comment N "/approve A"   # as {where.maintainer}; --as {where.reader} is refused
  REDIS_URL={where.redis_url} .venv/bin/questbot status --repo {where.repo}
  .venv/bin/{play} payload issues opened > opened.json
  GITHUB_WEBHOOK_SECRET={where.webhook_secret} .venv/bin/questbot receive issues opened.json \\
      --url {where.webhook_url}

A quest is watched for {WATCH_MINUTES} minutes after it lands. Ctrl-C stops everything.
"""


async def keep(stack: Stack, redis_url: str, *, repo: str, maintainer: str, reader: str,
               after_demo: bool = False, say: Callable[[str], None] = print) -> None:
    """Serve ``stack`` as it is until Ctrl-C (or SIGTERM): the worker's loops run as in
    production, and the fake GitHub answers the commands of this module."""
    stack.fake.control = control(stack.fake)
    where = Where(fake_url=stack.fake.url, webhook_url=str(stack.fake.webhook_url),
                  webhook_secret=SECRET, redis_url=redis_url, repo=repo,
                  maintainer=maintainer, reader=reader,
                  installation_id=stack.fake.repo(repo).installation_id, pid=os.getpid())
    STATE.parent.mkdir(parents=True, exist_ok=True)
    STATE.write_text(json.dumps(asdict(where), indent=2) + "\n")
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)
    say(guide(where, after_demo=after_demo))
    try:
        await stack.runtime.worker.run(stop)
    finally:
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(signum)
        with contextlib.suppress(FileNotFoundError):
            if json.loads(STATE.read_text()).get("pid") == os.getpid():
                STATE.unlink()
        say("stopped.")


async def start(args: argparse.Namespace) -> int:
    from questbot_testing.modelserver.demo import demo_model
    from questbot_testing.redis_server import RedisServer
    from questbot_testing.sample import sample_spec
    from questbot_testing.scenario import MAINTAINER, READER, REPO, SETTINGS, setup_repository

    server = None
    url = args.redis or os.environ.get("REDIS_URL")
    if not url:
        server = RedisServer(appendonly=False)
        server.start()
        url = server.url
    model_server, endpoint = (None, None) if args.scripted else await demo_model()
    specs = {REPO: sample_spec()} if args.scripted else None
    stack = await Stack(url, scripted_specs=specs, model=endpoint).start()
    try:
        settings = SETTINGS.replace("watch_window_minutes: 60",
                                    f"watch_window_minutes: {WATCH_MINUTES}")
        await setup_repository(stack, settings)
        await keep(stack, url, repo=REPO, maintainer=MAINTAINER, reader=READER)
    finally:
        await stack.stop()
        if model_server is not None:
            await model_server.close()
        if server is not None:
            server.cleanup()
    return 0


def _control(where: Where, method: str, route: str, body: dict[str, Any] | None = None) -> Any:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(f"{where.fake_url}{PREFIX}{route}", data=data,
                                     method=method,
                                     headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=60) as answer:
            return json.loads(answer.read())
    except urllib.error.HTTPError as exc:
        raise SystemExit(f"the fake GitHub refused it: {exc.read().decode()[:500]}") from None
    except urllib.error.URLError as exc:
        raise SystemExit(f"the playground at {where.fake_url} does not answer ({exc.reason}); "
                         "is it still running?") from None


def visible(text: str) -> str:
    """Text from the repository, the model or a comment, safe to print on a terminal: what a
    terminal would act on (escape sequences, control characters, bidi overrides) is dropped,
    as questbot's own commands do (``bot.control_chars``)."""
    return for_terminal(text)


def fail(args: argparse.Namespace) -> int:
    where = Where.read()
    done = _control(where, "POST", "checks", {"repo": where.repo, "name": args.check,
                                              "conclusion": "failure"})
    print(f"the `{args.check}` check failed on {where.repo}'s main ({done['sha'][:7]}); "
          f"questbot starts a quest — `show` in a few seconds")
    return 0


def comment(args: argparse.Namespace) -> int:
    where = Where.read()
    login = args.user or where.maintainer
    _control(where, "POST", "comments", {"repo": where.repo, "number": args.number,
                                         "body": args.body, "user": login})
    print(f"@{login} commented on #{args.number}: {visible(args.body)}")
    return 0


def show(args: argparse.Namespace) -> int:
    where = Where.read()
    state = _control(where, "GET", "state")
    repo = state["repositories"][where.repo]
    pulls = {p["number"]: p for p in repo["pulls"]}
    comments: dict[int, list[dict[str, Any]]] = {}
    for item in repo["comments"]:
        comments.setdefault(item["issue_number"], []).append(item)
    if args.number is None:
        print(f"{where.repo} on the fake GitHub ({where.fake_url}):")
        for issue in sorted(repo["issues"], key=lambda i: i["number"]):
            kind = "pull request" if issue["is_pull_request"] else "issue"
            pull = pulls.get(issue["number"], {})
            merged = " (merged)" if pull.get("merged") else ""
            print(f"  #{issue['number']} {kind}, {issue['state']}{merged}: "
                  f"{visible(issue['title'])} — {len(comments.get(issue['number'], []))} "
                  "comments")
        for run in repo["check_runs"]:
            print(f"  check run {run['name']!r} on {run['head_sha'][:7]}: {run['status']}"
                  f"{' ' + run['conclusion'] if run['conclusion'] else ''}")
        print("`show N` prints an issue or pull request with every comment in full")
        return 0
    issue = next((i for i in repo["issues"] if i["number"] == args.number), None)
    if issue is None:
        print(f"{where.repo} has no issue or pull request #{args.number}", file=sys.stderr)
        return 1
    print(f"#{issue['number']} {visible(issue['title'])} ({issue['state']}, "
          f"by @{issue['user']})\n")
    print(visible(issue["body"] or "(no description)"))
    for item in comments.get(args.number, []):
        print(f"\n—— @{item['user']} ——\n{visible(item['body'])}")
    return 0


def payload(args: argparse.Namespace) -> int:
    """One of GitHub's own example payloads; with ``--here``, about the playground's
    repository and installation (the objects it names do not exist on the fake)."""
    if args.here:
        where = Where.read()
        data = build_payload(args.event, args.name, repository=where.repo,
                             installation_id=where.installation_id)
    else:
        data = load_example(args.event, args.name)
    print(json.dumps(data, indent=2))
    return 0


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(
        prog="python -m questbot_testing.playground",
        description="Try questbot by hand on a fake GitHub: `start` keeps the whole stack "
        "running until Ctrl-C; the other commands act on it from another terminal as people "
        "act on GitHub.")
    sub = top.add_subparsers(dest="command", required=True)
    st = sub.add_parser("start", help="run Redis, the fake GitHub with the sample, the web "
                        "process and the worker until Ctrl-C")
    st.add_argument("--scripted", action="store_true", help="the scripted test agent instead "
                    "of the model agent on recorded conversations")
    st.add_argument("--redis", metavar="URL", help="use this Redis (default: $REDIS_URL, else "
                    "a redis-server of its own)")
    fl = sub.add_parser("fail", help="a check fails on the repository's main: a quest starts")
    fl.add_argument("--check", default="tests", help="the check's name (default: tests)")
    cm = sub.add_parser("comment", help="comment on an issue or pull request, as a person")
    cm.add_argument("number", type=int)
    cm.add_argument("body")
    cm.add_argument("--as", dest="user", help="who comments (default: the maintainer)")
    sh = sub.add_parser("show", help="the repository's issues, pull requests and checks; with "
                        "a number, that one with every comment in full")
    sh.add_argument("number", type=int, nargs="?")
    pl = sub.add_parser("payload", help="print one of GitHub's example payloads, for "
                        "`questbot receive`")
    pl.add_argument("event", help="e.g. issues, issue_comment, check_run")
    pl.add_argument("name", nargs="?", default="payload.json",
                    help="which example, e.g. opened or created.with-installation")
    pl.add_argument("--here", action="store_true", help="about the playground's repository "
                    "and installation")
    return top


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    if args.command == "start":
        with contextlib.suppress(KeyboardInterrupt):
            return asyncio.run(start(args))
        return 0
    commands: dict[str, Callable[[argparse.Namespace], int]] = {
        "fail": fail, "comment": comment, "show": show, "payload": payload}
    try:
        return commands[args.command](args)
    except FileNotFoundError as exc:
        print(exc, file=sys.stderr)
        return 1
    except BrokenPipeError:  # `show | head`: the reader has what it wanted
        sys.stderr.close()
        return 0


if __name__ == "__main__":
    raise SystemExit(main())
