"""``POST /reviews/{id}/start`` and ``/submit`` on the real web app, the real journal and a
real Redis: the statuses the seed names (401, 403, 409, 422) and the decisions a review routes."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
import redis.asyncio

from bot.core import Policy, State
from bot.journal import Journal
from bot.reviews.capabilities import Capabilities
from bot.reviews.models import Issued, ReviewRole
from bot.reviews.service import Reviews, producer_session
from tests.core.quests import builder_in
from tests.reviews.stored import ADVISORY, QUEST, SHADOW, stored
from tests.web.conftest import Client, MakeClient

S = State


class Clock:
    now = 2_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def journal(redis_async: redis.asyncio.Redis) -> Journal:
    return Journal(redis_async)


@pytest.fixture
def reviews(journal: Journal, redis_async: redis.asyncio.Redis, clock: Clock) -> Reviews:
    return Reviews(journal, Capabilities(redis_async, clock=clock))


@pytest.fixture
async def http(make_client: MakeClient, reviews: Reviews) -> Client:
    return await make_client(reviews=reviews)


async def post(http: Client, issued: Issued, action: str, body: Any = None, *,
               capability: str | None = None, raw: bytes | None = None) -> tuple[int, Any]:
    token = issued.capability if capability is None else capability
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    data = raw if raw is not None else None
    resp = await http.post(f"/reviews/{issued.review_id}/{action}", headers=headers,
                           json=body if raw is None else None, data=data)
    return resp.status, await resp.json()


async def at_b(journal: Journal, reviews: Reviews, policy: Policy = ADVISORY,
               role: ReviewRole = ReviewRole.DESIGN) -> Issued:
    await stored(journal, S.PLANNED, policy)
    return await reviews.request(QUEST, role)


APPROVE = {"session": "reviewer-7", "verdict": "approve",
           "synopsis": "the reproduction test_pager fails for the stated reason; plan bounded"}


async def test_an_advisory_b_passes_on_a_design_review(http: Client, journal: Journal,
                                                       reviews: Reviews) -> None:
    issued = await at_b(journal, reviews)
    assert "design reviewer" in issued.handoff and "adversarial" in issued.handoff
    status, started = await post(http, issued, "start", {"session": "reviewer-7"})
    assert status == 200
    assert started["evidence"]["artifacts"] == {"reproduction": "test_pager",
                                                "plan": "fix the bound"}
    assert "criterion" in started["handoff"]
    status, done = await post(http, issued, "submit", APPROVE)
    assert (status, done["state"], done["counted"]) == (200, "patching", True)
    decided = [e for e in await journal.events(QUEST) if e.type == "checkpoint_decided"][-1]
    assert decided.actor == "review:design_reviewer" and decided.automatic
    assert decided.reason == APPROVE["synopsis"]


async def test_already_submitted_is_409(http: Client, journal: Journal,
                                        reviews: Reviews) -> None:
    issued = await at_b(journal, reviews)
    await post(http, issued, "start", {"session": "reviewer-7"})
    assert (await post(http, issued, "submit", APPROVE))[0] == 200
    status, body = await post(http, issued, "submit", APPROVE)
    assert status == 409 and "submitted already" in body["detail"]
    assert (await post(http, issued, "start", {"session": "reviewer-7"}))[0] == 409


async def test_a_stale_review_is_409_and_changes_nothing(http: Client, journal: Journal,
                                                         reviews: Reviews) -> None:
    issued = await at_b(journal, reviews)
    await post(http, issued, "start", {"session": "reviewer-7"})
    b = builder_in(S.PLANNED, ADVISORY)  # a person revises B, the agent plans again
    revise = b.event("checkpoint_decided", checkpoint="B", verdict="revise", actor="alice",
                     reason="bound the scope")
    b.apply(revise)
    replan = b.event("plan_written", summary="a narrower plan")
    b.apply(replan)
    for event in (revise, replan):
        await journal.apply(event, ADVISORY)
    before = len(await journal.events(QUEST))
    status, body = await post(http, issued, "submit", APPROVE)
    assert status == 409 and "changed since it was pinned" in body["detail"]
    assert len(await journal.events(QUEST)) == before
    _v, quest = await journal.snapshot(QUEST)
    assert quest is not None and quest.state is S.PLANNED


async def test_unknown_wrong_and_expired_capabilities_are_401(http: Client, journal: Journal,
                                                               reviews: Reviews,
                                                               clock: Clock) -> None:
    issued = await at_b(journal, reviews)
    assert (await post(http, issued, "start", {"session": "r"}, capability=""))[0] == 401
    assert (await post(http, issued, "start", {"session": "r"}, capability="nope"))[0] == 401
    unknown = issued.model_copy(update={"review_id": "q-1.0000000000000000"})
    assert (await post(http, unknown, "start", {"session": "r"}))[0] == 401
    clock.now += 3600
    status, body = await post(http, issued, "start", {"session": "r"})
    assert status == 401 and "expired" in body["detail"]


async def test_re_requesting_makes_the_old_capability_401(http: Client, journal: Journal,
                                                          reviews: Reviews) -> None:
    old = await at_b(journal, reviews)
    new = await reviews.request(QUEST, ReviewRole.DESIGN)
    assert (await post(http, old, "start", {"session": "r"}))[0] == 401
    assert (await post(http, new, "start", {"session": "r"}))[0] == 200


async def test_the_producers_own_session_is_403(http: Client, journal: Journal,
                                                reviews: Reviews) -> None:
    issued = await at_b(journal, reviews)
    producer = producer_session(QUEST)
    status, _ = await post(http, issued, "start", {"session": producer})
    assert status == 403
    resp = await http.post(f"/reviews/{issued.review_id}/start",  # the header says it too
                           headers={"Authorization": f"Bearer {issued.capability}",
                                    "X-Questbot-Session": producer})
    assert resp.status == 403
    assert (await post(http, issued, "submit", {**APPROVE, "session": producer}))[0] == 403


async def test_another_session_than_the_starter_is_409(http: Client, journal: Journal,
                                                       reviews: Reviews) -> None:
    issued = await at_b(journal, reviews)
    assert (await post(http, issued, "submit", APPROVE))[0] == 409  # not started
    await post(http, issued, "start", {"session": "reviewer-1"})
    assert (await post(http, issued, "start", {"session": "reviewer-2"}))[0] == 409
    assert (await post(http, issued, "submit", APPROVE))[0] == 409


@pytest.mark.parametrize("body", [
    {"session": "r", "verdict": "maybe", "synopsis": "x"},
    {"session": "r", "verdict": "approve"},
    {"session": "r", "verdict": "approve", "synopsis": ""},
    {"session": "", "verdict": "approve", "synopsis": "x"},
    {"session": "r", "verdict": "approve", "synopsis": "x", "extra": 1},
    ["not", "an", "object"],
])
async def test_a_malformed_submission_is_422(http: Client, journal: Journal, reviews: Reviews,
                                             body: Any) -> None:
    issued = await at_b(journal, reviews)
    await post(http, issued, "start", {"session": "r"})
    assert (await post(http, issued, "submit", body))[0] == 422
    assert (await post(http, issued, "submit", raw=b"{not json"))[0] == 422
    huge = {**APPROVE, "session": "r", "synopsis": "x" * 70_000}
    assert (await post(http, issued, "submit", huge))[0] == 422


async def test_shadow_mode_records_a_review_and_never_advances(http: Client, journal: Journal,
                                                               reviews: Reviews) -> None:
    issued = await at_b(journal, reviews, SHADOW)
    await post(http, issued, "start", {"session": "reviewer-7"})
    status, done = await post(http, issued, "submit", APPROVE)
    assert (status, done["state"], done["counted"]) == (200, "planned", False)
    _v, quest = await journal.snapshot(QUEST)
    assert quest is not None and quest.recorded_only_decisions == 1


async def test_a_blocking_gate_waits_for_a_person_and_a_human_review_is_one(
        http: Client, journal: Journal, reviews: Reviews) -> None:
    blocking = Policy()
    issued = await at_b(journal, reviews, blocking)
    await post(http, issued, "start", {"session": "reviewer-7"})
    assert (await post(http, issued, "submit", APPROVE))[1]["state"] == "planned"
    human = await reviews.request(QUEST, ReviewRole.HUMAN)
    await post(http, human, "start", {"session": "alice-laptop"})
    status, done = await post(http, human, "submit", {**APPROVE, "session": "alice-laptop"})
    assert status == 200, done
    assert (status, done["state"], done["automatic"]) == (200, "patching", False)


async def test_a_role_only_reviews_its_gate(journal: Journal, reviews: Reviews) -> None:
    await stored(journal, S.PLANNED)
    with pytest.raises(Exception, match="checkpoint C"):
        await reviews.request(QUEST, ReviewRole.EXPERIMENT)


async def test_two_submissions_at_once_route_one_decision(http: Client, journal: Journal,
                                                          reviews: Reviews) -> None:
    issued = await at_b(journal, reviews, SHADOW)  # shadow: both could be recorded
    await post(http, issued, "start", {"session": "reviewer-7"})
    answers = await asyncio.gather(*(post(http, issued, "submit", APPROVE) for _ in range(5)))
    assert sorted(status for status, _ in answers) == [200, 409, 409, 409, 409]
    by_review = [e for e in await journal.events(QUEST) if e.actor == "review:design_reviewer"]
    assert len(by_review) == 1
