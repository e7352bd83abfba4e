"""The local page of ``python -m bot register`` and its callback: two routes on loopback.

``GET /`` shows what will be registered (the webhook URL, the permissions and events of
``app.yml``) and a form whose one hidden field, ``manifest``, holds the manifest as JSON; its
button posts it to GitHub's "new App" page with this run's ``state`` in the query. Nothing on
it runs a script: the person presses the button, GitHub asks them to name and confirm the App.

``GET /callback?code=…&state=…`` is where GitHub sends the browser back (the manifest's
``redirect_url``). A ``state`` other than this run's is refused (the link was not made by this
run: someone else's code must not configure this questbot); the code is exchanged
(``bot.github.manifest.exchange``) and the credentials saved (``credentials``). A refused
code (used, or over an hour old) gets a page that says so and links back to ``/`` to start
again. Once a registration is saved, ``done`` resolves and later callbacks are answered 410:
the command has finished.

The pages forbid scripts and let forms go only to this page and GitHub
(``Content-Security-Policy``), and say ``Cache-Control: no-store``: the callback's page shows
where the key went, never the key.
"""

from __future__ import annotations

import asyncio
import hmac
import html
import json
import logging
import secrets
import webbrowser
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

import aiohttp
from aiohttp import web

from bot.control_chars import for_terminal
from bot.github.manifest import (
    CodeRefused,
    Registration,
    exchange,
    manifest_for,
    new_app_url,
    read_manifest,
)
from bot.register.credentials import Saved, save_registration
from bot.register.errors import RegistrationError
from bot.register.options import RegisterOptions

log = logging.getLogger(__name__)

_STYLE = ("body{font-family:system-ui,sans-serif;max-width:44rem;margin:2rem auto;"
          "line-height:1.5;padding:0 1rem}code,pre{background:#f4f4f4;padding:0 .2rem}"
          "pre{padding:.5rem;overflow:auto}button{font-size:1.1rem;padding:.4rem 1rem}")


class Registrar:
    """The page and callback of one registration: ``async with Registrar(options) as r:``,
    send a browser to ``r.url``, then ``await r.done`` for what was saved."""

    def __init__(self, options: RegisterOptions) -> None:
        self.options = options
        self.app_yml = read_manifest(options.manifest)
        self.state = secrets.token_urlsafe(24)
        self.done: asyncio.Future[Saved] = asyncio.get_running_loop().create_future()
        self._runner: web.AppRunner | None = None
        self._session: aiohttp.ClientSession | None = None
        self.url = ""
        """The page's address, once started: ``http://HOST:PORT/``."""

    async def __aenter__(self) -> Registrar:
        app = web.Application()
        app.router.add_get("/", self.page)
        app.router.add_get("/callback", self.callback)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.options.host, self.options.port)
        await site.start()
        server: Any = site._server
        port = server.sockets[0].getsockname()[1] if server is not None else self.options.port
        host = self.options.host
        self.url = f"http://{f'[{host}]' if ':' in host else host}:{port}/"
        self._session = aiohttp.ClientSession()
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._session is not None:
            await self._session.close()
        if self._runner is not None:
            await self._runner.cleanup()
        if not self.done.done():
            self.done.cancel()

    # -- what GitHub is sent -------------------------------------------------------------------

    @property
    def manifest(self) -> dict[str, Any]:
        return manifest_for(self.app_yml, redirect_url=self.url + "callback",
                            webhook_url=self.options.webhook_url, name=self.options.name)

    @property
    def form_action(self) -> str:
        return new_app_url(self.options.github_url, self.state, org=self.options.org)

    # -- the routes ----------------------------------------------------------------------------

    async def page(self, request: web.Request) -> web.Response:
        manifest = self.manifest
        hook = manifest.get("hook_attributes") or {}
        permissions = "".join(f"<li><code>{_e(k)}: {_e(v)}</code></li>" for k, v in
                              sorted((manifest.get("default_permissions") or {}).items()))
        events = ", ".join(f"<code>{_e(e)}</code>" for e in manifest.get("default_events") or [])
        owner = (f"the organization <code>{_e(self.options.org)}</code>" if self.options.org
                 else "your account")
        body = f"""
<h1>Register {_e(manifest.get("name", "questbot"))} as a GitHub App</h1>
<p>This sends questbot's App manifest (<code>{_e(self.options.manifest)}</code>) to
<code>{_e(self.options.github_url)}</code>, to make a GitHub App owned by {owner}. GitHub asks
you to name the App and confirm, then sends you back here, and questbot saves what it needs:
the App's id, slug and webhook secret in <code>{_e(self.options.env_file)}</code>, its private
key in a file in <code>{_e(self.options.key_dir)}</code> that only you can read.</p>
<p>GitHub will send webhooks to <code id="webhook-url">{_e(hook.get("url", "(none)"))}</code>
(change it later on the App's settings page). The App asks for:</p>
<ul id="permissions">{permissions}</ul>
<p>and receives these events: {events}.</p>
<form id="manifest-form" action="{_e(self.form_action)}" method="post">
<input type="hidden" name="manifest" value="{_e(json.dumps(manifest))}">
<button type="submit" id="register">Register on GitHub</button>
</form>
<details><summary>The manifest</summary><pre>{_e(json.dumps(manifest, indent=2))}</pre></details>
"""
        return self._html(200, "Register questbot", body)

    async def callback(self, request: web.Request) -> web.Response:
        if self.done.done():
            return self._html(410, "Already registered", "<p>This registration has finished; "
                              "the register command is no longer waiting. Run <code>python -m "
                              "bot register</code> again to make another App.</p>")
        code, state = request.query.get("code", ""), request.query.get("state", "")
        if not hmac.compare_digest(state.encode(), self.state.encode()):
            return self._again(400, "This link was not made by this registration",
                               "GitHub sends back the state the page sent; this one does not "
                               "match, so the code is not used.")
        if not code:
            return self._again(400, "GitHub sent no code", "The address has no <code>code"
                               "</code>: GitHub adds one when the App is made.")
        assert self._session is not None
        try:
            registration = await exchange(self._session, self.options.rest_url, code)
            saved = save_registration(registration, env_file=self.options.env_file,
                                      key_dir=self.options.key_dir,
                                      api_url=self.options.rest_url)
        except CodeRefused as exc:
            return self._again(400, "GitHub did not accept the code", _e(str(exc)) + ". A code "
                               "works once, within an hour of GitHub making it.")
        except (RegistrationError, OSError) as exc:
            return self._again(500, "The App was made but could not be saved", _e(str(exc)))
        self.done.set_result(saved)
        r = saved.registration
        body = f"""
<h1 id="registered">{_e(r.name)} is registered</h1>
<p>GitHub made the App <code>{_e(r.slug)}</code> (id <code>{r.id}</code>){_owned(r)}.
questbot saved its id, slug and webhook secret in <code>{_e(saved.env_file)}</code> and its
private key in <code id="key-path">{_e(saved.key_path)}</code>, readable by you only.</p>
<p>Next: <a id="install" href="{_e(saved.install_url)}">install the App</a> on the repositories
questbot should look after, then start it: <code>python -m bot serve</code> and
<code>python -m bot worker</code>. You can close this page.</p>
"""
        return self._html(200, "questbot is registered", body)

    # -- pages ---------------------------------------------------------------------------------

    def _again(self, status: int, title: str, why: str) -> web.Response:
        return self._html(status, title, f"<h1>{_e(title)}</h1><p id='problem'>{why}</p>"
                          f"<p><a id='again' href='/'>Start again</a>: the page sends the "
                          "manifest once more and GitHub makes a new code.</p>")

    def _html(self, status: int, title: str, body: str) -> web.Response:
        github = urlsplit(self.options.github_url)
        policy = (f"default-src 'none'; style-src 'unsafe-inline'; form-action 'self' "
                  f"{github.scheme}://{github.netloc}; base-uri 'none'; frame-ancestors 'none'")
        text = (f"<!doctype html><html lang='en'><head><meta charset='utf-8'>"
                f"<title>{_e(title)}</title><link rel='icon' href='data:,'>"
                f"<style>{_STYLE}</style></head><body>{body}</body></html>")
        return web.Response(status=status, text=text, content_type="text/html",
                            headers={"Content-Security-Policy": policy,
                                     "Cache-Control": "no-store",
                                     "Referrer-Policy": "no-referrer"})


def _owned(registration: Registration) -> str:
    owner = registration.owner
    return f", owned by <code>{_e(owner.login)}</code>" if owner is not None else ""


def _e(value: object) -> str:
    return html.escape(str(value), quote=True)


def _say(line: str) -> None:
    """Flushed at once: with stdout a pipe (``| tee``, a supervisor, a test) Python buffers it,
    and the page's address would not show until the command exits — after the wait it asks
    the reader to end. The App's name and owner are GitHub's answer: made inert for the
    terminal (``bot.control_chars``)."""
    print(for_terminal(line), flush=True)


async def register(options: RegisterOptions, *, open_browser: bool = True,
                   say: Callable[[str], None] = _say) -> Saved:
    """Serve the page until a registration is saved; what was saved."""
    async with Registrar(options) as registrar:
        hook = (registrar.manifest.get("hook_attributes") or {}).get("url", "(none)")
        say(f"Open {registrar.url} in a browser signed in to {options.github_url}, and press "
            f"\"Register on GitHub\".\nGitHub will send webhooks to {hook}"
            + ("" if options.webhook_url else " (from app.yml; --webhook-url changes it)")
            + ".\nWaiting for GitHub to send the browser back (Ctrl-C to give up)…")
        if open_browser:
            webbrowser.open(registrar.url)
        saved = await registrar.done
    r = saved.registration
    say(f"Registered {r.name} ({r.slug}, App id {r.id}).\n"
        f"Saved {saved.env_file} (GITHUB_APP_ID, GITHUB_APP_SLUG, GITHUB_WEBHOOK_SECRET, "
        f"GITHUB_PRIVATE_KEY_PATH) and the private key {saved.key_path} (mode 0600).\n"
        f"Next: install it at {saved.install_url}, then run python -m bot serve and "
        "python -m bot worker.")
    return saved
