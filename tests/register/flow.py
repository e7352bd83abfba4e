"""Walking the manifest flow the way a browser does, with aiohttp: questbot's page, the form
post to (fake) GitHub, the confirmation, and the redirect back to questbot's callback."""

from __future__ import annotations

import html
import json
import re
from dataclasses import dataclass
from typing import Any

import aiohttp

from bot.register.options import RegisterOptions, register_options
from questbot_testing import PROJECT
from questbot_testing.fakegithub import FakeGitHub

WEBHOOK_URL = "https://questbot.test/webhook"


def options_for(fake: FakeGitHub, tmp: Any, **overrides: Any) -> RegisterOptions:
    return register_options(
        environ={"GITHUB_URL": fake.url, "GITHUB_API_URL": fake.url}, port=0,
        manifest=PROJECT / "app.yml", env_file=tmp / ".env", key_dir=tmp / "keys",
        webhook_url=overrides.pop("webhook_url", WEBHOOK_URL), **overrides)


def field(text: str, pattern: str) -> str:
    found = re.search(pattern, text)
    assert found is not None, f"no {pattern!r} in:\n{text}"
    return html.unescape(found[1])


@dataclass
class Walk:
    """What the browser saw on the way."""

    form_action: str
    manifest: dict[str, Any]
    callback: str
    """The URL GitHub sent the browser back to."""


async def to_github(session: aiohttp.ClientSession, page_url: str, *, name: str = "") -> Walk:
    """Open questbot's page, post its form to GitHub, confirm; stop at GitHub's redirect."""
    async with session.get(page_url) as page:
        assert page.status == 200
        text = await page.text()
    action = field(text, r'<form id="manifest-form" action="([^"]+)"')
    manifest = json.loads(field(text, r'name="manifest" value="([^"]+)"'))
    async with session.post(action, data={"manifest": json.dumps(manifest)}) as github:
        assert github.status == 200, await github.text()
        confirm = await github.text()
    base = action.split("/settings/", 1)[0].split("/organizations/", 1)[0]
    token = field(confirm, r'name="pending" value="([^"]+)"')
    async with session.post(f"{base}/settings/apps/new/confirm",
                            data={"pending": token, "name": name},
                            allow_redirects=False) as confirmed:
        assert confirmed.status == 302
        return Walk(action, manifest, confirmed.headers["Location"])


async def back(session: aiohttp.ClientSession, callback: str) -> tuple[int, str]:
    async with session.get(callback) as landed:
        return landed.status, await landed.text()
