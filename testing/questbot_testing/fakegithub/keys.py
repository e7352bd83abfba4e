"""GitHub App credentials for tests: an RSA key pair, App JWTs, and their verification.

GitHub authenticates an App by an RS256 JWT whose ``iss`` is the App id and which lives at most
ten minutes (https://docs.github.com/en/apps/creating-github-apps/authenticating-with-a-github-app/generating-a-json-web-token-jwt-for-a-github-app).
The fake verifies exactly that, so the bot's own JWT code is exercised against the same rules.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from functools import lru_cache

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

MAX_JWT_LIFETIME = 600


@dataclass(frozen=True)
class KeyPair:
    """PEM-encoded RSA keys: the private half for the bot, the public half for the fake."""

    private_pem: str
    public_pem: str


def generate_key_pair(bits: int = 2048) -> KeyPair:
    """A fresh RSA key pair in PEM (PKCS#8 private key, as GitHub hands out)."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=bits)
    private = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    public = key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    return KeyPair(private.decode(), public.decode())


@lru_cache(maxsize=1)
def shared_key_pair() -> KeyPair:
    """One key pair shared by a whole test session: generating RSA keys costs ~50 ms each."""
    return generate_key_pair()


def app_jwt(
    app_id: int | str, private_pem: str, *, lifetime: int = 540, now: int | None = None
) -> str:
    """An App JWT as a client makes one: backdated 60 s for clock drift, like gidgethub."""
    issued = (int(time.time()) if now is None else now) - 60
    payload = {"iat": issued, "exp": issued + lifetime, "iss": str(app_id)}
    return jwt.encode(payload, private_pem, algorithm="RS256")


class JWTRejected(Exception):
    """The reason an App JWT is not accepted, worded for the 401 body."""


def verify_app_jwt(token: str, *, app_id: int, public_pem: str, leeway: int = 60) -> None:
    """Accept ``token`` as GitHub would for App ``app_id``, or raise :class:`JWTRejected`."""
    try:
        claims = jwt.decode(
            token,
            public_pem,
            algorithms=["RS256"],
            options={"require": ["iat", "exp", "iss"], "verify_iss": False},
            leeway=leeway,
        )
    except jwt.PyJWTError as exc:
        raise JWTRejected(f"a JSON web token could not be decoded: {exc}") from exc
    if str(claims["iss"]) != str(app_id):
        raise JWTRejected(f"'Issuer' claim ('iss') must be {app_id}, not {claims['iss']!r}")
    if int(claims["exp"]) - int(claims["iat"]) > MAX_JWT_LIFETIME:
        raise JWTRejected("'Expiration time' claim ('exp') is too far in the future")
