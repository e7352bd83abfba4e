"""``python -m bot abandon QUEST --reason TEXT``: an operator ends a parked quest that nobody
can end on GitHub — its repository deleted, or out of the App's reach for good — or that they
know will not be taken up again. It is a ``killed`` event journaled like any other
(``bot.quests.abandon``), its reason naming the operator; a quest that is not parked is
refused, saying what to do instead. Whoever reaches the Redis is the operator: that is the
authorization, as for ``lessons --drop``."""

from __future__ import annotations

import argparse
import asyncio
import getpass

from bot.control_chars import one_line, say
from bot.journal.store import Journal, utcnow
from bot.journal.wire import connect
from bot.quests.abandon import Abandoned, NotAbandoned, abandon
from bot.settings.process.environment import redis_url
from bot.settings.process.names import reads

MAX_REASON = 1000


async def abandoned(url: str, quest_id: str, reason: str) -> Abandoned | NotAbandoned:
    client = connect(url, socket_timeout=10)
    try:
        at = utcnow()
        return await abandon(Journal(client), quest_id, reason=reason, at=at,
                             event_id=f"operator:abandon:{quest_id}:{int(at.timestamp())}")
    finally:
        await client.aclose()


def operator() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):  # no name for this uid (a container): say so plainly
        return "an operator"


def run(args: argparse.Namespace) -> int:
    """0 when the quest was abandoned; 1 when it was refused (the message says why)."""
    said = one_line(args.reason)
    if not said:
        say("abandon: say why with --reason (it is kept with the quest, for whoever "
            "reads its journal)", err=True)
        return 2
    by = one_line(args.by or operator())
    reason = f"abandoned by {by} from the command line: {said}"[:MAX_REASON]
    result = asyncio.run(abandoned(args.redis or redis_url(), args.quest, reason))
    if isinstance(result, NotAbandoned):
        say(f"abandon: {result.why}", err=True)
        return 1
    say(f"quest {result.quest_id} of {result.repo} is abandoned. It waited for: {result.was}\n"
        f"Its reason is journaled: {reason}")
    return 0


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    ab = sub.add_parser("abandon", epilog=reads("REDIS_URL (unless --redis is given)"),
                        help="end a parked quest nobody can end on GitHub (its repository "
                        "deleted, say), with the reason")
    ab.add_argument("quest", help="the quest id (python -m bot status --repo OWNER/NAME "
                    "lists them)")
    ab.add_argument("--reason", required=True, help="why, in a few words: kept in the "
                    "quest's journal")
    ab.add_argument("--by", metavar="NAME", help="who is abandoning it (default: this "
                    "account's user name)")
    ab.add_argument("--redis", metavar="URL", help="the Redis (default: $REDIS_URL)")
    ab.set_defaults(func=run)
