"""The capability store on a real Redis: shown once, stored as a hash, replaced on re-request,
expired after its time, compared in constant time."""

from __future__ import annotations

import hashlib
import itertools

import pytest
import redis.asyncio
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.core.events.decisions import Snapshot
from bot.core.policy import Checkpoint
from bot.journal.keys import reviews_key
from bot.reviews.capabilities import Capabilities, Unauthorized, split_review_id
from bot.reviews.models import PinnedEvidence, PinnedSnapshot, ReviewRecord, ReviewRole

pytestmark = pytest.mark.cluster_too  # its store must work on a Redis Cluster too


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


def record(review_id: str, role: ReviewRole = ReviewRole.DESIGN) -> ReviewRecord:
    pinned = PinnedEvidence(snapshot=PinnedSnapshot(core=Snapshot(revision=1),
                                                    artifacts=(("plan", "ab"),)),
                            artifacts={"plan": "fix"}, context={})
    return ReviewRecord(review_id=review_id, quest_id=split_review_id(review_id)[0],
                        repo="octo/demo", role=role, checkpoint=Checkpoint.B,
                        producer_session="producer", pinned=pinned, requested_at=0.0)


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def caps(redis_async: redis.asyncio.Redis, clock: Clock) -> Capabilities:
    return Capabilities(redis_async, clock=clock)


async def issued(caps: Capabilities, quest_id: str = "q-1",
                 role: ReviewRole = ReviewRole.DESIGN) -> tuple[str, str]:
    review_id = Capabilities.new_review_id(quest_id)
    return review_id, await caps.issue(record(review_id, role))


async def test_the_capability_opens_its_review_and_is_stored_only_as_its_hash(
        caps: Capabilities, redis_async: redis.asyncio.Redis) -> None:
    review_id, capability = await issued(caps)
    assert len(capability) >= 43  # 32 random bytes, urlsafe base64
    assert (await caps.verify(review_id, capability)).review_id == review_id
    stored = await redis_async.hgetall(reviews_key("q-1"))
    everything = b"".join([*stored.keys(), *stored.values()])
    assert capability.encode() not in everything
    assert hashlib.sha256(capability.encode()).hexdigest().encode() in everything


async def test_unknown_wrong_and_missing_capabilities_are_refused(caps: Capabilities) -> None:
    review_id, capability = await issued(caps)
    for presented in (None, "", capability[:-1] + ("A" if capability[-1] != "A" else "B")):
        with pytest.raises(Unauthorized):
            await caps.verify(review_id, presented)
    other = Capabilities.new_review_id("q-1")
    with pytest.raises(Unauthorized):
        await caps.verify(other, capability)  # a capability opens its own review only
    for bad in ("q-1", "q-1.xyz", ".0123456789abcdef", "q-1.0123456789ABCDEF",
                "{q-1}.0123456789abcdef", "q\n1.0123456789abcdef",
                "q" * 201 + ".0123456789abcdef"):
        with pytest.raises(Unauthorized):
            await caps.verify(bad, capability)


async def test_a_capability_expires_after_an_hour(caps: Capabilities, clock: Clock) -> None:
    review_id, capability = await issued(caps)
    clock.now += 3599
    await caps.verify(review_id, capability)
    clock.now += 1
    with pytest.raises(Unauthorized, match="expired"):
        await caps.verify(review_id, capability)
    with pytest.raises(Unauthorized):  # and it stays gone
        await caps.verify(review_id, capability)


async def test_re_requesting_replaces_the_old_capability(caps: Capabilities) -> None:
    first, old = await issued(caps)
    second, new = await issued(caps)
    with pytest.raises(Unauthorized):
        await caps.verify(first, old)
    await caps.verify(second, new)
    assert await caps.active("q-1", ReviewRole.DESIGN) == second
    other, theirs = await issued(caps, role=ReviewRole.HUMAN)  # another role keeps its own
    await caps.verify(second, new)
    await caps.verify(other, theirs)


async def test_one_submission_and_the_first_starter_holds_the_review(caps: Capabilities) -> None:
    review_id, _capability = await issued(caps)
    assert await caps.start(review_id, "reviewer-1") == "reviewer-1"
    assert await caps.start(review_id, "reviewer-2") == "reviewer-1"
    assert await caps.submit(review_id, "reviewer-1")
    assert not await caps.submit(review_id, "reviewer-1")
    assert await caps.submitted_by(review_id) == "reviewer-1"


_runs = itertools.count()


@settings(max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=st.lists(st.sampled_from(["request", "verify-latest", "verify-old", "tick"]),
                    min_size=1, max_size=12))
async def test_only_the_latest_unexpired_capability_of_a_role_opens(
        caps: Capabilities, clock: Clock, ops: list[str]) -> None:
    """A model of the store: the latest request's capability opens until its hour is up;
    every earlier one never opens again."""
    issued_list: list[tuple[str, str, float]] = []
    quest_id = f"p-{next(_runs)}"
    for op in ops:
        if op == "request":
            review_id, cap = await issued(caps, quest_id=quest_id)
            issued_list.append((review_id, cap, clock.now))
        elif op == "tick":
            clock.now += 1500
        elif issued_list:
            index = -1 if op == "verify-latest" else 0
            review_id, cap, at = issued_list[index]
            opens = index == -1 or len(issued_list) == 1
            opens = opens and clock.now < at + 3600
            if opens:
                assert (await caps.verify(review_id, cap)).review_id == review_id
            else:
                with pytest.raises(Unauthorized):
                    await caps.verify(review_id, cap)


@given(review_id=st.text(max_size=300))
def test_any_review_id_is_split_or_refused_as_unauthorized(review_id: str) -> None:
    """An id from a URL never raises anything but ``Unauthorized``, and what it splits into
    can always name a Redis key."""
    try:
        quest_id, _rid = split_review_id(review_id)
    except Unauthorized:
        return
    assert reviews_key(quest_id).startswith("q:{")
