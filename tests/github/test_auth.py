"""App JWTs and the installation-token cache, against a small GitHub stand-in of our own."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import aiohttp
import jwt
import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from gidgethub.aiohttp import GitHubAPI
from gidgethub.apps import get_jwt
from pydantic import SecretStr

from bot.github.auth import (
    AuthError,
    InstallationToken,
    InstallationTokenError,
    InstallationTokens,
    app_jwt,
    load_private_key,
)

NOW = datetime(2026, 5, 1, 12, 0, tzinfo=UTC)
APP_ID = 4242


def pem(key: rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey) -> str:
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    ).decode()


@pytest.fixture(scope="module")
def rsa_key() -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


@pytest.fixture(scope="module")
def key_pem(rsa_key: rsa.RSAPrivateKey) -> str:
    return pem(rsa_key)


def claims(token: str, key: rsa.RSAPrivateKey) -> dict[str, Any]:
    return jwt.decode(
        token,
        key.public_key(),
        algorithms=["RS256"],
        options={"verify_exp": False, "verify_iat": False},
    )


# --- the App JWT --------------------------------------------------------------------------------


def test_app_jwt_claims(rsa_key: rsa.RSAPrivateKey, key_pem: str) -> None:
    token = app_jwt(APP_ID, key_pem, NOW)
    assert jwt.get_unverified_header(token)["alg"] == "RS256"
    assert claims(token, rsa_key) == {
        "iat": int(NOW.timestamp()) - 60,
        "exp": int(NOW.timestamp()) + 9 * 60,
        "iss": str(APP_ID),
    }


def test_app_jwt_makes_the_claims_gidgethub_makes(rsa_key: rsa.RSAPrivateKey, key_pem: str) -> None:
    """questbot's JWT is the one gidgethub 6's ``get_jwt`` makes at the same moment (``iat`` a
    minute back for clock drift, ten minutes from it to ``exp``), minted from the clock
    questbot is given and the key it parsed once (docs/decisions.md says why not gidgethub's)."""
    before = datetime.now(UTC)
    theirs = claims(get_jwt(app_id=str(APP_ID), private_key=key_pem), rsa_key)
    ours = claims(app_jwt(APP_ID, rsa_key, datetime.now(UTC)), rsa_key)
    assert ours["iss"] == theirs["iss"]
    assert ours["exp"] - ours["iat"] == theirs["exp"] - theirs["iat"]
    assert abs(ours["iat"] - theirs["iat"]) <= 1 + (datetime.now(UTC) - before).total_seconds()


def test_app_jwt_accepts_bytes_secretstr_and_key_objects(
    rsa_key: rsa.RSAPrivateKey, key_pem: str
) -> None:
    for key in (key_pem.encode(), SecretStr(key_pem), rsa_key):
        assert claims(app_jwt("Iv1.abc", key, NOW), rsa_key)["iss"] == "Iv1.abc"


def test_app_jwt_is_refused_by_another_key(key_pem: str) -> None:
    other = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    with pytest.raises(jwt.InvalidSignatureError):
        claims(app_jwt(APP_ID, key_pem, NOW), other)


def test_app_jwt_needs_an_aware_time(key_pem: str) -> None:
    with pytest.raises(ValueError, match="timezone-aware"):
        app_jwt(APP_ID, key_pem, datetime(2026, 5, 1, 12, 0))


def test_a_key_that_is_not_pem_is_refused_without_echoing_it() -> None:
    with pytest.raises(AuthError, match="does not parse as a PEM private key") as caught:
        load_private_key("not-a-key-but-secret-material")
    assert "secret-material" not in str(caught.value)


def test_a_key_that_is_not_rsa_is_refused() -> None:
    with pytest.raises(AuthError, match="not an RSA key"):
        load_private_key(pem(ec.generate_private_key(ec.SECP256R1())))


# --- a stand-in for the one endpoint -------------------------------------------------------------


@dataclass
class FakeTokens:
    """POST /app/installations/{id}/access_tokens, checking the bearer JWT like GitHub."""

    key: rsa.RSAPrivateKey
    clock: Callable[[], datetime]
    lifetime: timedelta = timedelta(hours=1)
    status: int = 201
    answer: dict[str, Any] | None = None
    delay: float = 0.0
    calls: list[int] = field(default_factory=list)

    async def handle(self, request: web.Request) -> web.Response:
        installation = int(request.match_info["installation_id"])
        self.calls.append(installation)
        scheme, _, bearer = request.headers.get("Authorization", "").partition(" ")
        try:
            assert scheme.lower() == "bearer"  # gidgethub writes "bearer"
            assert claims(bearer, self.key)["iss"] == str(APP_ID)
        except (AssertionError, jwt.PyJWTError):
            return web.json_response(
                {"message": "A JSON web token could not be decoded"}, status=401
            )
        if self.delay:
            await asyncio.sleep(self.delay)
        if self.status != 201:
            return web.json_response({"message": "Not Found"}, status=self.status)
        expires = self.clock() + self.lifetime
        body = self.answer or {
            "token": f"ghs_secret{installation}n{len(self.calls)}",
            "expires_at": expires.strftime("%Y-%m-%dT%H:%M:%SZ"),
            "permissions": {"issues": "write"},
            "repository_selection": "all",
        }
        return web.json_response(body, status=201)


class Clock:
    def __init__(self) -> None:
        self.now = NOW

    def __call__(self) -> datetime:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def fake(rsa_key: rsa.RSAPrivateKey, clock: Clock) -> FakeTokens:
    return FakeTokens(key=rsa_key, clock=clock)


@pytest.fixture
async def gh(fake: FakeTokens) -> AsyncIterator[GitHubAPI]:
    app = web.Application()
    app.router.add_post("/app/installations/{installation_id}/access_tokens", fake.handle)
    server = TestServer(app)
    await server.start_server()
    try:
        async with aiohttp.ClientSession() as session:
            yield GitHubAPI(session, "questbot-tests", base_url=str(server.make_url("")))
    finally:
        await server.close()


@pytest.fixture
def tokens(gh: GitHubAPI, key_pem: str, clock: Clock) -> InstallationTokens:
    return InstallationTokens(gh, app_id=APP_ID, private_key=SecretStr(key_pem), clock=clock)


# --- the cache ------------------------------------------------------------------------------------


async def test_fetches_once_and_reuses(tokens: InstallationTokens, fake: FakeTokens) -> None:
    first = await tokens.token(7)
    assert first == "ghs_secret7n1"
    assert await tokens.token(7) == first
    assert fake.calls == [7]


async def test_installations_are_cached_apart(tokens: InstallationTokens, fake: FakeTokens) -> None:
    assert await tokens.token(1) != await tokens.token(2)
    await tokens.token(1)
    assert fake.calls == [1, 2]


async def test_refetches_five_minutes_before_expiry(
    tokens: InstallationTokens, fake: FakeTokens, clock: Clock
) -> None:
    await tokens.token(7)
    clock.now = NOW + timedelta(minutes=54, seconds=59)
    assert await tokens.token(7) == "ghs_secret7n1"
    clock.now = NOW + timedelta(minutes=55)
    assert await tokens.token(7) == "ghs_secret7n2"
    assert fake.calls == [7, 7]


async def test_a_token_already_near_expiry_is_used_but_not_kept(
    tokens: InstallationTokens, fake: FakeTokens
) -> None:
    fake.lifetime = timedelta(minutes=2)
    assert await tokens.token(7) == "ghs_secret7n1"
    assert await tokens.token(7) == "ghs_secret7n2"


async def test_concurrent_callers_share_one_fetch(
    tokens: InstallationTokens, fake: FakeTokens
) -> None:
    fake.delay = 0.05
    got = await asyncio.gather(*(tokens.token(7) for _ in range(10)))
    assert set(got) == {"ghs_secret7n1"}
    assert fake.calls == [7]


async def test_many_installations_leave_their_tokens_bounded_and_no_locks(
    gh: GitHubAPI, key_pem: str, clock: Clock, fake: FakeTokens
) -> None:
    """A worker that served 300 installations keeps at most ``maxsize`` tokens and no lock
    for an installation nobody is fetching for (the soak, ``docs/performance.md``)."""
    tokens = InstallationTokens(gh, app_id=APP_ID, private_key=SecretStr(key_pem), clock=clock,
                                maxsize=50)
    fake.delay = 0.001
    for start in range(0, 300, 30):  # thirty at a time, each with its own lock while fetching
        await asyncio.gather(*(tokens.token(n) for n in range(start, start + 30)))
    assert tokens.held() == (50, 0)
    assert len(fake.calls) == 300


async def test_forget_fetches_a_fresh_token(tokens: InstallationTokens, fake: FakeTokens) -> None:
    await tokens.token(7)
    tokens.forget(7)
    tokens.forget(8)  # forgetting what was never cached is fine
    assert await tokens.token(7) == "ghs_secret7n2"


@pytest.mark.parametrize(
    ("status", "why"),
    [
        (401, "did not accept the App's JWT"),
        (403, "not allowed to create tokens"),
        (404, "may have been uninstalled"),
        (500, "retry later"),
    ],
)
async def test_refusals_say_what_to_do(
    tokens: InstallationTokens, fake: FakeTokens, status: int, why: str
) -> None:
    fake.status = status
    with pytest.raises(InstallationTokenError, match=why) as caught:
        await tokens.token(7)
    assert caught.value.status == status
    assert caught.value.installation_id == 7
    assert f"installation 7: GitHub answered {status}" in str(caught.value)


async def test_a_malformed_answer_is_an_error_that_does_not_quote_it(
    tokens: InstallationTokens, fake: FakeTokens
) -> None:
    fake.answer = {"token": "ghs_leakme", "expires_at": "whenever"}
    with pytest.raises(InstallationTokenError, match="no usable token") as caught:
        await tokens.token(7)
    assert caught.value.__cause__ is None
    assert caught.value.__suppress_context__
    assert "ghs_leakme" not in str(caught.value)


# --- secrets stay secret ------------------------------------------------------------------------


async def test_repr_and_logs_show_no_token_or_key(
    tokens: InstallationTokens, key_pem: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    token = await tokens.token(7)
    key_body = key_pem.splitlines()[1]
    for text in (repr(tokens), str(tokens), caplog.text, repr(tokens._cache)):
        assert token not in text
        assert key_body not in text
    assert repr(tokens) == "InstallationTokens(app_id='4242', cached=1)"


def test_an_installation_token_hides_its_value() -> None:
    token = InstallationToken.model_validate(
        {"token": "ghs_hidden", "expires_at": "2026-05-01T13:00:00Z"}
    )
    assert "ghs_hidden" not in repr(token)
    assert "ghs_hidden" not in str(token)
    assert "ghs_hidden" not in token.model_dump_json()
    assert token.token.get_secret_value() == "ghs_hidden"


def test_a_bad_key_fails_when_the_cache_is_made(gh: GitHubAPI) -> None:
    with pytest.raises(AuthError):
        InstallationTokens(gh, app_id=APP_ID, private_key="nope")


# --- an installation GitHub will not give a token (BEHAVIOUR §23) ---------------------------------


@pytest.mark.parametrize("gone", ["suspended", "uninstalled"])
async def test_a_suspended_or_uninstalled_installation_is_refused_for_good(gone: str) -> None:
    """No back-off changes GitHub's 403 to a suspended installation or its 404 to one that is
    gone: the refusal is a ``PermanentError``, so an effect needing a token fails at once."""
    from bot.errors import PermanentError
    from bot.github.auth import InstallationRefused
    from questbot_testing.fakegithub import FakeGitHub

    async with FakeGitHub() as fake, aiohttp.ClientSession() as session:
        installation = fake.create_repository("octo/app", {"a": "a\n"}).installation_id
        if gone == "suspended":
            await fake.suspend(installation, user="maya")
        else:
            await fake.uninstall(installation, user="maya")
        gh = GitHubAPI(session, "questbot-tests", base_url=fake.url)
        tokens = InstallationTokens(gh, app_id=fake.world.app_id,
                                    private_key=SecretStr(fake.keys.private_pem))
        with pytest.raises(InstallationRefused) as refused:
            await tokens.token(installation)
        assert isinstance(refused.value, PermanentError)
        assert refused.value.status == (403 if gone == "suspended" else 404)
        fake.assert_clean()
