"""Fuzzing the whole intake: damaged deliveries through the web process into the worker.

The parser's fuzzer proves intents are well typed; this one follows them into the worker, on
the end-to-end stack (real web process and worker, real Redis, the strict fake GitHub). Real
examples are aimed at the stack's repository, damaged, signed and sent; then the worker runs
until it is idle. Every stored delivery must be handled or deliberately dropped — none left
pending for a retry, none dead-lettered — and every request the worker made of GitHub must be
one GitHub's REST description allows.
"""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest
from hypothesis import event, given
from hypothesis import strategies as st

from questbot_testing.fakegithub import build_delivery, send
from questbot_testing.fakegithub.webhooks import deep_merge, load_example
from questbot_testing.scenario import REPO, setup_repository
from questbot_testing.stack import SECRET, Stack
from tests.fuzz.budget import fuzz
from tests.fuzz.strategies import EXAMPLES, PRIMED, mutated

RETRIED = "stays pending for a retry"


@st.composite
def aimed(draw: st.DrawFn, stack: Stack, comments: bool) -> tuple[str, dict[str, Any]]:
    """A real example about the stack's repository and installation, then damaged."""
    repo = stack.fake.repo(REPO)
    event, payload = draw(st.sampled_from(
        [(e, p) for e, p in PRIMED + EXAMPLES if (e == "issue_comment") == comments]))
    main = repo.branch_sha(repo.default_branch)
    target = {"repository": stack.fake._webhook_repo(repo),
              "installation": {"id": repo.installation_id}}
    base = json.loads(json.dumps(deep_merge(payload, target)).replace('"master"', '"main"')
                      .replace("refs/heads/master", "refs/heads/main"))
    for about in ("check_run", "check_suite", "workflow_run"):
        if isinstance(base.get(about), dict):
            base[about]["head_sha"] = main
    return event, draw(mutated(base, max_mutations=2)) if draw(st.booleans()) else base


@pytest.fixture
async def ready(stack: Stack) -> Stack:
    await setup_repository(stack)
    return stack


async def deliver_and_settle(stack: Stack, name: str, payload: dict[str, Any],
                             caplog: pytest.LogCaptureFixture, *, fuzzed: bool = True) -> None:
    caplog.clear()
    result = await send(stack.fake.webhook_url or "", build_delivery(name, payload, SECRET))
    assert result.status < 500, result.body
    with caplog.at_level(logging.WARNING):
        await stack.settle()
    retried = [r.getMessage() for r in caplog.records if RETRIED in r.getMessage()]
    assert not retried, retried
    assert await stack.runtime.worker.inbound.backlog() == 0
    assert await stack.runtime.worker.inbound.dead_letters() == 0
    stack.fake.assert_clean()
    if fuzzed:  # hypothesis's statistics exist only inside a hypothesis test
        event(f"{len(await stack.quests(REPO))} quests so far")


@fuzz(20)
@given(data=st.data())
async def test_any_delivery_is_handled_or_dropped_never_retried(
        ready: Stack, data: st.DataObject, caplog: pytest.LogCaptureFixture) -> None:
    await deliver_and_settle(ready, *data.draw(aimed(ready, comments=False)), caplog)


@fuzz(10)
@given(data=st.data())
async def test_any_comment_is_handled_or_dropped_never_retried(
        ready: Stack, data: st.DataObject, caplog: pytest.LogCaptureFixture) -> None:
    await deliver_and_settle(ready, *data.draw(aimed(ready, comments=True)), caplog)


async def test_a_repository_name_of_another_type_is_ignored_not_retried(
        ready: Stack, caplog: pytest.LogCaptureFixture) -> None:
    """Found by a 400-example run of the fuzzer above."""
    repo = ready.fake.repo(REPO)
    payload = deep_merge(load_example("issues", "opened"), {
        "repository": {"full_name": {"": ""}, "default_branch": "main"},
        "installation": {"id": repo.installation_id}})
    await deliver_and_settle(ready, "issues", payload, caplog, fuzzed=False)
