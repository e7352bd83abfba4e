"""``python -m bot register`` end to end on the fake GitHub: the page posts app.yml as a
manifest, GitHub sends the browser back with a code, the code becomes ``.env`` and a key file
only its owner can read — and those are enough for questbot to talk to GitHub and to check
GitHub's webhooks. A code used or over an hour old is refused with a way to start again."""

from __future__ import annotations

import asyncio
import os
import re
import stat
import sys
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path

import aiohttp
import pytest
import redis.asyncio
import yaml
from aiohttp import web

from bot.github.auth import app_jwt
from bot.github.manifest import api_url_for, exchange, new_app_url
from bot.observe.metrics import Metrics
from bot.register.page import Registrar
from bot.runner.inbound import Inbound
from bot.settings.process import load_config
from bot.web.app import make_app
from questbot_testing import PROJECT
from questbot_testing.fakegithub import FakeGitHub
from questbot_testing.fakegithub.manifests import CODE_LIFETIME_S
from questbot_testing.stack import free_port
from tests.register.flow import WEBHOOK_URL, back, options_for, to_github


@pytest.fixture
async def fake() -> AsyncIterator[FakeGitHub]:
    async with FakeGitHub(webhook_secret="secret-made-by-github") as server:
        yield server
        server.assert_clean()


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


async def test_register_writes_what_questbot_needs(
    fake: FakeGitHub, tmp_path: Path, inbound: Inbound, redis_async: redis.asyncio.Redis
) -> None:
    async with Registrar(options_for(fake, tmp_path)) as registrar, aiohttp.ClientSession() as s:
        walk = await to_github(s, registrar.url)
        assert walk.form_action == f"{fake.url}/settings/apps/new?state={registrar.state}"
        app_yml = yaml.safe_load((PROJECT / "app.yml").read_text())
        assert walk.manifest["default_permissions"] == app_yml["default_permissions"]
        assert walk.manifest["default_events"] == app_yml["default_events"]
        assert walk.manifest["hook_attributes"] == {"url": WEBHOOK_URL, "active": True}
        assert walk.manifest["redirect_url"] == registrar.url + "callback"
        status, page = await back(s, walk.callback)
        assert status == 200, page
        saved = await asyncio.wait_for(registrar.done, 1)
    assert 'id="registered"' in page
    assert saved.install_url in page and str(saved.key_path) in page
    assert fake.manifests.registered == [walk.manifest]
    assert fake.webhook_url == WEBHOOK_URL

    env_file = tmp_path / ".env"
    assert saved.key_path == (tmp_path / "keys" / "questbot.private-key.pem").resolve()
    assert mode(saved.key_path) == 0o600 and mode(env_file) == 0o600
    assert saved.key_path.read_text() == fake.keys.private_pem
    text = env_file.read_text()
    assert fake.keys.private_pem.splitlines()[1] not in text  # the key is in its file only
    assert fake.keys.private_pem.splitlines()[1] not in page

    config = load_config({}, env_file=env_file)
    assert config.github_app_id == str(fake.world.app_id)
    assert config.github_app_slug == "questbot"
    assert config.github_webhook_secret.get_secret_value() == "secret-made-by-github"
    assert config.github_private_key_path == saved.key_path
    assert config.github_api_url == fake.url
    # the saved key signs a JWT GitHub accepts, and the secret checks GitHub's webhooks
    async with aiohttp.ClientSession() as session:
        jwt = app_jwt(config.github_app_id, config.github_private_key, datetime.now(UTC))
        async with session.get(f"{fake.url}/app",
                               headers={"Authorization": f"Bearer {jwt}"}) as app:
            assert app.status == 200
    await _a_webhook_is_accepted(fake, config.github_webhook_secret.get_secret_value(), inbound,
                                 redis_async)


async def _a_webhook_is_accepted(fake: FakeGitHub, secret: str, inbound: Inbound,
                                 client: redis.asyncio.Redis) -> None:
    port = free_port()
    app = make_app(secret=secret, inbound=inbound, redis=client, metrics=Metrics())
    runner = web.AppRunner(app)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    try:
        fake.webhook_url = f"http://127.0.0.1:{port}/webhook"
        repo = fake.create_repository("octo-org/registered")
        await fake.open_issue(repo.full_name, "hello", user="octocat")
        (result,) = fake.deliveries
        assert result.status == 202, result.body
        assert await inbound.backlog() == 1
    finally:
        await runner.cleanup()


async def test_an_expired_code_is_refused_and_register_can_start_again(
    fake: FakeGitHub, tmp_path: Path
) -> None:
    async with Registrar(options_for(fake, tmp_path)) as registrar, aiohttp.ClientSession() as s:
        walk = await to_github(s, registrar.url)
        fake.manifests.age_codes(CODE_LIFETIME_S + 1)  # an hour passed at GitHub's page
        status, page = await back(s, walk.callback)
        assert status == 400
        assert "GitHub did not accept the code" in page
        assert "more than an hour old" in page and "href='/'" in page
        assert not registrar.done.done()
        assert not (tmp_path / ".env").exists() and not (tmp_path / "keys").exists()
        again = await to_github(s, registrar.url)  # "Start again"
        status, page = await back(s, again.callback)
        assert status == 200, page
        assert (await registrar.done).registration.id == fake.world.app_id
    assert (tmp_path / ".env").exists()


async def test_a_code_works_once(fake: FakeGitHub, tmp_path: Path) -> None:
    async with Registrar(options_for(fake, tmp_path)) as registrar, aiohttp.ClientSession() as s:
        walk = await to_github(s, registrar.url)
        code = re.search(r"code=([0-9a-f]+)", walk.callback)[1]  # type: ignore[index]
        await exchange(s, fake.url, code)  # someone was quicker with the code
        status, page = await back(s, walk.callback)
        assert status == 400 and "it has been used already" in page
        assert not (tmp_path / ".env").exists()


async def test_a_callback_with_another_state_is_refused(fake: FakeGitHub, tmp_path: Path) -> None:
    async with Registrar(options_for(fake, tmp_path)) as registrar, aiohttp.ClientSession() as s:
        walk = await to_github(s, registrar.url)
        forged = walk.callback.replace(f"state={registrar.state}", "state=someone-elses")
        status, page = await back(s, forged)
        assert status == 400 and "not made by this registration" in page
        assert not (tmp_path / ".env").exists()
        assert fake.manifests.registered == []  # the code was not even tried
        status, _page = await back(s, walk.callback)
        assert status == 200
        status, page = await back(s, walk.callback)  # finished: nothing waits any more
        assert status == 410


async def test_an_organization_and_a_name(fake: FakeGitHub, tmp_path: Path) -> None:
    options = options_for(fake, tmp_path, org="octo-org", name="Octo Questbot")
    async with Registrar(options) as registrar, aiohttp.ClientSession() as s:
        walk = await to_github(s, registrar.url)
        assert walk.form_action.startswith(f"{fake.url}/organizations/octo-org/settings/apps/new")
        assert walk.manifest["name"] == "Octo Questbot"
        await back(s, walk.callback)
        saved = await registrar.done
    assert saved.registration.slug == "octo-questbot"
    assert saved.registration.owner is not None and saved.registration.owner.login == "octo-org"
    assert "GITHUB_APP_SLUG=octo-questbot" in (tmp_path / ".env").read_text()


async def test_env_keeps_other_lines_and_drops_a_key_given_as_text(
    fake: FakeGitHub, tmp_path: Path
) -> None:
    (tmp_path / ".env").write_text("# mine\nREDIS_URL=redis://cache:6379/2\n"
                                   "GITHUB_PRIVATE_KEY=\"old\"\nGITHUB_APP_ID=1\n")
    async with Registrar(options_for(fake, tmp_path)) as registrar, aiohttp.ClientSession() as s:
        await back(s, (await to_github(s, registrar.url)).callback)
        await registrar.done
    lines = (tmp_path / ".env").read_text().splitlines()
    assert lines[:3] == ["# mine", "REDIS_URL=redis://cache:6379/2",
                         f"GITHUB_APP_ID={fake.world.app_id}"]
    assert not any(line.startswith("GITHUB_PRIVATE_KEY=") for line in lines)
    assert load_config({}, env_file=tmp_path / ".env").redis_url == "redis://cache:6379/2"


def test_where_the_manifest_goes() -> None:
    assert new_app_url("https://github.com", "s t") == (
        "https://github.com/settings/apps/new?state=s+t")
    assert new_app_url("https://ghe.example.com/", "s", org="octo") == (
        "https://ghe.example.com/organizations/octo/settings/apps/new?state=s")
    assert api_url_for("https://github.com") == "https://api.github.com"
    assert api_url_for("https://ghe.example.com") == "https://ghe.example.com/api/v3"


def test_register_options_list_every_problem(tmp_path: Path) -> None:
    from bot.register.options import register_options
    from bot.settings.process.problems import ConfigError

    with pytest.raises(ConfigError) as caught:
        register_options(environ={"GITHUB_URL": "github.com", "GITHUB_API_URL": "https://"},
                         webhook_url="questbot.example.com/webhook", port="99999",
                         org="not an org", env_file=tmp_path / ".env")
    assert [p.split(":", 1)[0] for p in caught.value.problems] == [
        "GITHUB_URL=github.com", "GITHUB_API_URL=https",
        "--webhook-url questbot.example.com/webhook", "--port 99999", "--org not an org"]


async def test_the_command_line(fake: FakeGitHub, tmp_path: Path) -> None:
    """``python -m bot register --no-browser`` prints the page's address, waits for GitHub's
    redirect, saves, says what to do next and exits 0 — with its output a pipe, as under a
    supervisor or ``| tee``, and without ``PYTHONUNBUFFERED``: the address must show while it
    waits."""
    port = free_port()
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(tmp_path), "GITHUB_URL": fake.url,
           "GITHUB_API_URL": fake.url, "PYTHONPATH": str(PROJECT)}  # nothing an earlier test set
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot", "register", "--no-browser", "--port", str(port),
        "--webhook-url", WEBHOOK_URL, "--manifest", str(PROJECT / "app.yml"),
        "--env-file", str(tmp_path / ".env"), "--key-dir", str(tmp_path), cwd=tmp_path, env=env,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT)
    assert proc.stdout is not None
    try:
        first = (await asyncio.wait_for(proc.stdout.readline(), 30)).decode()
        assert f"Open http://127.0.0.1:{port}/ in a browser" in first
        async with aiohttp.ClientSession() as s:
            page = await to_github(s, f"http://127.0.0.1:{port}/")
            status, _page = await back(s, page.callback)
        assert status == 200
        rest = (await asyncio.wait_for(proc.stdout.read(), 30)).decode()
        assert await proc.wait() == 0, rest
    finally:
        if proc.returncode is None:  # a failed test leaves no register process behind
            proc.kill()
            await proc.wait()
    assert "Registered questbot (questbot, App id 4242)" in rest
    assert "installations/new" in rest
    assert mode(tmp_path / "questbot.private-key.pem") == 0o600
