"""People editing and closing issues: a ticked task-list box is an edit of the issue's body.

``issues`` ``edited`` carries the issue as it is now, its body before in ``changes.body.from``,
and the person as ``sender`` (on GitHub, ticking a box in someone else's issue needs the rights
to edit it; the box is a click, the webhook is an ordinary edit). ``closed`` carries the issue as
it is after. Shapes from GitHub's example ``issues/edited.payload.json``; GitHub's
examples have no ``closed`` one, so it is the same shape with ``action: closed`` and no
``changes``, as GitHub's docs describe it (webhook-events-and-payloads#issues).
"""

from __future__ import annotations

import re
from typing import Any

from questbot_testing.fakegithub.server import FakeGitHub
from questbot_testing.fakegithub.state import Issue, Repository
from questbot_testing.fakegithub.webhooks import (
    DeliveryResult,
    build_delivery,
    build_payload,
    deep_merge,
)


def _kind(login: str) -> str:
    return "Bot" if login.endswith("[bot]") else "User"


async def _deliver(fake: FakeGitHub, repo: Repository, issue: Issue, action: str,
                   extra: dict[str, Any], sender: str) -> DeliveryResult:
    payload = build_payload("issues", "edited", installation_id=repo.installation_id,
                            user=sender, user_type=_kind(sender))
    payload = deep_merge(payload, {"repository": fake._webhook_repo(repo),
                                   "issue": fake._webhook_issue(repo, issue), **extra})
    payload["action"] = action
    if action != "edited":
        payload.pop("changes", None)
    delivery = build_delivery("issues", payload, fake.webhook_secret,
                              target_id=fake.world.app_id)
    return await fake._send(delivery)


async def edit_issue(fake: FakeGitHub, full_name: str, number: int, body: str, *,
                     user: str) -> DeliveryResult:
    """``user`` replaces issue ``number``'s body; sends ``issues`` ``edited``."""
    repo = fake.repo(full_name)
    issue = repo.issues[number]
    before, issue.body = issue.body or "", body
    return await _deliver(fake, repo, issue, "edited", {"changes": {"body": {"from": before}}},
                          user)


async def tick(fake: FakeGitHub, full_name: str, number: int, marker: str, *,
               user: str) -> DeliveryResult:
    """``user`` ticks the task-list box on the line holding ``marker``, as GitHub's click does
    (``- [ ]`` becomes ``- [x]`` on that line, nothing else changes)."""
    body = fake.repo(full_name).issues[number].body or ""
    lines = body.split("\n")
    for index, line in enumerate(lines):
        if marker in line:
            lines[index] = re.sub(r"\[ \]", "[x]", line, count=1)
            break
    else:
        raise AssertionError(f"no box with {marker!r} in #{number}")
    return await edit_issue(fake, full_name, number, "\n".join(lines), user=user)


async def close_issue(fake: FakeGitHub, full_name: str, number: int, *,
                      user: str) -> DeliveryResult:
    """``user`` closes issue ``number``; sends ``issues`` ``closed``."""
    repo = fake.repo(full_name)
    issue = repo.issues[number]
    issue.state = "closed"
    return await _deliver(fake, repo, issue, "closed", {}, user)
