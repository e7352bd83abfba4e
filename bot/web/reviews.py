"""``POST /reviews/{id}/start`` and ``POST /reviews/{id}/submit``: reviews by capability over
HTTP, the capability as the bearer token (``bot.reviews`` holds the logic).

Answers: 200 with the pinned evidence (start) or the routed decision (submit); 401 for a
missing, unknown, replaced or expired capability (checked first, before the body is read for
meaning); 403 for the producer's own session; 409 for a review already submitted, started by
another session, or no longer current; 422 for a body that is not the pydantic model; 503 when
Redis does not answer; 408 for a body that did not arrive within a few seconds
(``bot.web.ingress``). The reviewer's session id is the body's ``session``, or the
``X-Questbot-Session`` header when the body has none.
"""

from __future__ import annotations

import logging
from typing import Any, Final

import orjson
import pydantic
import redis.exceptions
from aiohttp import web

from bot.reviews.capabilities import Unauthorized
from bot.reviews.models import StartBody, SubmitBody
from bot.reviews.service import ReviewRefused, Reviews
from bot.web.ingress import BodyTimedOut, read_body, timed_out

log = logging.getLogger(__name__)

REVIEWS: web.AppKey[Reviews] = web.AppKey("questbot_reviews", Reviews)
SESSION_HEADER: Final = "X-Questbot-Session"
MAX_REVIEW_BODY: Final = 64 * 1024
_JSON: Final = {"Content-Type": "application/json"}


def _answer(status: int, body: dict[str, Any]) -> web.Response:
    return web.Response(status=status, body=orjson.dumps(body), headers=_JSON)


def _bearer(request: web.Request) -> str | None:
    scheme, _, token = request.headers.get("Authorization", "").partition(" ")
    return token.strip() or None if scheme.lower() == "bearer" else None


async def _body(request: web.Request) -> dict[str, Any]:
    if (request.content_length or 0) > MAX_REVIEW_BODY:
        raise ValueError(f"the body is over {MAX_REVIEW_BODY} bytes")
    raw = await read_body(request)
    if len(raw) > MAX_REVIEW_BODY:
        raise ValueError(f"the body is over {MAX_REVIEW_BODY} bytes")
    data = orjson.loads(raw) if raw.strip() else {}
    if not isinstance(data, dict):
        raise ValueError("the body is not a JSON object")
    header = request.headers.get(SESSION_HEADER)
    if header and "session" not in data:
        data["session"] = header
    return data


async def _handle(request: web.Request, submit: bool) -> web.Response:
    reviews = request.app[REVIEWS]
    review_id = request.match_info["review_id"]
    capability = _bearer(request)
    try:
        await reviews.capabilities.verify(review_id, capability)
        data = await _body(request)
        if submit:
            body = SubmitBody.model_validate(data)
            done = await reviews.submit(review_id, capability, body)
            return _answer(200, {"status": "submitted", **done.model_dump(mode="json")})
        start = StartBody.model_validate(data)
        started = await reviews.start(review_id, capability, start.session)
        return _answer(200, {"status": "started", **started.model_dump(mode="json")})
    except BodyTimedOut:
        return await timed_out(request)
    except Unauthorized as exc:
        return _answer(401, {"status": "unauthorized", "detail": str(exc)})
    except pydantic.ValidationError as exc:
        return _answer(422, {"status": "malformed",
                             "detail": exc.errors(include_url=False, include_context=False)})
    except ValueError as exc:  # orjson.JSONDecodeError is one
        return _answer(422, {"status": "malformed", "detail": str(exc)})
    except ReviewRefused as exc:
        return _answer(exc.status, {"status": "refused", "detail": exc.reason})
    except (redis.exceptions.RedisError, OSError) as exc:
        log.error("review %s: redis did not answer: %s", review_id, exc)
        return _answer(503, {"status": "unavailable", "detail": "try again shortly"})


async def start_review(request: web.Request) -> web.Response:
    return await _handle(request, submit=False)


async def submit_review(request: web.Request) -> web.Response:
    return await _handle(request, submit=True)


def add_review_routes(app: web.Application, reviews: Reviews) -> None:
    app[REVIEWS] = reviews
    app.router.add_post("/reviews/{review_id}/start", start_review)
    app.router.add_post("/reviews/{review_id}/submit", submit_review)
