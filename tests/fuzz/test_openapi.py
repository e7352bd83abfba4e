"""questbot's own HTTP endpoints against ``docs/openapi.yaml``, fuzzed by schemathesis.

Both processes are served for real — the web process's app and the worker's metrics app, on
the test Redis — from a thread of this process (``tests.fuzz.live``), and schemathesis sends
what the description allows and what it does not: every answer must be documented (status,
content type, body schema), never a 5xx, and a request the description forbids must be
refused. A valid webhook is one GitHub signed, so where schemathesis generated a well-formed
``X-Hub-Signature-256`` the test replaces it with the real HMAC of the body it sends; a
malformed or missing one stays, and must be answered 401.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

import pytest
import redis.asyncio
import schemathesis
import yaml
from aiohttp import web
from schemathesis.core import NotSet

from bot.github.ratelimit import RateLimits
from bot.github.signature import sign
from bot.journal import Journal
from bot.observe.metrics import Metrics
from bot.runner.inbound import Inbound
from bot.web.app import make_app
from bot.worker.http import make_worker_app
from questbot_testing import PROJECT
from tests.fuzz.budget import fuzz
from tests.fuzz.live import serve

SPEC = PROJECT / "docs" / "openapi.yaml"
SECRET = "questbot-openapi-secret"
SIGNATURE = "X-Hub-Signature-256"

config = schemathesis.Config.from_dict({
    "checks": {"missing_required_header": {"expected-statuses": [400, 401]}},
})
web_api = schemathesis.openapi.from_path(str(SPEC), config=config)
worker_api = schemathesis.openapi.from_path(str(SPEC), config=config).exclude(
    path_regex="^/(webhook$|reviews/)")  # the web process's alone

Closer = Callable[[], Awaitable[None]]


def _web(redis_url: str) -> Callable[[], Awaitable[tuple[web.Application, Closer]]]:
    async def build() -> tuple[web.Application, Closer]:
        client = redis.asyncio.Redis.from_url(redis_url)
        inbound = Inbound(client, durable=True)
        app = make_app(secret=SECRET, inbound=inbound, redis=client, metrics=Metrics(),
                       max_body=64 * 1024)

        async def close() -> None:
            await inbound.close()
            await client.aclose()

        return app, close

    return build


def _worker(redis_url: str) -> Callable[[], Awaitable[tuple[web.Application, Closer]]]:
    async def build() -> tuple[web.Application, Closer]:
        client = redis.asyncio.Redis.from_url(redis_url)
        return make_worker_app(Metrics(), Journal(client), RateLimits()), client.aclose

    return build


@pytest.fixture(scope="module")
def web_url(redis_url: str) -> Iterator[str]:
    with serve(_web(redis_url)) as url:
        yield url


@pytest.fixture(scope="module")
def worker_url(redis_url: str) -> Iterator[str]:
    with serve(_worker(redis_url)) as url:
        yield url


def signed(case: schemathesis.Case) -> dict[str, Any]:
    """The body to send as bytes and, where the generated signature was well formed, GitHub's
    signature of those bytes in its place."""
    if case.path != "/webhook" or isinstance(case.body, NotSet):
        return {}
    body = case.body if isinstance(case.body, bytes) else json.dumps(case.body).encode()
    generated = (case.headers or {}).get(SIGNATURE)
    if not (isinstance(generated, str) and generated.startswith("sha256=")
            and len(generated) == 71):
        return {"data": body}
    return {"data": body, "headers": {SIGNATURE: sign(SECRET, body)}}


@web_api.parametrize()
@fuzz(60)
def test_the_web_process_answers_as_documented(case: schemathesis.Case, web_url: str) -> None:
    response = case.call(base_url=web_url, **signed(case))
    assert response.status_code < 500, response.text
    case.validate_response(response)


@worker_api.parametrize()
@fuzz(20)
def test_the_worker_answers_as_documented(case: schemathesis.Case, worker_url: str) -> None:
    response = case.call(base_url=worker_url)
    assert response.status_code < 500, response.text
    case.validate_response(response)


def _routes(app: web.Application) -> set[tuple[str, str]]:
    return {(route.method, route.resource.canonical) for route in app.router.routes()
            if route.resource is not None and route.method != "HEAD"}


async def test_the_description_lists_exactly_the_routes_each_process_serves(
        redis_async: redis.asyncio.Redis) -> None:
    spec = yaml.safe_load(SPEC.read_text())
    documented: dict[str, set[tuple[str, str]]] = {"web": set(), "worker": set()}
    for path, item in spec["paths"].items():
        for process in item["x-questbot-processes"]:
            documented[process] |= {(method.upper(), path) for method in item
                                    if method in {"get", "post", "put", "patch", "delete"}}
    web_app = make_app(secret=SECRET, inbound=Inbound(redis_async), redis=redis_async,
                       metrics=Metrics())
    worker_app = make_worker_app(Metrics(), Journal(redis_async), RateLimits())
    assert _routes(web_app) == documented["web"]
    assert _routes(worker_app) == documented["worker"]
    assert [server["url"] for server in spec["paths"]["/webhook"]["servers"]] == [
        "http://localhost:8080"]  # only the web process takes deliveries
