"""The fake GitHub REST server: one aiohttp app, all state in memory, every exchange checked.

Each request goes through the same steps GitHub's front door takes, in this order: injected
faults (``fakegithub.faults``, off by default), the rate-limit knob, route matching
against GitHub's full REST description (404 if undocumented, and 404 — GitHub's answer to a
route it does not know — for an operation GitHub has and the fake does not model; both are
violations), JSON parsing (400), authentication (401, ``fakegithub.credentials``), query
parameters GitHub does not know dropped (a violation), parameter and body validation (422),
the repository lookup (404 if the installation cannot see it), the token's permissions (403,
``fakegithub.permissions``), the secondary limit on content creation (403,
``fakegithub.secondary``), and only then the handler. The handler's JSON answer is
validated against the documented schema for its status. Everything that does not match the
description is appended to :attr:`FakeGitHub.violations`, refusals for permissions to
:attr:`FakeGitHub.denied`, secondary-limit hits to ``secondary.hits``; tests end with
:meth:`FakeGitHub.assert_clean`, which fails on any of them. git's smart HTTP
(``<owner>/<name>.git/…``) is served beside the API by ``fakegithub.smarthttp`` and logged
in :attr:`FakeGitHub.git_requests`.

GETs get an ``ETag`` and answer 304 to a matching ``If-None-Match`` without spending rate limit,
as GitHub does (https://docs.github.com/en/rest/using-the-rest-api/best-practices-for-using-the-rest-api).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import secrets
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote

from aiohttp import web

from questbot_testing.fakegithub import actions_logs, graphql
from questbot_testing.fakegithub.actions import Actions
from questbot_testing.fakegithub.calls import (
    ARCHIVED,
    Call,
    GitHubError,
    Handler,
    Reply,
    not_found,
)
from questbot_testing.fakegithub.credentials import Credentials
from questbot_testing.fakegithub.faults import BEFORE, Faults
from questbot_testing.fakegithub.hooklog import HANDLERS as HOOKS
from questbot_testing.fakegithub.keys import KeyPair, shared_key_pair
from questbot_testing.fakegithub.landing import Landing
from questbot_testing.fakegithub.manifests import ManifestFlow, create_from_manifest
from questbot_testing.fakegithub.openapi import Match, OpenAPI, shared_api
from questbot_testing.fakegithub.render import Renderer
from questbot_testing.fakegithub.routes_checks import HANDLERS as CHECKS
from questbot_testing.fakegithub.routes_ci import HANDLERS as CI
from questbot_testing.fakegithub.routes_git import HANDLERS as GIT
from questbot_testing.fakegithub.routes_issues import HANDLERS as ISSUES
from questbot_testing.fakegithub.routes_pulls import HANDLERS as PULLS
from questbot_testing.fakegithub.rules import invalid_request
from questbot_testing.fakegithub.secondary import ContentLimits
from questbot_testing.fakegithub.smarthttp import HOOK_PATH, SmartHTTP
from questbot_testing.fakegithub.state import World

HANDLERS: dict[str, Handler] = {**CHECKS, **CI, **GIT, **ISSUES, **PULLS, **HOOKS,
                                "apps/create-from-manifest": create_from_manifest}
CONTENT_CREATING = frozenset({"POST", "PATCH", "PUT", "DELETE"})
RATE_LIMIT = 5000
_JWT_PATHS = ("/app", "/app/")


@dataclass
class Exchange:
    """One request the fake received, in arrival order, with the status it answered."""

    method: str
    path: str
    query: dict[str, str]
    json: Any
    status: int = 0
    operation_id: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    fault: str | None = None
    """The fault injected into this exchange (``fakegithub.faults``), if any."""
    permissions: list[tuple[str, str]] = field(default_factory=list)
    """The App permissions this exchange used (``fakegithub.permissions``)."""
    hidden_status: int | None = None
    """What the handler answered before a ``timeout`` fault replaced it with a 502."""
    at: float = field(default_factory=time.time)
    answer: Any = None
    """A GraphQL exchange's answer body (``data`` and ``errors``), for ``as_rest``."""


@dataclass
class _Throttle:
    remaining: int = 0
    status: int = 403
    retry_after: int = 1


class FakeGitHub(Credentials, Actions, Landing):
    """A local GitHub: ``async with FakeGitHub() as fake:`` then point clients at ``fake.url``.

    ``keys`` is the App's key pair (the bot signs JWTs with ``keys.private_pem``);
    ``webhook_url``/``webhook_secret`` say where the helpers in :class:`Actions` deliver events.
    """

    def __init__(
        self,
        *,
        app_id: int = 4242,
        app_slug: str = "questbot",
        keys: KeyPair | None = None,
        webhook_url: str | None = None,
        webhook_secret: str = "fake-github-webhook-secret",
        host: str = "127.0.0.1",
        port: int = 0,
        api: OpenAPI | None = None,
        faults: Faults | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.keys = keys or shared_key_pair()
        self.world = World(app_id=app_id, app_slug=app_slug)
        self.api = api or shared_api()
        self.host, self.port = host, port
        self.webhook_url = webhook_url
        self.webhook_secret = webhook_secret
        self.violations: list[str] = []
        self.denied: list[str] = []
        """Requests refused because the App's permissions do not cover them: questbot's
        manifest (``app.yml``) lacks something it uses, or it uses something it should not."""
        self.requests: list[Exchange] = []
        self.git_requests: list[Exchange] = []
        """git's smart-HTTP requests (``fakegithub.smarthttp``), apart from the API's."""
        self.smart_http = SmartHTTP(self)
        self.render = Renderer(self.api, self.world, f"http://{host}:{port}")
        self._throttle = _Throttle()
        self._used: dict[str, int] = {}
        self._reset_at = int(time.time()) + 3600
        self._runner: web.AppRunner | None = None
        self.secondary = ContentLimits(clock)
        """GitHub's content-creation limits (``fakegithub.secondary``)."""
        self.faults = faults or Faults()
        """Off unless given a rate: see ``fakegithub.faults``."""
        self.control: Callable[[web.Request], Awaitable[web.StreamResponse]] | None = None
        """Serves ``/_fake/control/...`` when set (``fakegithub.control``)."""
        self.manifests = ManifestFlow()
        """The App manifest flow's pages and codes (``fakegithub.manifests``)."""
        super().__init__()

    # -- lifecycle -------------------------------------------------------------------------

    @property
    def url(self) -> str:
        """The base URL to hand to clients, e.g. ``GitHubAPI(..., base_url=fake.url)``."""
        return f"http://{self.host}:{self.port}"

    def make_app(self) -> web.Application:
        app = web.Application(client_max_size=50 * 1024 * 1024)
        app.router.add_route("*", "/{tail:.*}", self._dispatch)
        return app

    async def start(self) -> None:
        self._runner = web.AppRunner(self.make_app())
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.host, self.port)
        await site.start()
        server = site._server
        if self.port == 0 and server is not None:
            self.port = server.sockets[0].getsockname()[1]  # type: ignore[attr-defined]
        self.render.base = self.url

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
        self.smart_http.close()

    async def __aenter__(self) -> FakeGitHub:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    # -- knobs and assertions --------------------------------------------------------------

    def throttle(self, requests: int, *, status: int = 403, retry_after: int = 1) -> None:
        """Answer the next ``requests`` requests with a rate-limit error (403 or 429)."""
        self._throttle = _Throttle(requests, status, retry_after)

    def assert_clean(self) -> None:
        """Fail if any exchange broke the REST description or needed a permission the App
        does not have; call it at fixture teardown."""
        if self.violations:
            listing = "\n  ".join(self.violations)
            raise AssertionError(f"{len(self.violations)} GitHub API violation(s):\n  {listing}")
        if self.denied:
            listing = "\n  ".join(self.denied)
            raise AssertionError(f"{len(self.denied)} request(s) beyond the App's "
                                 f"permissions:\n  {listing}")
        if self.secondary.hits:
            listing = "\n  ".join(self.secondary.hits)
            raise AssertionError(f"{len(self.secondary.hits)} request(s) over GitHub's "
                                 f"secondary limits:\n  {listing}")

    def as_rest(self, operation_id: str | None = None) -> list[Exchange]:
        """Logged exchanges with each GraphQL mutation that stands for a REST write
        (``updatePullRequest``, ``updateIssueComment``, ``createCheckRun``, …) shown as that
        write — its REST operation, a REST-shaped body, 200/201 if GitHub made it, 422 if
        not — in arrival order (``fakegithub.graphql_rest``): what a test that reads "every
        comment questbot edited" reads, however questbot sent it. Optionally one operation."""
        from questbot_testing.fakegithub.graphql_rest import as_rest

        out = [e for exchange in self.requests for e in as_rest(exchange)]
        return [e for e in out if operation_id is None or e.operation_id == operation_id]

    def calls(
        self, operation_id: str | None = None, *, method: str | None = None
    ) -> list[Exchange]:
        """Logged exchanges, optionally only one operation (``"pulls/merge"``) or method."""
        return [
            e
            for e in self.requests
            if (operation_id is None or e.operation_id == operation_id)
            and (method is None or e.method == method)
        ]

    # -- the request pipeline --------------------------------------------------------------

    async def _dispatch(self, request: web.Request) -> web.StreamResponse:
        raw_path = request.raw_path.split("?", 1)[0]
        if self.control is not None and raw_path.startswith("/_fake/control/"):
            return await self.control(request)
        if self.manifests.is_page(request.method, raw_path):  # github.com's pages, not the API
            return await self.manifests.page(request)
        if raw_path.startswith(HOOK_PATH):  # a push's pre-receive hook asks what GitHub refuses
            return await self.smart_http.hook(request)
        if self.smart_http.serves(raw_path):
            exchange = Exchange(request.method, unquote(raw_path), dict(request.query), None)
            exchange.headers = {k.lower(): v for k, v in request.headers.items()}
            self.git_requests.append(exchange)
            return await self.smart_http.handle(request, exchange)
        raw_body = await request.read()
        exchange = Exchange(request.method, unquote(raw_path), dict(request.query), None)
        exchange.headers = {k.lower(): v for k, v in request.headers.items()}
        self.requests.append(exchange)
        if raw_path.startswith((actions_logs.RUN_PREFIX, actions_logs.PREFIX)):
            served = (actions_logs.serve(self, request, raw_path)
                      if raw_path.startswith(actions_logs.PREFIX)
                      else actions_logs.serve_run_logs(self, raw_path))
            exchange.status = served.status
            return served
        fault = self.faults.draw(request.method, raw_path)
        if fault in BEFORE:
            assert fault is not None
            identity = request.headers.get("Authorization", "anonymous")
            reply = self.faults.instead(fault)
        else:
            reply, identity = await self._answer(request, exchange, raw_path, raw_body)
            if fault is not None:
                exchange.hidden_status = reply.status
                await asyncio.sleep(self.faults.hold_s)
                reply = self.faults.timed_out()
        if fault is not None:
            exchange.fault = fault
            self.faults.record(request.method, exchange.path, fault, reply.status)
        exchange.status = reply.status
        return self._finish(request, exchange, reply, identity)

    async def _answer(
        self, request: web.Request, exchange: Exchange, raw_path: str, raw_body: bytes
    ) -> tuple[Reply, str]:
        where = f"{request.method} {exchange.path}"
        identity = request.headers.get("Authorization", "anonymous")
        if self._throttle.remaining > 0:
            self._throttle.remaining -= 1
            return self._throttled(), identity
        if raw_path == "/graphql" and request.method == "POST":
            return await self._graphql(request, exchange, raw_body), identity
        moved = self._moved(request.method, raw_path, request.query_string)
        if moved is not None:
            return moved, identity
        raw_path = self._by_name(raw_path)
        gone = self._no_such_id(request, exchange, raw_path)
        if gone is not None:
            return gone, identity
        found = self.api.match(request.method, raw_path)
        if not isinstance(found, Match):
            problem = "method not documented for this path" if found else "no such operation"
            self.violations.append(f"{where}: {problem} in the REST description")
            return not_found().reply(), identity
        op = found.operation
        exchange.operation_id = op.operation_id
        handler = HANDLERS.get(op.operation_id)
        if handler is None:
            # GitHub has this operation and the fake does not model it: answer as GitHub
            # answers a route it does not know, and make the test that needed it fail
            self.violations.append(f"{where}: the fake does not implement {op.operation_id}")
            return not_found().reply(), identity
        body: Any = None
        if raw_body:
            try:
                body = json.loads(raw_body)
            except ValueError:
                self.violations.append(f"{where}: body is not JSON")
                return GitHubError(400, "Problems parsing JSON").reply(), identity
        exchange.json = body
        try:
            installation_id = self._authenticate(request, raw_path)
            query = dict(request.query)
            unknown = self.api.unknown_query(found, query)
            if unknown:  # GitHub answers as if they were not there (unconfirmed in BEHAVIOUR.md)
                self.violations.append(f"{where} ({op.operation_id}): GitHub ignores the "
                                       f"unknown query parameter(s) {', '.join(unknown)}")
                query = {k: v for k, v in query.items() if k not in unknown}
            problems = self.api.check_request(found, query, body, bool(raw_body))
            if problems:
                self.violations.extend(f"{where} ({op.operation_id}): {p}" for p in problems)
                raise invalid_request("\n".join(problems))
            params = found.path_params
            repo = None
            if "owner" in params and "repo" in params:
                repo = self.world.repository(f"{params['owner']}/{params['repo']}")
                if repo is None or (
                    installation_id is not None and repo.installation_id != installation_id
                ):
                    raise not_found()
            if installation_id is not None:
                self._permitted(request, exchange, op.operation_id, repo, params)
                if repo is not None and repo.archived and request.method in CONTENT_CREATING:
                    raise GitHubError(403, ARCHIVED)  # BEHAVIOUR §23
                if request.method in CONTENT_CREATING:
                    self.secondary.take(installation_id, f"{where} ({op.operation_id})")
            call = Call(
                self,
                params,
                query,
                body,
                repo,
                installation_id,
                request.headers.get("Accept", ""),
            )
            reply = await handler(call)
        except GitHubError as exc:
            reply = exc.reply()
        if reply.raw is None and reply.body is not None:
            problems = self.api.check_response(op, reply.status, reply.body)
            self.violations.extend(f"{where} ({op.operation_id}): {p}" for p in problems)
        return reply, identity

    async def _graphql(self, request: web.Request, exchange: Exchange, raw_body: bytes) -> Reply:
        """``POST /graphql`` with an installation token (``fakegithub.graphql``)."""
        exchange.operation_id = "graphql"
        try:
            installation_id = self._authenticate(request, "/graphql")
        except GitHubError as exc:
            reply = exc.reply()
            reply.body = {"message": exc.message, "documentation_url": graphql.DOCS}
            return reply
        assert installation_id is not None
        try:
            exchange.json = json.loads(raw_body or b"null")
        except ValueError:
            exchange.json = None
        query = exchange.json.get("query") if isinstance(exchange.json, dict) else None
        if isinstance(query, str) and query.lstrip().startswith("mutation"):
            try:
                self.secondary.take(installation_id, "POST /graphql (a mutation)",
                                    graphql.mutations_in(query))
            except GitHubError as exc:
                return exc.reply()
        token = self._token(request)
        reply, fields = await graphql.answer(
            self, installation_id, raw_body, met=exchange.permissions,
            granted=token.permissions if token is not None else None)
        if fields:
            exchange.operation_id = "graphql/" + ",".join(fields)
        exchange.answer = reply.body
        reply.headers["x-ratelimit-resource"] = "graphql"
        return reply

    def _moved(self, method: str, raw_path: str, query: str) -> Reply | None:
        """A renamed repository's old name: a redirect to it by id, 301 for reads and 307 for
        anything else, so the request is repeated there as it was (BEHAVIOUR §23)."""
        if not raw_path.startswith("/repos/"):
            return None
        parts = raw_path.split("/", 4)
        if len(parts) < 4:
            return None
        name = f"{unquote(parts[2])}/{unquote(parts[3])}".lower()
        repo_id = self.world.renamed.get(name)
        if repo_id is None or name in self.world.repositories:
            return None
        rest = f"/{parts[4]}" if len(parts) > 4 else ""
        location = f"{self.url}/repositories/{repo_id}{rest}" + (f"?{query}" if query else "")
        reply = Reply(301 if method in ("GET", "HEAD") else 307,
                      {"message": "Moved Permanently", "url": location,
                       "documentation_url": "https://docs.github.com/rest/guides/"
                       "best-practices-for-using-the-rest-api#follow-redirects"})
        reply.headers["Location"] = location
        return reply

    def _by_name(self, raw_path: str) -> str:
        """``/repositories/<id>/…`` as ``/repos/<owner>/<name>/…``: GitHub answers a
        repository by its id too, and writes its pagination links that way
        (``recorded/paginate-issues.json``). An unknown id is left alone, to be a 404."""
        if not raw_path.startswith("/repositories/"):
            return raw_path
        head, _, rest = raw_path.removeprefix("/repositories/").partition("/")
        for repo in self.world.repositories.values():
            if str(repo.id) == head:
                return f"/repos/{repo.full_name}" + (f"/{rest}" if rest else "")
        return raw_path

    def _no_such_id(self, request: web.Request, exchange: Exchange, raw_path: str) -> Reply | None:
        """``/repositories/<id>/…`` for an id no repository has now — deleted, or never there:
        GitHub answers 404 ``Not Found`` (after the credentials, as for any repository it does
        not show). The operation is the one the path names by name (``repos/get`` for the
        repository itself): GitHub's REST description has no ``/repositories/{id}`` paths, and
        its redirects and pagination links are what point there (``_by_name``)."""
        if not raw_path.startswith("/repositories/"):
            return None
        head, _, rest = raw_path.removeprefix("/repositories/").partition("/")
        if not head.isdigit():
            return None
        found = self.api.match(request.method, "/repos/-/-" + (f"/{rest}" if rest else ""))
        if isinstance(found, Match):
            exchange.operation_id = found.operation.operation_id
        try:
            self._authenticate(request, raw_path)
        except GitHubError as exc:
            return exc.reply()
        return not_found().reply()

    def _throttled(self) -> Reply:
        status = self._throttle.status
        message = (
            "API rate limit exceeded for installation."
            if status == 403
            else "You have exceeded a secondary rate limit. Please wait a few minutes."
        )
        reply = GitHubError(status, message).reply()
        reply.headers["retry-after"] = str(self._throttle.retry_after)
        reply.headers["x-ratelimit-remaining"] = "0"
        return reply

    def _finish(
        self, request: web.Request, exchange: Exchange, reply: Reply, identity: str
    ) -> web.Response:
        if reply.raw is not None:
            payload = reply.raw
        elif reply.body is None:
            payload = b""
        else:
            payload = json.dumps(reply.body).encode()
        headers = dict(reply.headers)
        headers["x-github-request-id"] = secrets.token_hex(8).upper()
        etag = None
        if request.method == "GET" and reply.status == 200:
            etag = f'W/"{hashlib.sha256(identity.encode() + payload).hexdigest()}"'
            headers["ETag"] = etag
        not_modified = etag is not None and _none_match(request.headers.get("If-None-Match"),
                                                        etag)
        if not not_modified:
            self._used[identity] = self._used.get(identity, 0) + 1
        used = self._used.get(identity, 0)
        headers.setdefault("x-ratelimit-remaining", str(max(RATE_LIMIT - used, 0)))
        headers.update(
            {
                "x-ratelimit-limit": str(RATE_LIMIT),
                "x-ratelimit-reset": str(self._reset_at),
                "x-ratelimit-used": str(used),
            }
        )
        headers.setdefault("x-ratelimit-resource", "core")
        if not_modified:
            exchange.status = 304
            return web.Response(status=304, headers=headers)
        if not payload:
            return web.Response(status=reply.status, headers=headers)
        headers["Content-Type"] = reply.content_type
        return web.Response(status=reply.status, body=payload, headers=headers)



def _none_match(header: str | None, etag: str) -> bool:
    """Whether ``If-None-Match`` names the current ``etag``: ``*``, or a list of entity tags
    compared weakly (a ``W/`` prefix ignored), as RFC 9110 §13.1.2 says a GET is compared."""
    if header is None:
        return False
    if header.strip() == "*":
        return True
    bare = etag.removeprefix("W/")
    return any(tag.strip().removeprefix("W/") == bare for tag in header.split(","))
