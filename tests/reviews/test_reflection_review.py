"""The reflection writer and the ``reflection_reviewer`` on the recorded model server (both
protocols), and the record they work from: a reflection written from the bad endings, a
verdict that stands on them, and one whose citations do not hold, which decides nothing."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta

import pytest
import redis.asyncio
from pydantic import SecretStr

from bot.__main__ import main
from bot.agent.model import ModelEndpoint, Wire
from bot.agent.validation import Claim, Evidence
from bot.core import State
from bot.core.events.decisions import Killed
from bot.journal import Journal
from bot.reflection.record import (
    Ending,
    check_claims,
    ending_document,
    parse_ending,
    reasons,
    record_of,
)
from bot.reflection.review import review_reflection, write_reflection
from questbot_testing.modelserver.server import ModelServer, recorded
from tests.core.quests import builder_in
from tests.reviews.stored import QUEST, stored

MODELS = {"openai": "gpt-4.1-mini", "anthropic": "claude-sonnet-4-5"}
AT = datetime(2026, 1, 1, tzinfo=UTC)
RECORD = {"endings/1": "quest q-a ended badly: abandoned\nrecorded: killed by maya: the fix "
                       "guessed at the cause without reading the log",
          "endings/2": "quest q-b ended badly: abandoned\nrecorded: killed by maya: guessed "
                       "again, the log said otherwise"}


@pytest.fixture(params=["openai", "anthropic"])
def protocol(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
async def served(protocol: str) -> AsyncIterator[ModelServer]:
    names = ("reflect-write", "review-reflection-unfounded")
    async with ModelServer(recorded(protocol, *names)) as server:
        yield server


def endpoint(served: ModelServer, protocol: str) -> ModelEndpoint:
    url = f"{served.url}/v1" if protocol == "openai" else served.url
    return ModelEndpoint(wire=Wire(protocol), url=url,
                         api_key=SecretStr("sk-test-not-a-real-key"), model=MODELS[protocol])


async def test_a_reflection_is_written_from_the_record_and_backed_by_it(
        served: ModelServer, protocol: str) -> None:
    written = await write_reflection(endpoint(served, protocol), RECORD, 1, [])
    assert written.reflection is not None and not written.problems
    assert written.reflection.text.startswith("What went wrong: Both quests guessed")
    assert "Research starts from the failing log" in written.reflection.text
    assert written.usage.tokens == 1500 + 160
    request = served.served[0].request
    assert "endings/2" in str(request) and "the log said otherwise" in str(request)
    served.assert_clean()


async def test_a_verdict_citing_what_the_reviewer_was_never_shown_decides_nothing(
        served: ModelServer, protocol: str) -> None:
    reflection = "What changes: Research starts from the failing log."
    reviewed = await review_reflection(endpoint(served, protocol), reflection, RECORD)
    assert reviewed.passed is None  # "pass", but on nothing in the record
    assert any("tests/test_pager.py" in p for p in reviewed.problems)
    assert served.turns_of("review-reflection-unfounded") == [1, 2]  # told, and again
    served.assert_clean()


async def test_an_endpoint_that_is_down_raises_for_a_retry() -> None:
    from bot.agent.model.conversation import ModelUnavailable

    server = await ModelServer([]).start()
    url = server.url
    await server.close()
    # the default four retries, 10 ms apart rather than 2 + 4 + 8 + 16 s
    down = ModelEndpoint(wire=Wire.OPENAI, url=f"{url}/v1", api_key=SecretStr("sk-test"),
                         model="gpt-4.1-mini", retry_wait_seconds=0.01)
    with pytest.raises(ModelUnavailable):
        await review_reflection(down, "What changes: nothing.", RECORD)


def cite(path: str, quote: str) -> Claim:
    return Claim(statement="s", confidence=0.9, evidence=(Evidence(path=path, quote=quote),))


def test_a_verdict_stands_only_on_the_record_and_at_least_one_bad_ending() -> None:
    text = "What changes: read the log."
    assert check_claims([cite("endings/1", "guessed at the cause")], RECORD, text) == (True, [])
    founded, problems = check_claims([cite("reflection", "read the log")], RECORD, text)
    assert not founded and "no claim cites a bad ending" in problems[0]
    founded, problems = check_claims([cite("endings/1", "we never said this")], RECORD, text)
    assert not founded and "does not contain the quoted text" in problems[0]
    assert check_claims([], RECORD, text)[0] is False


def test_the_record_numbers_each_quest_once_oldest_first_from_its_journal() -> None:
    assert parse_ending("q-a:2:1:abandoned", AT.timestamp() * 1000) == Ending(
        "q-a", 2, 1, "abandoned", AT)
    assert parse_ending("nonsense", 0) is None
    b = builder_in(State.HYPOTHESISED)
    kill = b.event("killed", actor="maya", reason="wrong idea")
    assert isinstance(kill, Killed)
    said = reasons([*b.inputs, kill])
    assert said[-1] == "killed by maya: wrong idea"
    quest = b.quest
    assert quest is not None
    later = Ending(quest.id, 1, 1, "abandoned", AT + timedelta(hours=1))
    doc = ending_document(later, quest, said)
    assert doc.startswith(f"quest {quest.id} ended badly: abandoned") and "wrong idea" in doc
    record = record_of([(Ending("q-old", 1, 1, "parked", AT), "old"), (later, doc),
                        (Ending(quest.id, 1, 1, "parked", AT), "earlier")])
    assert record == {"endings/1": "old", "endings/2": doc}


async def test_no_capability_is_issued_for_a_reflection_review(
        redis_url: str, redis_async: redis.asyncio.Redis,
        capsys: pytest.CaptureFixture[str]) -> None:
    """A reflection is a repository's, not a quest's: questbot reviews it itself, and the CLI
    says so rather than pinning a quest's gate."""
    await stored(Journal(redis_async), State.PLANNED)
    code = await asyncio.to_thread(main, ["review", "request", QUEST, "--role",
                                          "reflection_reviewer", "--redis", redis_url])
    assert code == 2
    err = capsys.readouterr().err
    assert "reflection wave, not a quest" in err and "/reflect" in err
