"""``python -m bot review request QUEST_ID --role ROLE``: issue a review capability for an
operator to hand to a reviewer session, with the handoff prompt. The capability is printed
once and stored only as its hash; requesting again replaces it."""

from __future__ import annotations

import argparse
import asyncio
import json

from bot.control_chars import say
from bot.journal.store import Journal
from bot.journal.wire import connect
from bot.reviews.capabilities import Capabilities
from bot.reviews.models import Issued, ReviewRole
from bot.reviews.proof_context import proof_context
from bot.reviews.service import ReviewRefused, Reviews
from bot.settings.process import checks
from bot.settings.process.environment import redis_url, settings_values
from bot.settings.process.names import reads


async def request(url: str, quest_id: str, role: ReviewRole, *, producer: str | None,
                  base_url: str | None) -> Issued:
    client = connect(url, socket_timeout=10)
    try:
        reviews = Reviews(Journal(client), Capabilities(client), base_url=base_url,
                          context_of=proof_context(client))
        return await reviews.request(quest_id, role, producer=producer)
    finally:
        await client.aclose()


def public_url(given: str | None) -> str | None:
    """``--url``, else the ``QUESTBOT_PUBLIC_URL`` setting (the environment over ``.env``),
    checked as the processes check it; ``ValueError`` names the problem."""
    if given is None:
        values, _origins, _problems = settings_values()
        given = values.get("QUESTBOT_PUBLIC_URL")
        if given is None:
            return None
        source = "QUESTBOT_PUBLIC_URL"
    else:
        source = "--url"
    try:
        return checks.http_url(given)
    except ValueError as exc:
        raise ValueError(f"{source}={checks.shown_url(given)} {exc}; give the web process's "
                         "address as reviewers reach it, https://HOST") from None


NOWHERE = ("QUESTBOT_PUBLIC_URL is not set, so the prompt names no address to send the "
           "review to: the reviewer's session calls the web process's /reviews/{id}/start "
           "and /reviews/{id}/submit. Set QUESTBOT_PUBLIC_URL (or pass --url) to the web "
           "process's address as the reviewer reaches it, https://HOST, and request again.")


def run(args: argparse.Namespace) -> int:
    """0 with the capability printed; 2 when the review cannot be requested."""
    url = args.redis or redis_url()
    try:
        base_url = public_url(args.url)
    except ValueError as exc:
        say(f"review request: {exc}", err=True)
        return 2
    try:
        issued = asyncio.run(request(url, args.quest, ReviewRole(args.role),
                                     producer=args.producer_session, base_url=base_url))
    except ReviewRefused as exc:
        say(f"review: {exc.reason}", err=True)
        return 2
    if base_url is None:  # said first, on stderr: a script reading stdout still sees it
        say(f"review request: {NOWHERE.format(id=issued.review_id)}", err=True)
    if args.json:
        say(json.dumps(issued.model_dump(mode="json"), indent=2))
        return 0
    # the handoff quotes the quest's evidence (a model's hypothesis and plan, the issue's
    # title): say() prints it with no escape sequence or carriage return of theirs
    say(f"review {issued.review_id}\ncapability {issued.capability}\n(expires in "
        f"{issued.expires_in_seconds // 60} minutes; shown once, stored only as its hash; "
        f"requesting again replaces it)\n\n{issued.handoff}")
    return 0


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    rv = sub.add_parser("review", help="reviews by capability: review request QUEST_ID "
                        "--role ROLE prints a capability and the reviewer's handoff prompt")
    actions = rv.add_subparsers(dest="review_action", required=True)
    rq = actions.add_parser("request", help="pin the open checkpoint and issue a capability",
                            epilog=reads("REDIS_URL (unless --redis is given)",
                                         "QUESTBOT_PUBLIC_URL (unless --url is given)"))
    rq.add_argument("quest", help="the quest id")
    rq.add_argument("--role", required=True, choices=[r.value for r in ReviewRole])
    rq.add_argument("--redis", metavar="URL", help="the Redis (default: $REDIS_URL)")
    rq.add_argument("--url", help="the web process's address as the reviewer reaches it "
                    "(https://HOST), for the prompt's endpoints (default: the "
                    "QUESTBOT_PUBLIC_URL setting)")
    rq.add_argument("--producer-session", help="the session id of whoever produced the work "
                    "(default: questbot's agent for the quest)")
    rq.add_argument("--json", action="store_true", help="print it as JSON")
    rq.set_defaults(func=run)
