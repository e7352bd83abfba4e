"""The GitHub App manifest flow, GitHub's side of it: the manifest, where it is posted, and the
exchange of the code GitHub sends back for the App's credentials.

The flow (https://docs.github.com/en/apps/sharing-github-apps/registering-a-github-app-from-a-manifest,
BEHAVIOUR.md §13), as Probot runs it:

1. a page in the person's browser posts a form with one field, ``manifest`` (the JSON of
   ``app.yml`` with the webhook and redirect URLs filled in), to ``GITHUB_URL/settings/apps/new``
   (or ``GITHUB_URL/organizations/ORG/settings/apps/new``), with a ``state`` in the query;
2. the person names the App and confirms; GitHub redirects the browser to the manifest's
   ``redirect_url`` with ``?code=…&state=…``;
3. ``POST /app-manifests/{code}/conversions`` (no authentication: the code is the credential)
   answers 201 with the App's ``id``, ``slug``, ``pem`` and ``webhook_secret``. The code works
   once, within an hour of GitHub making it; any other code is answered 404.

``bot.register`` serves the page and the callback; this module performs no I/O but the one
exchange.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode, urlsplit

import aiohttp
import gidgethub
import yaml
from gidgethub.aiohttp import GitHubAPI
from pydantic import BaseModel, ConfigDict, SecretStr, ValidationError

from bot.errors import ConfigurationError, PermanentError
from bot.github.errors import GitHubAdapterError

GITHUB_URL = "https://github.com"
API_URL = "https://api.github.com"


class ManifestError(GitHubAdapterError, ConfigurationError):
    """``app.yml`` cannot be read as a manifest."""


class CodeRefused(GitHubAdapterError, PermanentError):
    """GitHub did not exchange the code (used, expired, or never made); ``status`` is its
    answer. Start the flow again: a new code comes with a new confirmation."""

    def __init__(self, message: str, *, status: int) -> None:
        super().__init__(message)
        self.status = status


class Owner(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore")

    login: str


class Registration(BaseModel):
    """The parts of GitHub's answer to the conversion that questbot keeps. The client id and
    secret are left out: questbot signs in to nothing with OAuth."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    id: int
    slug: str
    name: str
    html_url: str
    owner: Owner | None = None
    pem: SecretStr
    webhook_secret: SecretStr | None


def api_url_for(github_url: str) -> str:
    """The REST API root of a GitHub: ``api.github.com`` for github.com, ``/api/v3`` on the
    host for GitHub Enterprise Server (https://docs.github.com/en/enterprise-server@latest/rest)."""
    host = urlsplit(github_url).hostname or ""
    if host in ("github.com", "www.github.com"):
        return API_URL
    return github_url.rstrip("/") + "/api/v3"


def new_app_url(github_url: str, state: str, *, org: str | None = None) -> str:
    """Where the manifest form is posted: the person's account, or an organization's."""
    base = github_url.rstrip("/")
    where = f"/organizations/{quote(org, safe='')}" if org else ""
    return f"{base}{where}/settings/apps/new?{urlencode({'state': state})}"


def read_manifest(path: Path) -> dict[str, Any]:
    """``app.yml`` as a mapping; a ``ManifestError`` saying what is wrong with it otherwise."""
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ManifestError(f"{path} not found; run register from questbot's checkout, or "
                            "pass --manifest PATH") from None
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise ManifestError(f"{path} cannot be read as YAML ({exc}); fix it, or pass "
                            "--manifest PATH") from None
    if not isinstance(data, dict) or not isinstance(data.get("default_permissions"), dict):
        raise ManifestError(f"{path} is not a GitHub App manifest (no default_permissions); "
                            "use questbot's app.yml")
    return data


def manifest_for(app: dict[str, Any], *, redirect_url: str, webhook_url: str | None,
                 name: str | None = None) -> dict[str, Any]:
    """The manifest GitHub gets: ``app.yml`` with the callback as ``redirect_url`` and, when
    given, the webhook URL and the App's name put in."""
    manifest: dict[str, Any] = json.loads(json.dumps(app))  # a deep copy of plain data
    manifest["redirect_url"] = redirect_url
    if webhook_url is not None:
        hook = manifest.get("hook_attributes")
        manifest["hook_attributes"] = {**(hook if isinstance(hook, dict) else {}),
                                       "url": webhook_url, "active": True}
    if name is not None:
        manifest["name"] = name
    return manifest


async def exchange(session: aiohttp.ClientSession, api_url: str, code: str) -> Registration:
    """Trade the code for the App's credentials (once: GitHub forgets a code it exchanged)."""
    gh = GitHubAPI(session, "questbot-register", base_url=api_url)
    url = f"/app-manifests/{quote(code, safe='')}/conversions"
    try:
        answer = await gh.post(url, data=b"")
    except gidgethub.HTTPException as exc:
        status = int(exc.status_code)
        reason = ("it has been used already, or it is more than an hour old"
                  if status == 404 else str(exc) or "no reason given")
        raise CodeRefused(f"GitHub refused the registration code ({status}): {reason}; "
                          "register again to get a new one", status=status) from None
    try:
        return Registration.model_validate(answer)
    except ValidationError:
        raise CodeRefused("GitHub's answer to the code has no App id, slug or private key; "
                          "register again, or make the App by hand (README, Setting up)",
                          status=201) from None  # the answer holds the key: not in the trace
