"""``python -m bot receive EVENT FIXTURE.json``: a fixture signed as GitHub signs it reaches a
running web process and is stored as it is; with ``--local`` it goes straight into intake."""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import redis.asyncio
from aiohttp import web

from bot.github.signature import verify_signature
from bot.observe.metrics import Metrics
from bot.runner.inbound import Inbound
from bot.tools.receive import FixtureError, read_fixture, signed
from bot.web.app import make_app
from questbot_testing import PROJECT
from questbot_testing.fakegithub import FakeGitHub, shared_key_pair
from questbot_testing.fakegithub.webhooks import load_example
from questbot_testing.stack import free_port

SECRET = "receive-test-secret"


@pytest.fixture(scope="module")
def fixture_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A payload GitHub publishes, in a file as GitHub sends it (indented JSON)."""
    path = tmp_path_factory.mktemp("receive") / "issue_comment.created.json"
    payload = load_example("issue_comment", "created.with-installation")
    path.write_text(json.dumps(payload, indent=2) + "\n")
    return path


async def run(*args: str, env: dict[str, str], cwd: Path) -> tuple[int, str, str]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot", "receive", *args, cwd=cwd,
        env={"PATH": os.environ.get("PATH", ""), "PYTHONPATH": str(PROJECT),
             "PYTHONFAULTHANDLER": "1", **env},
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    # one communicate() throughout: a second one would lose what the first had read
    talk = asyncio.ensure_future(proc.communicate())
    done, _pending = await asyncio.wait({talk}, timeout=60)
    if not done:
        import signal
        proc.send_signal(signal.SIGABRT)
        _out, err = await talk
        raise AssertionError(f"receive {args} ran over a minute: {err.decode()[-4000:]}")
    out, err = talk.result()
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


@pytest.fixture
async def web_url(inbound: Inbound, redis_async: redis.asyncio.Redis) -> AsyncIterator[str]:
    port = free_port()
    runner = web.AppRunner(make_app(secret=SECRET, inbound=inbound, redis=redis_async,
                                    metrics=Metrics()))
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    yield f"http://127.0.0.1:{port}/webhook"
    await runner.cleanup()


def test_the_fixture_is_signed_as_github_signs(fixture_file: Path) -> None:
    body = read_fixture(fixture_file)
    delivery = signed("issue_comment", body, SECRET)
    assert delivery.body == fixture_file.read_bytes()
    verify_signature(SECRET, delivery.body, delivery.headers["X-Hub-Signature-256"])
    assert delivery.headers["X-GitHub-Event"] == "issue_comment"
    assert len(delivery.headers["X-GitHub-Delivery"]) == 36
    assert signed("issues", body, SECRET, "given-id").delivery_id == "given-id"


@pytest.mark.parametrize(("content", "problem"), [("{", "is not JSON"), ("[1]", "a JSON list")])
def test_a_fixture_that_is_no_payload(tmp_path: Path, content: str, problem: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(content)
    with pytest.raises(FixtureError, match=problem):
        read_fixture(path)


async def test_to_a_running_web_process(
    fixture_file: Path, web_url: str, inbound: Inbound, tmp_path: Path
) -> None:
    env = {"GITHUB_WEBHOOK_SECRET": SECRET}
    code, out, err = await run("issue_comment", str(fixture_file), "--url", web_url,
                               "--delivery-id", "fixture-1", env=env, cwd=tmp_path)
    assert code == 0, err
    assert f"issue_comment delivery fixture-1 → {web_url}: 202" in out
    assert SECRET not in out + err
    (stored,) = await inbound.read("test", block_ms=None)
    assert (stored.delivery_id, stored.event) == ("fixture-1", "issue_comment")
    assert stored.body == fixture_file.read_bytes()
    code, out, _err = await run("issue_comment", str(fixture_file), "--url", web_url,
                                "--delivery-id", "fixture-1", env=env, cwd=tmp_path)
    assert code == 0 and ": 200" in out and "duplicate" in out  # a redelivery, absorbed


async def test_the_secret_and_port_come_from_dot_env(
    fixture_file: Path, web_url: str, tmp_path: Path
) -> None:
    port = web_url.split(":")[2].split("/")[0]
    (tmp_path / ".env").write_text(f"GITHUB_WEBHOOK_SECRET={SECRET}\nPORT={port}\n")
    code, out, err = await run("issue_comment", str(fixture_file), env={}, cwd=tmp_path)
    assert code == 0, err
    assert f"→ {web_url}: 202" in out


async def test_a_wrong_secret_is_refused_and_says_so(
    fixture_file: Path, web_url: str, tmp_path: Path
) -> None:
    code, out, _err = await run("issue_comment", str(fixture_file), "--url", web_url,
                                env={"GITHUB_WEBHOOK_SECRET": "not-the-secret"}, cwd=tmp_path)
    assert code == 1
    assert ": 401" in out and "bad_signature" in out


async def test_without_a_secret_or_a_server(fixture_file: Path, tmp_path: Path) -> None:
    code, _out, err = await run("issues", str(fixture_file), env={}, cwd=tmp_path)
    assert code == 2 and "GITHUB_WEBHOOK_SECRET is not set" in err
    code, _out, err = await run("issues", str(fixture_file), "--url",
                                f"http://127.0.0.1:{free_port()}/webhook",
                                env={"GITHUB_WEBHOOK_SECRET": SECRET}, cwd=tmp_path)
    assert code == 2 and "could not send" in err and "--local" in err
    code, _out, err = await run("issues", str(tmp_path / "absent.json"),
                                env={"GITHUB_WEBHOOK_SECRET": SECRET}, cwd=tmp_path)
    assert code == 2 and "cannot read" in err


async def test_local_goes_straight_into_intake(
    redis_url: str, redis_async: redis.asyncio.Redis, tmp_path: Path
) -> None:
    """A failing check's delivery, as GitHub would send it, handed to intake with --local: the
    quest it starts is in the journal, and nothing went through the inbound stream."""
    async with FakeGitHub(webhook_secret=SECRET) as fake:
        repo = fake.create_repository("octo-org/received", {"README.md": "hi\n"})
        sha = repo.branch_sha("main")
        assert sha is not None
        await fake.complete_check_run(repo.full_name, sha, "tests", "failure")
        payload = fake.deliveries[-1].delivery.payload
        fixture = tmp_path / "check_run.json"
        fixture.write_text(json.dumps(payload))
        env = {"GITHUB_APP_ID": str(fake.world.app_id), "GITHUB_WEBHOOK_SECRET": SECRET,
               "GITHUB_PRIVATE_KEY": shared_key_pair().private_pem, "REDIS_URL": redis_url,
               "GITHUB_API_URL": fake.url, "QUESTBOT_DURABLE_ACKS": "false"}
        code, out, err = await run("check_run", str(fixture), "--local", env=env, cwd=tmp_path)
        assert code == 0, err
        assert "applied event" in out and "to quest" in out, out
        quests = await redis_async.smembers("repo:{octo-org/received}:quests")
        assert len(quests) == 1
        quest = next(iter(quests)).decode()
        assert f"quest {quest}" in out
        assert await redis_async.xlen("inbound:{inbound}") == 0
        # sent again (a new delivery id): the same red run, so the same quest. GitHub is still
        # up: like the worker, --local first asks it who the App is (GET /app)
        code, again, err = await run("check_run", str(fixture), "--local", env=env, cwd=tmp_path)
        assert code == 0, err
        assert await redis_async.smembers("repo:{octo-org/received}:quests") == quests, again
        assert [c.status for c in fake.calls("apps/get-authenticated")] == [200, 200]
        fake.assert_clean()


async def test_local_when_github_does_not_answer_says_so_in_time(
    fixture_file: Path, redis_url: str, redis_async: redis.asyncio.Redis, tmp_path: Path
) -> None:
    """The worker waits for GitHub for ever; the command gives up after --wait seconds, says
    what it could not learn and exits 2, having handed nothing to intake."""
    fixture = tmp_path / "check_run.json"
    fixture.write_bytes(fixture_file.read_bytes())
    env = {"GITHUB_APP_ID": "4242", "GITHUB_WEBHOOK_SECRET": SECRET,
           "GITHUB_PRIVATE_KEY": shared_key_pair().private_pem, "REDIS_URL": redis_url,
           "GITHUB_API_URL": f"http://127.0.0.1:{free_port()}", "QUESTBOT_DURABLE_ACKS": "false"}
    started = time.monotonic()
    code, out, err = await run("issue_comment", str(fixture), "--local", "--wait", "2",
                               env=env, cwd=tmp_path)
    assert code == 2, (out, err)
    assert time.monotonic() - started < 30
    assert "did not say who the App is within 2 s" in err, err
    assert "could not learn who the App is yet" in err  # the waiting was shown, not silent
    assert out == ""
    assert shared_key_pair().private_pem.splitlines()[1] not in err
    assert [k for k in await redis_async.keys("*") if b"quest" in k] == []
