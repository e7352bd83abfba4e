"""Webhook deliveries shaped and signed exactly as GitHub sends them.

Payloads start from the real examples GitHub publishes (``@octokit/webhooks-examples``, by
event and upstream file name: ``questbot_testing.published``) with deep-merged overrides, so the
bot is tested on GitHub's shapes rather
than on hand-written dictionaries. The body bytes are serialised once and signed as they are
sent: HMAC-SHA256 in ``X-Hub-Signature-256`` and the legacy SHA-1 in ``X-Hub-Signature``
(https://docs.github.com/en/webhooks/using-webhooks/validating-webhook-deliveries).
"""

from __future__ import annotations

import copy
import hashlib
import hmac
import json
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import aiohttp

from questbot_testing import published
from questbot_testing.published import Example

USER_AGENT = "GitHub-Hookshot/fakegithub"

# Where each event keeps the SHA it is about and the object whose author is "the user".
_HEAD_SHA_PATHS: dict[str, list[tuple[str, ...]]] = {
    "pull_request": [("pull_request", "head", "sha")],
    "pull_request_review": [("pull_request", "head", "sha"), ("review", "commit_id")],
    "check_run": [("check_run", "head_sha"), ("check_run", "check_suite", "head_sha")],
    "check_suite": [("check_suite", "head_sha")],
    "push": [("after",)],
    "status": [("sha",)],
    "workflow_run": [("workflow_run", "head_sha")],
    "workflow_job": [("workflow_job", "head_sha")],
}
_AUTHORED = ("comment", "review", "issue", "pull_request")


def example_files() -> list[Example]:
    """Every example payload GitHub publishes for the events questbot reads, sorted by event
    and name (``questbot_testing.published``)."""
    return list(published.webhook_examples())


def load_example(event: str, name: str = "payload.json") -> dict[str, Any]:
    """An example payload by event and file name; ``"opened"`` means ``opened.payload.json``."""
    named = {e.name: e for e in published.webhook_examples() if e.event == event}
    example = named.get(name) or named.get(f"{name}.payload.json")
    if example is None:
        known = ", ".join(named) or "none"
        raise FileNotFoundError(f"no {event} example named {name!r}; known: {known}")
    return example.load()


def deep_merge(base: Mapping[str, Any], overrides: Mapping[str, Any]) -> dict[str, Any]:
    """``base`` with ``overrides`` merged in: mappings merge key by key, anything else replaces."""
    out = copy.deepcopy(dict(base))
    for key, value in overrides.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), Mapping):
            out[key] = deep_merge(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def _set(payload: dict[str, Any], path: tuple[str, ...], value: Any) -> None:
    node = payload
    for key in path[:-1]:
        if not isinstance(node.get(key), dict):
            return
        node = node[key]
    if path[-1] in node:
        node[path[-1]] = value


def build_payload(
    event: str,
    example: str = "payload.json",
    overrides: Mapping[str, Any] | None = None,
    *,
    repository: str | None = None,
    installation_id: int | None = None,
    head_sha: str | None = None,
    comment_body: str | None = None,
    user: str | None = None,
    user_type: str | None = None,
) -> dict[str, Any]:
    """A payload from an example with the usual fields replaced, then ``overrides`` merged.

    ``repository`` ("owner/name") rewrites the repository's name, full name and owner;
    ``head_sha`` goes wherever this event keeps its SHA; ``user`` becomes the sender and the
    author of the comment, review, issue or pull request the event is about.
    """
    payload = load_example(event, example)
    if repository is not None:
        owner, name = repository.split("/", 1)
        if isinstance(payload.get("repository"), dict):
            payload["repository"] = deep_merge(
                payload["repository"],
                {"name": name, "full_name": repository, "owner": {"login": owner}},
            )
        if "organization" in payload and isinstance(payload["organization"], dict):
            payload["organization"]["login"] = owner
    if installation_id is not None:
        payload["installation"] = {"id": installation_id, "node_id": f"MDIz{installation_id}"}
    if head_sha is not None:
        for path in _HEAD_SHA_PATHS.get(event, []):
            _set(payload, path, head_sha)
    if comment_body is not None and isinstance(payload.get("comment"), dict):
        payload["comment"]["body"] = comment_body
    if user is not None or user_type is not None:
        people = [payload.get("sender")]
        people += [payload[k].get("user") for k in _AUTHORED if isinstance(payload.get(k), dict)]
        for person in people:
            if isinstance(person, dict):
                if user is not None:
                    person["login"] = user
                if user_type is not None:
                    person["type"] = user_type
    return deep_merge(payload, overrides or {})


def signature_headers(body: bytes, secret: str | bytes) -> dict[str, str]:
    """GitHub's two signature headers for ``body``."""
    key = secret.encode() if isinstance(secret, str) else secret
    sha256 = hmac.new(key, body, hashlib.sha256).hexdigest()
    sha1 = hmac.new(key, body, hashlib.sha1).hexdigest()
    return {"X-Hub-Signature-256": f"sha256={sha256}", "X-Hub-Signature": f"sha1={sha1}"}


@dataclass(frozen=True)
class Delivery:
    """One webhook delivery: the exact body bytes and the headers GitHub would send."""

    event: str
    id: str
    payload: dict[str, Any]
    body: bytes
    headers: dict[str, str]


def build_delivery(
    event: str,
    payload: Mapping[str, Any],
    secret: str | bytes,
    *,
    delivery_id: str | None = None,
    hook_id: int = 123456789,
    target_id: int = 1,
    target_type: str = "integration",
) -> Delivery:
    """Serialise ``payload`` once and sign those bytes, as GitHub's Hookshot does."""
    body = json.dumps(payload, separators=(",", ":")).encode()
    ident = delivery_id or str(uuid.uuid4())
    headers = {
        "Content-Type": "application/json",
        "User-Agent": USER_AGENT,
        "X-GitHub-Event": event,
        "X-GitHub-Delivery": ident,
        "X-GitHub-Hook-ID": str(hook_id),
        "X-GitHub-Hook-Installation-Target-ID": str(target_id),
        "X-GitHub-Hook-Installation-Target-Type": target_type,
        **signature_headers(body, secret),
    }
    return Delivery(event, ident, dict(payload), body, headers)


@dataclass(frozen=True)
class DeliveryResult:
    """What the receiver answered."""

    delivery: Delivery
    status: int
    body: str


async def send(
    url: str, delivery: Delivery, *, session: aiohttp.ClientSession | None = None
) -> DeliveryResult:
    """POST ``delivery`` to ``url``; returns the receiver's status and body."""
    own = session is None
    client = aiohttp.ClientSession() if session is None else session
    try:
        async with client.post(url, data=delivery.body, headers=delivery.headers) as response:
            return DeliveryResult(delivery, response.status, await response.text())
    finally:
        if own:
            await client.close()
