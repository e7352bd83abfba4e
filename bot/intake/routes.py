"""Webhook payloads → intents, every concern's router combined in one place, with no I/O.

Each concern reads its own events (bedevere's shape): failing checks and labelled issues
(``bot.failures.signals``), comments and buttons (``bot.commands.signals``), the quest's pull
request and pushes (``bot.pulls.signals``), the inbox issue (``bot.inbox.signals``), the
repository's own life (``bot.repository.signals``);
installations are read here. ``ROUTER`` combines them and ``read_intents`` runs it: a handler
reads a payload and appends intents — nothing more. Turning an intent into core events needs
lookups, and that is each concern's intake (``bot.intake.intake`` hands it over). Payloads are
read defensively (``bot.github.payloads``): a missing or mistyped field means "not for us",
never a crash; ``tests/fuzz`` checks it on damaged real payloads.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from gidgethub import routing, sansio

from bot.adapters import AppIdentity
from bot.commands.signals import ButtonPress, CommentCommands, conversation
from bot.failures.signals import Failure, IssueSignal, Passed, failures
from bot.github.payloads import ident, items, obj, repo_of, text
from bot.inbox.signals import InboxClosed, InboxTicked, inbox
from bot.pulls.signals import (
    BasePush,
    PullClosed,
    PullReopened,
    QuestPush,
    ReviewSubmitted,
    pulls,
    pushes,
)
from bot.repository.signals import RepositoryChanged, lives


@dataclass(frozen=True, slots=True)
class Installed:
    installation_id: int
    repos: tuple[str, ...]


Intent = Installed | Failure | Passed | IssueSignal | QuestPush | BasePush | CommentCommands | \
    ButtonPress | PullClosed | PullReopened | ReviewSubmitted | InboxTicked | InboxClosed | \
    RepositoryChanged


@dataclass
class Intents:
    """Where handlers put what they read; ``app`` tells questbot's own check runs, suites and
    pushes apart (``GET /app``: an App need not be called questbot)."""

    app: AppIdentity
    items: list[Intent] = field(default_factory=list)


installations = routing.Router()


@installations.register("installation")
@installations.register("installation_repositories")
async def _installed(event: sansio.Event, out: Intents) -> None:
    inst = ident(obj(event.data.get("installation")).get("id"))
    if inst is None:
        return
    listed = items(event.data.get("repositories")) or items(
        event.data.get("repositories_added"))
    repos = tuple(name for r in listed if (name := text(r.get("full_name"))))
    if repos and event.data.get("action") not in {"deleted", "removed"}:
        out.items.append(Installed(inst, repos))


ROUTER = routing.Router(installations, failures, pushes, conversation, pulls, inbox, lives)
EVENTS_READ: frozenset[str] = frozenset(ROUTER._shallow_routes) | frozenset(ROUTER._deep_routes)
"""Every event a handler here reads (gidgethub's ``Router`` keeps its routes in these two
dicts and lists them nowhere else): the events ``app.yml`` subscribes to, besides the
installation events every App gets, and the ones the web process stores."""


async def read_intents(event_name: str, data: dict[str, Any], *, delivery_id: str,
                       app: AppIdentity) -> list[Intent]:
    """Every intent one delivery holds (often none: most deliveries are not for questbot)."""
    out = Intents(app)
    if not isinstance(data.get("action", ""), str):
        # gidgethub looks the action up in a dict: an array or object there would raise
        data = {key: value for key, value in data.items() if key != "action"}
    event = sansio.Event(data, event=event_name, delivery_id=delivery_id)
    await ROUTER.dispatch(event, out)
    inst = ident(obj(data.get("installation")).get("id"))
    repo = repo_of(data)
    if inst is not None and repo is not None:
        out.items.insert(0, Installed(inst, (repo,)))
    return out.items
