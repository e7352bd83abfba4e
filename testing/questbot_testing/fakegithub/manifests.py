"""The GitHub App manifest flow as GitHub runs it (BEHAVIOUR.md §13): two web pages and one
REST operation.

``POST /settings/apps/new?state=S`` (or ``/organizations/{org}/settings/apps/new``) takes a form
with one field, ``manifest`` (JSON). GitHub checks it (``url`` is required, and ``url`` inside
``hook_attributes`` when they are given — docs: apps/sharing-github-apps/registering-a-github-
app-from-a-manifest, "GitHub App Manifest parameters") and shows the person, signed in, a page
to name the App and confirm; an invalid manifest gets a page listing what is wrong (its exact
wording **(unconfirmed)**). Confirming (``POST /settings/apps/new/confirm``) redirects the
browser to the manifest's ``redirect_url`` with ``?code=…&state=S``.

``POST /app-manifests/{code}/conversions`` (``apps/create-from-manifest``, no authentication)
answers 201 with the App — the fake's own: its id, its key pair's private key, its webhook
secret — and the manifest's permissions and events. A code works **once**, and only within
**one hour** of being made (GitHub's docs: "within one hour"; single use per the docs of
clients such as github-app-forge); any other code is 404 ``Not Found`` (the status for an
expired or used code **(unconfirmed)**: 404 is what the description lists for a code GitHub
does not know). The App's webhook then goes to the manifest's hook URL, as GitHub's does.
"""

from __future__ import annotations

import html
import json
import re
import secrets
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode, urlsplit

from aiohttp import web

from questbot_testing.fakegithub.calls import Call, Reply, not_found

if TYPE_CHECKING:
    from questbot_testing.fakegithub.server import FakeGitHub

CODE_LIFETIME_S = 3600.0
"""§13: the flow must finish within one hour of the code being made."""
_NEW_APP = re.compile(r"^(?:/organizations/(?P<org>[A-Za-z0-9-]+))?/settings/apps/new$")
_CONFIRM = "/settings/apps/new/confirm"
_PERMISSION_LEVELS = frozenset({"read", "write", "admin"})


@dataclass
class Pending:
    """A manifest GitHub accepted, waiting for the person to confirm."""

    manifest: dict[str, Any]
    state: str
    owner: str


@dataclass
class Code:
    manifest: dict[str, Any]
    owner: str
    name: str
    made_at: float = field(default_factory=time.time)
    used: bool = False


@dataclass
class ManifestFlow:
    """The flow's state in one fake: the pages' pending manifests, the codes, and what was
    registered (``registered``: each conversion's manifest, for tests to read)."""

    signed_in: str = "octocat"
    """The person whose browser posts the manifest (owner unless an organization is named)."""
    pending: dict[str, Pending] = field(default_factory=dict)
    codes: dict[str, Code] = field(default_factory=dict)
    registered: list[dict[str, Any]] = field(default_factory=list)

    def is_page(self, method: str, path: str) -> bool:
        """A request for github.com's web pages, not the API: the flow's two forms, and the
        icon a browser asks every site for."""
        if method == "GET" and path == "/favicon.ico":
            return True
        return method == "POST" and (path == _CONFIRM or _NEW_APP.match(path) is not None)

    def age_codes(self, seconds: float) -> None:
        """Make every code ``seconds`` older (a test's way to let an hour pass)."""
        for code in self.codes.values():
            code.made_at -= seconds

    async def page(self, request: web.Request) -> web.Response:
        if request.method == "GET":
            return web.Response(status=404)
        form = await request.post()
        if request.path == _CONFIRM:
            return self._confirm(str(form.get("pending", "")), str(form.get("name", "")))
        found = _NEW_APP.match(request.path)
        assert found is not None
        try:
            manifest = json.loads(str(form.get("manifest", "")))
        except ValueError:
            return _page(422, "Invalid GitHub App manifest", "<p>The manifest is not JSON.</p>")
        problems = manifest_problems(manifest)
        if problems:
            listed = "".join(f"<li>{html.escape(p)}</li>" for p in problems)
            return _page(422, "Invalid GitHub App manifest", f"<ul id='problems'>{listed}</ul>")
        owner = found.group("org") or self.signed_in
        token = secrets.token_urlsafe(16)
        self.pending[token] = Pending(manifest, request.query.get("state", ""), owner)
        name = html.escape(str(manifest.get("name") or ""), quote=True)
        return _page(200, "Create GitHub App", f"""
<h1>Create GitHub App for {html.escape(owner)}</h1>
<form method="post" action="{_CONFIRM}">
<input type="hidden" name="pending" value="{token}">
<label>GitHub App name <input id="app-name" name="name" value="{name}"></label>
<button type="submit" id="create">Create GitHub App for {html.escape(owner)}</button>
</form>""")

    def _confirm(self, token: str, name: str) -> web.Response:
        pending = self.pending.pop(token, None)
        if pending is None:
            return _page(404, "Not Found", "<p>This page has expired; start again.</p>")
        name = name.strip() or str(pending.manifest.get("name") or "")
        if not name:
            return _page(422, "Invalid GitHub App", "<p>Name can't be blank</p>")
        code = secrets.token_hex(10)
        self.codes[code] = Code(pending.manifest, pending.owner, name)
        redirect = str(pending.manifest.get("redirect_url") or "")
        if not redirect:
            return _page(200, "GitHub App created", f"<p>Code: <code>{code}</code></p>")
        query = urlencode({"code": code, "state": pending.state})
        return web.Response(status=302, headers={"Location": f"{redirect}?{query}"})

    def convert(self, code: str, now: float | None = None) -> Code | None:
        """The code's registration, once; ``None`` for a code unknown, used or expired."""
        found = self.codes.get(code)
        now = time.time() if now is None else now
        if found is None or found.used or now - found.made_at > CODE_LIFETIME_S:
            return None
        found.used = True
        self.registered.append(found.manifest)
        return found


def manifest_problems(manifest: Any) -> list[str]:
    """What GitHub refuses in a manifest (the documented parameters' types and the two
    required URLs)."""
    if not isinstance(manifest, dict):
        return ["the manifest is not a JSON object"]
    problems = []
    if not _is_url(manifest.get("url")):
        problems.append("url is required: the App's homepage (an http(s) URL)")
    hook = manifest.get("hook_attributes")
    if hook is not None:
        if not isinstance(hook, dict) or not _is_url(hook.get("url")):
            problems.append("hook_attributes.url is required when hook_attributes is given")
        elif "active" in hook and not isinstance(hook["active"], bool):
            problems.append("hook_attributes.active must be true or false")
    for key in ("redirect_url", "setup_url"):
        if key in manifest and not _is_url(manifest[key]):
            problems.append(f"{key} must be an http(s) URL")
    for key in ("public", "request_oauth_on_install", "setup_on_update"):
        if key in manifest and not isinstance(manifest[key], bool):
            problems.append(f"{key} must be true or false")
    events = manifest.get("default_events", [])
    if not isinstance(events, list) or not all(isinstance(e, str) for e in events):
        problems.append("default_events must be a list of event names")
    permissions = manifest.get("default_permissions", {})
    if not isinstance(permissions, dict) or not all(
            isinstance(v, str) and v in _PERMISSION_LEVELS for v in permissions.values()):
        problems.append("default_permissions must map permission names to read, write or "
                        "admin")
    return problems


def _is_url(value: Any) -> bool:
    if not isinstance(value, str):
        return False
    parts = urlsplit(value)
    return parts.scheme in ("http", "https") and bool(parts.hostname)


def _page(status: int, title: str, body: str) -> web.Response:
    text = (f"<!doctype html><html><head><title>{html.escape(title)}</title></head>"
            f"<body>{body}</body></html>")
    return web.Response(status=status, text=text, content_type="text/html")


async def create_from_manifest(call: Call) -> Reply:
    """``apps/create-from-manifest``: the fake's App, made from the code's manifest."""
    fake: FakeGitHub = call.fake
    found = fake.manifests.convert(call.params["code"])
    if found is None:
        raise not_found()
    manifest = found.manifest
    slug = re.sub(r"[^a-z0-9]+", "-", found.name.lower()).strip("-") or "app"
    fake.world.app_slug = slug
    hook = manifest.get("hook_attributes")
    if isinstance(hook, dict) and hook.get("active", True):
        fake.webhook_url = str(hook["url"])
    body = call.render.api.example("integration-from-manifest")
    body.update(
        id=fake.world.app_id, slug=slug, name=found.name,
        description=manifest.get("description") or "",
        external_url=manifest["url"], html_url=f"https://github.com/apps/{slug}",
        permissions=dict(manifest.get("default_permissions") or {}),
        events=list(manifest.get("default_events") or []),
        pem=fake.keys.private_pem, webhook_secret=fake.webhook_secret,
        client_id=f"Iv23li{secrets.token_hex(7)}", client_secret=secrets.token_hex(20),
    )
    body["owner"] = {**body["owner"], "login": found.owner}
    return Reply(201, body)
