"""Fuzzing the webhook parser: any payload is read into well-typed intents, or into none.

``read_intents`` promises that a field missing, null or of another type means "not for us",
never a crash; the worker would otherwise retry the delivery ten times and dead-letter it.
The explicit examples are the crashes the fuzzer found, kept so they stay fixed.
"""

from __future__ import annotations

from typing import Any

from hypothesis import event, example, given

from bot.adapters import AppIdentity
from bot.intake.routes import Intent, read_intents
from questbot_testing.fakegithub.webhooks import deep_merge, load_example
from tests.fuzz import wellformed
from tests.fuzz.budget import fuzz
from tests.fuzz.strategies import EXAMPLES, PRIMED, deliveries

INTENT_TYPES = Intent.__args__  # type: ignore[attr-defined]


def damaged(event: str, name: str, overrides: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    return event, deep_merge(load_example(event, name), overrides)


FOUND = [
    # gidgethub looks the action up in a dict: an unhashable action raised TypeError
    ("issues", {"action": [], "issue": {"number": 1}}),
    # a repository that is not an object: AttributeError in `_repo`
    damaged("issues", "opened", {"repository": "octo/sample"}),
    # the object an event is about, of another type: AttributeError in each handler
    damaged("check_run", "completed", {"check_run": "completed"}),
    damaged("check_run", "completed", {"check_run": {"check_suite": ["main"],
                                                     "conclusion": "failure"}}),
    damaged("check_run", "requested_action", {"requested_action": "approve"}),
    # a conclusion that is a list, looked up in a set: TypeError (found by a 20,000-example run)
    damaged("check_run", "completed", {"check_run": {"conclusion": ["failure"]}}),
    damaged("check_suite", "completed", {"check_suite": {"conclusion": {}}}),
    damaged("workflow_run", "completed", {"workflow_run": {"conclusion": []}}),
    # numbers that are not numbers: ValueError from int()
    damaged("issue_comment", "created", {"issue": {"number": "seven"},
                                         "comment": {"body": "/approve"}}),
    damaged("check_run", "requested_action", {"check_run": {
        "external_id": "q1", "pull_requests": [{"number": "7"}]}}),
    damaged("check_run", "requested_action", {"check_run": {"external_id": "q1", "id": [1]}}),
    # a head SHA, title or login of another type became an intent of the wrong type
    damaged("check_run", "completed", {"check_run": {"head_sha": 12345}}),
    damaged("issues", "opened", {"issue": {"title": ["a", "list"]}}),
    damaged("installation", "created", {"repositories": [{"full_name": None}]}),
    damaged("push", "with-installation", {"ref": "refs/heads/master", "commits": [
        {"modified": ".github/questbot.yml"}]}),
]


async def check(event: str, payload: dict[str, Any]) -> list[Intent]:
    intents = await read_intents(event, payload, delivery_id="fuzz-1",
                                 app=AppIdentity(id=4242, slug="questbot"))
    assert isinstance(intents, list)
    for intent in intents:
        assert isinstance(intent, INTENT_TYPES), intent
        assert not wellformed.problems(intent), wellformed.problems(intent)
    return intents


def _examples(test: Any) -> Any:
    for found in FOUND:
        test = example(found)(test)
    return test


@fuzz(600)
@given(deliveries())
@_examples
async def test_any_payload_is_read_or_ignored(delivery: tuple[str, dict[str, Any]]) -> None:
    intents = await check(*delivery)
    event(" ".join(sorted({type(intent).__name__ for intent in intents})) or "no intent")


async def test_every_real_example_is_read() -> None:
    read = [len(await check(event, payload)) for event, payload in EXAMPLES + PRIMED]
    assert sum(read) > len(PRIMED)  # the fuzzer starts from deliveries that hold intents
