"""GitHub App authentication: the App's own JWT, and installation tokens cached until near expiry.

An App proves who it is with a short JWT signed by its private key (RS256), and acts on a
repository with an installation access token that it trades the JWT for
(https://docs.github.com/en/apps/creating-github-apps/authenticating-with-a-github-app).
Installation tokens last an hour; minting one per request would spend a request and add
latency to every effect, so ``InstallationTokens`` keeps each until a margin before it expires
and fetches only one at a time per installation.

The clock is injected (``now``, ``clock``) so tests fix time rather than sleep. Nothing here
logs a token or a key, and ``repr`` of anything holding them shows neither: tracebacks and
debug logs end up in places secrets must not.
"""

from __future__ import annotations

import asyncio
import logging
import weakref
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any, Protocol

import gidgethub
import jwt
from cachetools import TLRUCache
from cryptography.hazmat.primitives.asymmetric.rsa import RSAPrivateKey
from cryptography.hazmat.primitives.serialization import load_pem_private_key
from pydantic import AwareDatetime, BaseModel, ConfigDict, SecretStr, ValidationError

from bot.errors import PermanentError, RetryLater
from bot.github.errors import GitHubAdapterError

log = logging.getLogger(__name__)

JWT_BACKDATE = timedelta(seconds=60)
"""``iat`` is set this far in the past, as GitHub advises, to allow for clock drift."""
JWT_LIFETIME = timedelta(minutes=9)
"""GitHub refuses JWTs that live over 10 minutes; 9 keeps a minute for drift the other way."""
REFRESH_MARGIN = timedelta(minutes=5)
"""A cached installation token is replaced this long before it expires, so a token handed out
is good for at least as long as any one effect takes."""


class AuthError(GitHubAdapterError):
    """The App could not authenticate to GitHub."""


class InstallationTokenError(AuthError, RetryLater):
    """GitHub refused or failed to issue an installation token. Worth a retry unless ``status``
    says the App is not allowed there (401, 403, 404: the worker drops such a delivery)."""

    def __init__(self, message: str, *, installation_id: int, status: int | None) -> None:
        super().__init__(message)
        self.installation_id = installation_id
        self.status = status


class InstallationRefused(InstallationTokenError, PermanentError):
    """GitHub will not issue the installation a token — suspended (403) or uninstalled (404,
    BEHAVIOUR §23): asking again changes nothing until a person acts, so an effect that needs
    one fails for good at once, rather than after every back-off."""


def load_private_key(pem: str | bytes | SecretStr) -> RSAPrivateKey:
    """The App's RSA private key from PEM text; ``AuthError`` says why if it is not one."""
    text = pem.get_secret_value() if isinstance(pem, SecretStr) else pem
    data = text.encode() if isinstance(text, str) else text
    try:
        key = load_pem_private_key(data, password=None)
    except (ValueError, TypeError) as exc:
        # The exception names the format problem, never the key bytes.
        raise AuthError(
            f"the GitHub App private key does not parse as a PEM private key ({exc}); "
            "use the .pem file GitHub generated for the App"
        ) from exc
    if not isinstance(key, RSAPrivateKey):
        raise AuthError(
            f"the GitHub App private key is a {type(key).__name__}, not an RSA key; "
            "GitHub Apps sign with RSA — use the .pem file GitHub generated for the App"
        )
    return key


def app_jwt(
    app_id: str | int, private_key_pem: str | bytes | SecretStr | RSAPrivateKey, now: datetime
) -> str:
    """The App's JWT, valid from a minute before ``now`` to nine minutes after it."""
    if now.tzinfo is None:
        raise ValueError(f"now must be timezone-aware (got naive {now.isoformat()}); pass UTC")
    key = (
        private_key_pem
        if isinstance(private_key_pem, RSAPrivateKey)
        else load_private_key(private_key_pem)
    )
    payload = {
        "iat": int((now - JWT_BACKDATE).timestamp()),
        "exp": int((now + JWT_LIFETIME).timestamp()),
        "iss": str(app_id),
    }
    return jwt.encode(payload, key, algorithm="RS256")


class InstallationToken(BaseModel):
    """GitHub's answer to ``POST /app/installations/{id}/access_tokens``, the parts we use."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    token: SecretStr
    expires_at: AwareDatetime


class TokenRequester(Protocol):
    """The slice of gidgethub's ``GitHubAPI`` the token cache needs (any backend will do)."""

    async def post(self, url: str, *, data: Any, jwt: str | None = None) -> Any: ...


def _utc_now() -> datetime:
    return datetime.now(UTC)


class InstallationTokens:
    """Installation tokens by installation id, reused until ``refresh_margin`` before expiry."""

    def __init__(
        self,
        gh: TokenRequester,
        *,
        app_id: str | int,
        private_key: str | bytes | SecretStr,
        clock: Callable[[], datetime] = _utc_now,
        refresh_margin: timedelta = REFRESH_MARGIN,
        maxsize: int = 1024,
    ) -> None:
        self._gh = gh
        self._app_id = str(app_id)
        self._key = load_private_key(private_key)  # parse once; fail at start, not first use
        self._clock = clock
        self._margin = refresh_margin
        self._cache: TLRUCache[int, InstallationToken] = TLRUCache(
            maxsize=maxsize, ttu=self._use_until, timer=self._timestamp
        )
        self._locks: weakref.WeakValueDictionary[int, asyncio.Lock] = (
            weakref.WeakValueDictionary())
        """One fetch at a time per installation: a lock lives while a caller holds or awaits
        it, and goes with the last one, so a worker that served many installations does not
        keep a lock for each."""

    def __repr__(self) -> str:
        return f"InstallationTokens(app_id={self._app_id!r}, cached={len(self._cache)})"

    def _timestamp(self) -> float:
        return self._clock().timestamp()

    def _use_until(self, _key: int, token: InstallationToken, _now: float) -> float:
        return (token.expires_at - self._margin).timestamp()

    async def token(self, installation_id: int) -> str:
        """A token for the installation, from the cache or fetched; concurrent callers share
        one fetch."""
        cached = self._cache.get(installation_id)
        if cached is not None:
            return cached.token.get_secret_value()
        lock = self._lock(installation_id)
        async with lock:
            cached = self._cache.get(installation_id)
            if cached is None:
                cached = await self._fetch(installation_id)
                self._cache[installation_id] = cached
            return cached.token.get_secret_value()

    def _lock(self, installation_id: int) -> asyncio.Lock:
        lock = self._locks.get(installation_id)
        if lock is None:
            lock = self._locks[installation_id] = asyncio.Lock()
        return lock

    def held(self) -> tuple[int, int]:
        """Tokens and locks held in memory (a test of their bound reads it)."""
        return len(self._cache), len(self._locks)

    def forget(self, installation_id: int) -> None:
        """Drop a cached token, so the next ``token`` call fetches a fresh one."""
        self._cache.pop(installation_id, None)

    async def renew(self, installation_id: int, stale: str) -> str:
        """A token other than ``stale``, which GitHub answered 401 to (revoked, expired
        before its ``expires_at``, the App reinstalled): ``stale`` is dropped and a new one
        fetched — unless another caller already replaced it, whose token is returned, so a
        burst of requests refused at once fetches one token, not one each."""
        lock = self._lock(installation_id)
        async with lock:
            cached = self._cache.get(installation_id)
            if cached is not None and cached.token.get_secret_value() != stale:
                return cached.token.get_secret_value()
            self._cache.pop(installation_id, None)
            fresh = await self._fetch(installation_id)
            self._cache[installation_id] = fresh
            log.info("installation token refused by GitHub; fetched a new one",
                     extra={"installation_id": installation_id})
            return fresh.token.get_secret_value()

    def app_jwt(self) -> str:
        """The App's own JWT, for the few JWT-only endpoints (``GET /app``)."""
        return app_jwt(self._app_id, self._key, self._clock())

    async def _fetch(self, installation_id: int) -> InstallationToken:
        url = f"/app/installations/{int(installation_id)}/access_tokens"
        bearer = app_jwt(self._app_id, self._key, self._clock())
        try:
            answer = await self._gh.post(url, data=b"", jwt=bearer)
        except gidgethub.HTTPException as exc:
            kind = (InstallationRefused if int(exc.status_code) in (403, 404)
                    else InstallationTokenError)
            raise kind(
                _refusal(installation_id, int(exc.status_code)),
                installation_id=installation_id,
                status=int(exc.status_code),
            ) from exc
        try:
            token = InstallationToken.model_validate(answer)
        except ValidationError:
            raise InstallationTokenError(
                f"GitHub's answer to {url} has no usable token and expires_at; this is a "
                "GitHub or proxy fault — retry later",
                installation_id=installation_id,
                status=None,
            ) from None  # the answer may hold a token: keep it out of the traceback
        log.info(
            "installation token fetched",
            extra={"installation_id": installation_id, "expires_at": token.expires_at.isoformat()},
        )
        return token


def _refusal(installation_id: int, status: int) -> str:
    reasons = {
        401: "GitHub did not accept the App's JWT; check that GITHUB_APP_ID and the private "
        "key belong to the same App and that this machine's clock is right",
        403: "the App is not allowed to create tokens for it; check the installation is not "
        "suspended",
        404: "no such installation; the App may have been uninstalled from that account",
    }
    why = reasons.get(status, "retry later; if it persists, check https://www.githubstatus.com")
    return (
        f"could not get an installation token for installation {installation_id}: "
        f"GitHub answered {status}; {why}"
    )
