"""Which delivery failures the worker retries and which it drops (with a log line)."""

from __future__ import annotations

import http

import gidgethub
import redis.exceptions

from bot.github.auth import InstallationTokenError
from bot.github.client import NotInstalled
from bot.journal import PermanentError
from bot.runner.inbound import STREAM
from bot.runner.inbound_consumer import DEAD
from bot.worker.process import permanent
from questbot_testing.scenario import REPO, setup_repository
from questbot_testing.stack import Stack


def test_refusals_are_permanent_and_transient_failures_are_retried() -> None:
    assert permanent(NotInstalled("no installation"))
    assert permanent(InstallationTokenError("gone", installation_id=1, status=404))
    assert permanent(gidgethub.BadRequest(http.HTTPStatus(422)))
    assert permanent(PermanentError("github refused to read pull request #9"))  # the Forge's
    assert not permanent(InstallationTokenError("down", installation_id=1, status=502))
    assert not permanent(gidgethub.GitHubBroken(http.HTTPStatus(502)))
    assert not permanent(redis.exceptions.ConnectionError("redis went away"))
    assert not permanent(ConnectionResetError())


async def test_a_delivery_that_keeps_failing_moves_to_the_dead_letters(stack: Stack) -> None:
    worker = stack.runtime.worker
    worker.max_tries = 3
    worker.claim_idle_ms = 0  # take failed deliveries over at once instead of after a minute

    async def broken(*_args: object) -> None:
        raise RuntimeError("a bug in intake")

    worker.intake.handle = broken  # type: ignore[method-assign,assignment]
    main = await setup_repository(stack)
    await stack.fake.fail_check(REPO, main, name="tests")
    for _ in range(5):
        await worker.inbound_once()
    assert await worker.inbound.backlog() == 0
    assert await worker.inbound.dead_letters() == 1


async def test_an_entry_that_cannot_be_read_back_goes_to_the_dead_letters_at_once(
        stack: Stack) -> None:
    worker = stack.runtime.worker
    await worker.inbound.ensure_group()
    client = worker.inbound.client
    await client.xadd(STREAM, {"d": "d-corrupt", "e": "check_run", "t": 1_700_000_000_000,
                               "lz4": b"not an lz4 block"})
    await client.xadd(STREAM, {"d": "d-empty", "e": "ping", "t": 1_700_000_000_000})
    assert await worker.inbound_once() == 2  # the read itself does not fail
    assert await worker.inbound.backlog() == 0
    dead = await client.xrange(DEAD)
    assert [f[b"d"] for _, f in dead] == [b"d-corrupt", b"d-empty"]
    assert b"not an LZ4 block" in dead[0][1][b"error"]
    assert dead[0][1][b"b"] == b"not an lz4 block"  # what was stored is kept
    assert b"no body" in dead[1][1][b"error"]
