"""Reading GitHub's webhook payloads defensively: a field of the wrong type is a missing one.

GitHub's examples show fields that are absent or null on some deliveries, and a payload may be
damaged on its way; every reader here answers a value of the type it declares, or the empty
one, so every concern's router (``bot.failures.signals``, ``bot.pulls.signals``,
``bot.commands.signals``, ``bot.inbox.signals``) holds its types (``tests/fuzz`` checks it on
damaged real payloads). ``Sink`` is where those routers put what they read.
"""

from __future__ import annotations

from typing import Any, Protocol

from bot.adapters import AppIdentity


class Sink(Protocol):
    """Where a router's handlers put intents (``bot.intake.routes.Intents``); ``app`` tells
    questbot's own check runs, suites and pushes apart."""

    app: AppIdentity
    items: list[Any]


def obj(value: object) -> dict[str, Any]:
    """``value`` if it is a JSON object, else an empty one: a field of another type is absent."""
    return value if isinstance(value, dict) else {}


def text(value: object) -> str:
    return value if isinstance(value, str) else ""


MAX_ID = 2**63
"""GitHub's ids and numbers are 64-bit; a larger one would be refused by every call using it."""


def ident(value: object) -> int | None:
    """A positive GitHub id or number; ``True`` is not one, though Python says it is an int."""
    if isinstance(value, int) and not isinstance(value, bool) and 0 < value < MAX_ID:
        return value
    return None


def items(value: object) -> list[dict[str, Any]]:
    """The objects of a JSON array (anything else in it, or a non-array, is skipped)."""
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []


def repo_of(data: dict[str, Any]) -> str | None:
    return text(obj(data.get("repository")).get("full_name")) or None


def default_branch(data: dict[str, Any]) -> str:
    return text(obj(data.get("repository")).get("default_branch")) or "main"


def is_bot(user: object) -> bool:
    """GitHub marks App and machine accounts with ``type: Bot``. The login is not evidence:
    an account called ``something[bot]`` that GitHub calls a User is a person's account."""
    return obj(user).get("type") == "Bot"


def login_of(user: object) -> str:
    return text(obj(user).get("login"))


def slug_of(thing: dict[str, Any]) -> str:
    """The slug of the App a check run or suite belongs to."""
    return text(obj(thing.get("app")).get("slug"))
