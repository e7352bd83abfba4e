"""The worker knows its App's slug — from GitHub (``GET /app``) — so a check
run of its own that fails is not taken for another App's failing check (an App registered from
the manifest is seldom called ``questbot``: App names are unique on GitHub)."""

from __future__ import annotations

import pytest
import redis.asyncio

from bot.worker.assembly import start_runtime
from questbot_testing.fakegithub import FakeGitHub
from questbot_testing.stack import unpaced

REPO = "octo-org/slugs"


async def test_the_slug_is_asked_of_github_and_its_own_checks_are_not_signals(
    redis_url: str, redis_async: redis.asyncio.Redis
) -> None:
    async with FakeGitHub(app_slug="octo-questbot") as fake:
        repo = fake.create_repository(REPO, {"README.md": "hi\n"})
        runtime = await start_runtime(
            redis_url=redis_url, github_api_url=fake.url, app_id=fake.world.app_id,
            private_key=fake.keys.private_pem, durable=False, limits=unpaced(), )
        try:
            assert runtime.worker.intake.ctx.app.slug == "octo-questbot"
            sha = repo.branch_sha("main") or ""
            await fake.complete_check_run(REPO, sha, "questbot", "failure",
                                          app_slug="octo-questbot")
            ours = fake.deliveries[-1].delivery
            out = await runtime.worker.intake.handle("check_run", ours.payload, ours.id)
            assert out.applied == []
            await fake.complete_check_run(REPO, sha, "tests", "failure", app_slug="ci")
            theirs = fake.deliveries[-1].delivery
            out = await runtime.worker.intake.handle("check_run", theirs.payload, theirs.id)
            assert len(out.applied) == 1
        finally:
            await runtime.close()
        fake.assert_clean()


async def test_a_configured_slug_that_github_contradicts_is_warned_of_not_used(
    redis_url: str, redis_async: redis.asyncio.Redis, caplog: pytest.LogCaptureFixture
) -> None:
    async with FakeGitHub(app_slug="octo-questbot") as fake:
        runtime = await start_runtime(
            redis_url=redis_url, github_api_url=fake.url, app_id=fake.world.app_id,
            private_key=fake.keys.private_pem, durable=False, limits=unpaced(),
            app_slug="given-slug")
        try:
            assert runtime.worker.intake.ctx.app.slug == "octo-questbot"
        finally:
            await runtime.close()
    assert ("GITHUB_APP_SLUG is 'given-slug' but GitHub says this App is 'octo-questbot'"
            in caplog.text)
